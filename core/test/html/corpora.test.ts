import { fromHtml } from "hast-util-from-html"
import { describe, expect, it } from "vitest"
import { parseHtmlFragment, TOO_DEEP } from "../../src/html/parseHtmlFragment.ts"
import dompurify from "../fixtures/corpora/dompurify-expect.json" with { type: "json" }
import html5lib from "../fixtures/corpora/html5lib-tree-construction-inputs.json" with { type: "json" }
import owasp from "../fixtures/corpora/owasp-xss-filter-evasion.json" with { type: "json" }
import { clean, unsafeParts } from "./helpers.ts"

const corpora: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["dompurify-expect", dompurify.map((entry) => entry.payload)],
  ["owasp-xss-filter-evasion", owasp.map((entry) => entry.payload)],
  ["html5lib-tree-construction-inputs", html5lib.map((entry) => entry.data)],
]

describe("sanitizeArticleHtml on the third-party corpora", () => {
  for (const [name, inputs] of corpora) {
    describe(name, () => {
      it("should sanitise every input without refusing it (requirement 1)", () => {
        let sanitised = 0
        for (const input of inputs) {
          clean(input)
          sanitised++
        }
        expect(sanitised).toBe(inputs.length)
      })

      it("should leave no forbidden element, event handler, style, srcdoc or unsafe URL in the re-parsed output (requirements 2-4)", () => {
        const failures: Array<string> = []
        for (const input of inputs) {
          const problems = unsafeParts(clean(input))
          if (problems.length > 0) failures.push(`${JSON.stringify(input)}: ${problems.join(", ")}`)
        }
        expect(failures).toEqual([])
      })

      it("should be idempotent on every input (requirement 5)", () => {
        const failures: Array<string> = []
        for (const input of inputs) {
          const once = clean(input)
          if (clean(once) !== once) failures.push(JSON.stringify(input))
        }
        expect(failures).toEqual([])
      })
    })
  }
})

describe("parseHtmlFragment on the third-party corpora", () => {
  /** A hast tree without its `position`s, which parseHtmlFragment does not make. */
  const withoutPositions = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(withoutPositions)
      : typeof value === "object" && value !== null
        ? Object.fromEntries(Object.entries(value).filter(([k]) => k !== "position").map(([k, v]) => [k, withoutPositions(v)]))
        : value

  it("should build the very tree hast-util-from-html builds, but for source positions", () => {
    const differing: Array<string> = []
    for (const [, inputs] of corpora) {
      for (const input of inputs) {
        const ours = parseHtmlFragment(input)
        if (ours === TOO_DEEP) continue
        if (JSON.stringify(ours) !== JSON.stringify(withoutPositions(fromHtml(input, { fragment: true })))) differing.push(JSON.stringify(input))
      }
    }
    expect(differing).toEqual([])
    expect(JSON.stringify(parseHtmlFragment("<p>a</p>"))).not.toContain("position")
  })
})
