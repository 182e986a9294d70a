/**
 * The sanitiser's own rules, each alone: the audit's reading of the schema (the same decisions
 * hast-util-sanitize makes, so the report can say what was removed), the count that stops a small
 * round before it writes, and the rounds' bounds of a small analysis. The analysis tests hold them
 * through whole bodies; these pin each rule's edges, which whole bodies of this schema cannot all
 * reach (the schema has no `data*` rule, no value list that is not a pattern).
 */
import type { Root } from "hast"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { analyzeArticleHtml } from "../../src/html/index.ts"
import { analyzeHtml, attributeName, elementKept, findDefinition, NOT_SMALL, valueAllowed, writesMoreThan } from "../../src/html/sanitizeArticleHtml.ts"

describe("the audit's reading of the schema", () => {
  it("should find an attribute's own definition first, else a data-* default for data attributes only", () => {
    const title = ["title", /^x/] as [string, RegExp]
    const dataDefault = ["data*", /^y/] as [string, RegExp]
    expect(findDefinition([dataDefault, title], "title")).toBe(title)
    expect(findDefinition(["id", dataDefault], "dataFoo")).toBe(dataDefault)
    expect(findDefinition(["id", dataDefault], "DATAFoo")).toBe(dataDefault)
    // "data" itself (four characters) and names that only contain it are not data attributes
    expect(findDefinition(["id", dataDefault], "data")).toBeUndefined()
    expect(findDefinition(["id", dataDefault], "xdataFoo")).toBeUndefined()
    expect(findDefinition(["id", dataDefault], "title")).toBeUndefined()
    // without a data* rule a data attribute has no definition
    expect(findDefinition(["id", "title"], "dataFoo")).toBeUndefined()
    expect(findDefinition(undefined, "dataFoo")).toBeUndefined()
  })

  it("should allow a value by its definition: a bare name any value, else one of the listed values or patterns", () => {
    expect(valueAllowed(undefined, "x")).toBe(false)
    expect(valueAllowed("title", "anything")).toBe(true)
    expect(valueAllowed(["title"], "anything")).toBe(true)
    expect(valueAllowed(["title"], ["a", "list"])).toBe(true)
    expect(valueAllowed(["title"], null)).toBe(false)
    expect(valueAllowed(["title"], { an: "object" })).toBe(false)
    expect(valueAllowed(["title", /^ok/], "ok go")).toBe(true)
    expect(valueAllowed(["title", /^ok/], "not ok")).toBe(false)
    expect(valueAllowed(["dir", "ltr", "rtl"], "rtl")).toBe(true)
    expect(valueAllowed(["dir", "ltr", "rtl"], "auto")).toBe(false)
    expect(valueAllowed(["span", 2], 2)).toBe(true)
    expect(valueAllowed(["span", 2], 3)).toBe(false)
  })

  it("should keep only schema elements, and those with ancestors only inside one of them", () => {
    expect(elementKept("p", [])).toBe(true)
    expect(elementKept("script", [])).toBe(false)
    expect(elementKept("", [])).toBe(false)
    expect(elementKept("*", [])).toBe(false)
    expect(elementKept("td", ["div"])).toBe(false)
    expect(elementKept("td", ["tr", "tbody", "table", "div"])).toBe(true)
  })

  it("should name attributes as HTML writes them", () => {
    expect(attributeName("className")).toBe("class")
    expect(attributeName("htmlFor")).toBe("for")
    expect(attributeName("dataServiceProtected")).toBe("data-service-protected")
    expect(attributeName("ariaLabel")).toBe("aria-label")
    expect(attributeName("xmlLang")).toBe("xml:lang")
    // a prefix only at the start: a name that merely contains one is lowercased whole
    expect(attributeName("foodataBar")).toBe("foodatabar")
    expect(attributeName("onClick")).toBe("onclick")
  })

  it("should report an element removed for want of its ancestors", () => {
    const analyzed = Effect.runSync(analyzeArticleHtml("<td>x</td>"))
    expect(analyzed.html).toBe("x")
    expect(analyzed.report.removed).toEqual([{ what: "td", count: 1 }])
  })
})

describe("writesMoreThan: what a tree writes at least, counted", () => {
  const tree = {
    type: "root",
    children: [
      { type: "text", value: "abc" },
      { type: "comment", value: "not written" },
      {
        type: "element",
        tagName: "td",
        // a number and a boolean are written as their attribute's presence or digits: not counted
        properties: { colSpan: 2, hidden: true, title: "abcdef", className: ["ab", "cd"], rel: [], headers: ["h"] },
        children: [{ type: "text", value: "wxyz" }],
      },
    ],
  } as unknown as Root
  // 3 (text) + 6 (title) + 2 + 1 + 2 (a list of two, one separator) + 0 (an empty list) + 1 (a list of one) + 4 (text)
  const written = 3 + 6 + 5 + 0 + 1 + 4

  it("should count text and string and list values exactly, and stop past the limit only", () => {
    expect(writesMoreThan(tree, written)).toBe(false)
    expect(writesMoreThan(tree, written - 1)).toBe(true)
    expect(writesMoreThan({ type: "root", children: [] }, 0)).toBe(false)
  })
})

describe("a small analysis' rounds", () => {
  const within = { chars: 4096, nodes: 2048 }

  it("should hold the first round's writing to twice the bound, not the bound", () => {
    // 395 characters whose bold title is reopened in each of 21 paragraphs: 6 320 characters of
    // attributes and text, more than the bound and less than twice it
    const body = `<p><b title="${"t".repeat(300)}">${"<p>x".repeat(20)}`
    const small = analyzeHtml(body, { within })
    expect(small).not.toBe(NOT_SMALL)
    expect(JSON.stringify(small)).toBe(JSON.stringify(analyzeHtml(body)))
  })

  it("should end a small analysis whose later round's input passes twice the bound", () => {
    // 4 006 characters; the bold reopened in each paragraph writes 15 000 for the second round
    const body = `<p><b>${"<p>x".repeat(1000)}`
    expect(analyzeHtml(body, { within: { chars: 4096, nodes: 1_000_000 } })).toBe(NOT_SMALL)
    expect(typeof analyzeHtml(body)).toBe("object")
  })

  it("should end a small analysis whose text-only fallback passes twice the bound", () => {
    // escaped, 2 048 "<" write four characters each: 10 240, past 8 192
    const body = "< ".repeat(2048)
    expect(analyzeHtml(body, { within: { chars: 4096, nodes: 1_000_000 }, maxRounds: 1 })).toBe(NOT_SMALL)
  })

  it("should keep markup that one round leaves unchanged, even when one round is all it may run", () => {
    const analyzed = analyzeHtml("<p>x</p>", { maxRounds: 1 })
    expect(JSON.stringify(analyzed)).toBe(JSON.stringify(analyzeHtml("<p>x</p>")))
    expect((analyzed as { html: string }).html).toBe("<p>x</p>")
  })
})
