/** The sanitiser's report names each removed attribute as HTML spells it, whatever hast calls it. */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { sanitizeArticleHtml } from "../../src/html/index.ts"

const result = (input: string) => Effect.runSync(sanitizeArticleHtml(input))

describe("sanitizeArticleHtml: the report's names", () => {
  const cases: ReadonlyArray<readonly [string, string, ReadonlyArray<{ what: string; count: number }>]> = [
    ['<p data-foo-bar="1" data-x="2">a</p>', "<p>a</p>", [{ what: "data-foo-bar attribute", count: 1 }, { what: "data-x attribute", count: 1 }]],
    ['<p accept-charset="x" http-equiv="y" for="z">b</p>', "<p>b</p>", [{ what: "accept-charset attribute", count: 1 }, { what: "for attribute", count: 1 }, { what: "http-equiv attribute", count: 1 }]],
    ['<p aria-foo="x" aria-hidden="true">a</p>', '<p aria-hidden="true">a</p>', [{ what: "aria-foo attribute", count: 1 }]],
    ['<p aria-checked="true" aria-valuenow="1">a</p>', "<p>a</p>", [{ what: "aria-checked attribute", count: 1 }, { what: "aria-valuenow attribute", count: 1 }]],
    ['<p xml:lang="en" xmlns:foo="x">a</p>', "<p>a</p>", [{ what: "xml:lang attribute", count: 1 }, { what: "xmlns:foo attribute", count: 1 }]],
    ['<p ONCLICK="x" title="t">a</p>', '<p title="t">a</p>', [{ what: "onclick attribute", count: 1 }]],
    ['<p data="x" datafoo="y">z</p>', "<p>z</p>", [{ what: "data attribute", count: 1 }, { what: "datafoo attribute", count: 1 }]],
    ['<p hidden contenteditable="true" tabindex="1">b</p>', "<p>b</p>", [{ what: "contenteditable attribute", count: 1 }, { what: "hidden attribute", count: 1 }, { what: "tabindex attribute", count: 1 }]],
    ["<label>a</label><font>b</font><font>c</font>", "abc", [{ what: "font", count: 2 }, { what: "label", count: 1 }]],
  ]
  for (const [input, html, removed] of cases) {
    it(`should report ${removed.map((r) => r.what).join(", ")} for ${input}`, () => {
      expect(result(input)).toStrictEqual({ html, report: { changed: true, removed } })
    })
  }

  it("should keep attributes whose values the schema allows, of every kind, and report nothing", () => {
    for (const kept of [
      '<ol start="3" reversed=""><li value="2">x</li></ol>',
      '<img src="a.png" width="10" height="x" loading="lazy">',
      '<p class="a b" data-service-protected="internal">x</p>',
      '<table><caption data-service-protected="x">c</caption><tbody><tr><td colspan="2" rowspan="3">x</td></tr></tbody></table>',
      '<details open=""><summary>s</summary>t</details>',
    ]) {
      expect(result(kept)).toStrictEqual({ html: kept, report: { changed: false, removed: [] } })
    }
  })
})
