import type { Root } from "hast"
import { fromParse5 } from "hast-util-from-parse5"
import { defaultTreeAdapter, parseFragment, type DefaultTreeAdapterMap, type TreeAdapter } from "parse5"
import { MAX_NESTING_DEPTH } from "./articleSchema.ts"

/** Marks input too deeply nested for the parser's tree conversion. */
export const TOO_DEEP = "too-deep" as const

/** Marks input whose parse would build more than `MAX_PARSED_NODES` elements and attributes. */
export const TOO_LARGE = "too-large" as const

/**
 * The most elements and attributes (counted together) one parse may build. A 20 KB article
 * builds about 500, so 1 MiB written like one about 26 000; dense markup (table rows of short
 * cells, pasted spans) up to about 100 000. Past the budget the parser is building what the input
 * does not spell out: it reopens every formatting element left open (`<b>`, `<i>`, `<font>`, ...)
 * in each new paragraph, and with distinct attributes the list of elements it reopens has no
 * bound, so a few hundred kilobytes could otherwise build gigabytes of tree. Bounding the parse
 * bounds everything after it (tree conversion, sanitising, serialising), to about what 1 MiB of
 * ordinary article costs.
 */
export const MAX_PARSED_NODES = 2 ** 17

/**
 * The parse budget for a body already in stored (sanitised, serialised) form, which may predate
 * today's limits. Such HTML re-parses to exactly the tree it was written from (that is what the
 * sanitiser's rounds settle on): nothing is reopened, so every element and attribute is spelled
 * out in the text and its count is below the text's length. The budget grows with the text, so
 * the work stays linear in it.
 */
export const storedFormBudget = (html: string): number => Math.max(MAX_PARSED_NODES, html.length)

/**
 * Open elements past which the parse stops as `TOO_DEEP`. The parser's stack of open elements
 * holds the ancestors of where it inserts, plus at most the table parts whose content it moves
 * out (foster parenting), so a stack this deep means a tree deeper than `MAX_NESTING_DEPTH`,
 * which every caller refuses: found here, before the rest of the input is parsed.
 */
const MAX_OPEN_ELEMENTS = 2 * MAX_NESTING_DEPTH + 8

const overBudget = new Error("parse budget exceeded")
const tooDeep = new Error("parse too deep")

/** parse5's own tree adapter, counting what it builds and stopping the parse past the bounds. */
const budgetedAdapter = (budget: number): TreeAdapter<DefaultTreeAdapterMap> => {
  let left = budget
  let open = 0
  return {
    ...defaultTreeAdapter,
    onItemPush: () => {
      if (++open > MAX_OPEN_ELEMENTS) throw tooDeep
    },
    onItemPop: () => {
      open--
    },
    createElement: (tagName, namespaceURI, attrs) => {
      left -= 1 + attrs.length
      if (left < 0) throw overBudget
      return defaultTreeAdapter.createElement(tagName, namespaceURI, attrs)
    },
    adoptAttributes: (recipient, attrs) => {
      // `<html>`/`<body>` tags merge their attributes into the existing element: counted too.
      left -= attrs.length
      if (left < 0) throw overBudget
      defaultTreeAdapter.adoptAttributes(recipient, attrs)
    },
  }
}

/**
 * Parses an HTML fragment in body context (spec-compliant: parse5, the parser under rehype-parse
 * and hast-util-from-html, converted to hast by hast-util-from-parse5). This is what
 * `fromHtml(html, { fragment: true })` does, without source positions: hast-util-from-html always
 * asks parse5 for them and turns them into a `position` on every node, which costs about a third
 * of the parse, and nothing here reads them.
 *
 * The parse is bounded: past `MAX_PARSED_NODES` elements and attributes it stops and answers
 * `TOO_LARGE`, and past twice `MAX_NESTING_DEPTH` open elements `TOO_DEEP`, so no input costs
 * more than about what 1 MiB of ordinary article costs.
 *
 * parse5 itself builds the tree without recursion, but hast-util-from-parse5 converts it to hast
 * recursively and overflows the stack at a depth of one to a few thousand elements. That is far
 * beyond `MAX_NESTING_DEPTH`, so such an overflow is reported as `TOO_DEEP` here and refused by
 * every caller; any input that does parse has its depth measured exactly, without recursion,
 * before anything recursive touches it.
 */
export const parseHtmlFragment = (html: string, budget: number = MAX_PARSED_NODES): Root | typeof TOO_DEEP | typeof TOO_LARGE => {
  let fragment: DefaultTreeAdapterMap["documentFragment"]
  try {
    fragment = parseFragment(html, { scriptingEnabled: false, treeAdapter: budgetedAdapter(budget) })
  } catch (error) {
    if (error === overBudget) return TOO_LARGE
    if (error === tooDeep) return TOO_DEEP
    throw error
  }
  try {
    return fromParse5(fragment) as Root
  } catch (error) {
    if (error instanceof RangeError) return TOO_DEEP
    throw error
  }
}
