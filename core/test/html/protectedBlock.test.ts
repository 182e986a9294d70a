/** One protected block read from an element: its canonical form, type, first href and text. */
import type { Element, ElementContent } from "hast"
import { describe, expect, it } from "vitest"
import { toProtectedBlock } from "../../src/html/protectedBlock.ts"

const element = (tagName: string, properties: Element["properties"], children: Array<ElementContent> = []): Element => ({ type: "element", tagName, properties, children })
const text = (value: string): ElementContent => ({ type: "text", value })

describe("toProtectedBlock", () => {
  it("should read the element's own href, its tag, its type and its text with whitespace collapsed and trimmed", () => {
    const block = toProtectedBlock(element("a", { href: "https://x.test/", dataServiceProtected: "backlink" }, [text(" \n\tpartner \f\r offer  ")]))
    expect(block).toEqual({
      canonical: '<a data-service-protected="backlink" href="https://x.test/"> partner offer </a>',
      tag: "a",
      type: "backlink",
      href: "https://x.test/",
      text: "partner offer",
      hidden: false,
    })
    expect(toProtectedBlock(element("a", { href: "/x", dataServiceProtected: "internal" }, [text("x")]), true).hidden).toBe(true)
  })

  it("should take the first href inside the element, in document order, when it has none of its own", () => {
    const block = toProtectedBlock(
      element("p", { dataServiceProtected: "internal" }, [
        text("see "),
        element("span", {}, [element("a", { href: "/first" }, [text("one")])]),
        element("a", { href: "/second" }, [text("two")]),
      ]),
    )
    expect([block.href, block.text]).toEqual(["/first", "see onetwo"])
    expect(toProtectedBlock(element("p", { dataServiceProtected: "internal" }, [text("no link")])).href).toBeNull()
  })

  it("should read a type given as a list, a bare attribute, a number or nothing", () => {
    const typeOf = (value: Element["properties"][string]) => toProtectedBlock(element("span", { dataServiceProtected: value }, [text("x")])).type
    expect([typeOf(["backlink", "paid"]), typeOf(true), typeOf(7), typeOf(null), typeOf(undefined)]).toEqual(["backlink paid", "", "7", "", ""])
  })
})
