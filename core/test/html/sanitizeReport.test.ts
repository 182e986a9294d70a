/** The sanitiser's report names each removed attribute as HTML spells it, whatever hast calls it. */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { MAX_REPORTED_KINDS, sanitizeArticleHtml } from "../../src/html/index.ts"

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

describe("sanitizeArticleHtml: the report's size", () => {
  it("should name at most MAX_REPORTED_KINDS kinds, the most frequent, and sum the rest in one last entry, whatever the body holds", () => {
    // 20 000 distinct attributes (and a few frequent kinds): the report was one entry each, 929 KB kept with an idempotency key
    const attributes = Array.from({ length: 20_000 }, (_, i) => ` data-x${i}="1"`).join("")
    const input = `<p${attributes}>a</p>${"<font>f</font>".repeat(5)}${"<p onclick=\"x\">o</p>".repeat(3)}`
    const { report } = result(input)
    expect(report.removed).toHaveLength(MAX_REPORTED_KINDS)
    expect(report.removed.slice(0, -1).map((r) => r.what)).toEqual(expect.arrayContaining(["font", "onclick attribute"]))
    expect(report.removed.find((r) => r.what === "font")?.count).toBe(5)
    const last = report.removed.at(-1)!
    expect(last.what).toBe(`${20_000 + 2 - (MAX_REPORTED_KINDS - 1)} other kinds of markup`)
    expect(report.removed.reduce((sum, r) => sum + r.count, 0)).toBe(20_000 + 5 + 3)
    expect(JSON.stringify(report).length).toBeLessThan(4096)
  })

  it("should cut a kind's name at 100 characters", () => {
    const name = `data-${"y".repeat(5_000)}`
    const { report } = result(`<p ${name}="1">a</p>`)
    expect(report.removed).toEqual([{ what: `${`${name} attribute`.slice(0, 99)}…`, count: 1 }])
  })
})
