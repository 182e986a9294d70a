import type { Root } from "hast"
import { fromHtml } from "hast-util-from-html"

/** Marks input too deeply nested for the parser's tree conversion. */
export const TOO_DEEP = "too-deep" as const

/**
 * Parses an HTML fragment in body context (spec-compliant, parse5 through hast-util-from-html).
 *
 * parse5 itself builds the tree without recursion, but hast-util-from-parse5 converts it to hast
 * recursively and overflows the stack at a depth of one to a few thousand elements. That is far
 * beyond `MAX_NESTING_DEPTH`, so such an overflow is reported as `TOO_DEEP` here and refused by
 * every caller; any input that does parse has its depth measured exactly, without recursion,
 * before anything recursive touches it.
 */
export const parseHtmlFragment = (html: string): Root | typeof TOO_DEEP => {
  try {
    return fromHtml(html, { fragment: true })
  } catch (error) {
    if (error instanceof RangeError) return TOO_DEEP
    throw error
  }
}
