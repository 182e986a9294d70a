import type { Element, ElementContent } from "hast"
import { serializeNodes } from "./serializeHtml.ts"

/** One canonical protected block of a (sanitised, stored) body. */
export interface ProtectedBlock {
  /** The element in canonical form: attributes sorted by name, whitespace runs in text collapsed. */
  readonly canonical: string
  /** The element's tag name. */
  readonly tag: string
  /** The value of its `data-service-protected` attribute (`backlink`, `internal`, ...). */
  readonly type: string
  /** The element's own `href`, else the first `href` inside it, else null. */
  readonly href: string | null
  /** The element's text, whitespace collapsed and trimmed. */
  readonly text: string
  /**
   * An ancestor hides or strikes it: `del`, `s`, `[hidden]`, `[aria-hidden="true"]`, or a
   * `details` outside that details' summary. Not part of `canonical` (the block is the same).
   */
  readonly hidden: boolean
}

const firstHref = (element: Element): string | null => {
  const stack: Array<ElementContent> = [element]
  while (stack.length > 0) {
    const node = stack.pop()!
    if (node.type !== "element") continue
    const href = node.properties["href"]
    if (typeof href === "string") return href
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!)
  }
  return null
}

const protectedType = (value: unknown): string =>
  Array.isArray(value) ? value.join(" ") : value === true ? "" : typeof value === "string" || typeof value === "number" ? String(value) : ""

/** The canonical protected block of an element of a sanitised tree, hidden or not by its ancestors. */
export const toProtectedBlock = (element: Element, hidden = false): ProtectedBlock => {
  let text = ""
  const { html } = serializeNodes([element], {
    canonical: true,
    onText: (value) => {
      text += value
    },
  })
  return {
    canonical: html,
    tag: element.tagName,
    type: protectedType(element.properties["dataServiceProtected"]),
    href: firstHref(element),
    text: text.replace(/[\t\n\f\r ]+/g, " ").trim(),
    hidden,
  }
}
