import type { Root } from "hast"
import { fromParse5 } from "hast-util-from-parse5"
import { parseFragment } from "parse5"

/** Marks input too deeply nested for the parser's tree conversion. */
export const TOO_DEEP = "too-deep" as const

/**
 * Parses an HTML fragment in body context (spec-compliant: parse5, the parser under rehype-parse
 * and hast-util-from-html, converted to hast by hast-util-from-parse5). This is what
 * `fromHtml(html, { fragment: true })` does, without source positions: hast-util-from-html always
 * asks parse5 for them and turns them into a `position` on every node, which costs about a third
 * of the parse, and nothing here reads them.
 *
 * parse5 itself builds the tree without recursion, but hast-util-from-parse5 converts it to hast
 * recursively and overflows the stack at a depth of one to a few thousand elements. That is far
 * beyond `MAX_NESTING_DEPTH`, so such an overflow is reported as `TOO_DEEP` here and refused by
 * every caller; any input that does parse has its depth measured exactly, without recursion,
 * before anything recursive touches it.
 */
export const parseHtmlFragment = (html: string): Root | typeof TOO_DEEP => {
  try {
    return fromParse5(parseFragment(html, { scriptingEnabled: false })) as Root
  } catch (error) {
    if (error instanceof RangeError) return TOO_DEEP
    throw error
  }
}
