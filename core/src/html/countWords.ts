import type { ElementContent, RootContent } from "hast"
import { articleSchema } from "./articleSchema.ts"
import { parseHtmlFragment, TOO_DEEP, TOO_LARGE } from "./parseHtmlFragment.ts"
import { makeWordCounter, WORD_BOUNDARY_ELEMENTS } from "./words.ts"

const dropped: ReadonlySet<string> = new Set(articleSchema.strip ?? [])

/**
 * `"word count"` of a body: the words of its text (tags, comments and attribute values excluded,
 * character references decoded), split on Unicode whitespace. Inline markup joins text
 * (`a<b>b</b>` is one word); block elements separate it as a reader sees the page
 * (`<p>a</p><p>b</p>` is two; see `WORD_BOUNDARY_ELEMENTS`). Content the sanitiser drops
 * (`script`, `style`, ...) is not text. A stored (sanitised) body gives the same count as `applyEditPolicy` did.
 */
export const countWords = (html: string): number => {
  const words = makeWordCounter()
  const root = parseHtmlFragment(html)
  if (root === TOO_DEEP || root === TOO_LARGE) {
    // Thousands of levels deep or past the parse budget: never a stored body; counted from a crude tag strip.
    words.add(html.replace(/<[^>]*>/g, ""))
    return words.count()
  }
  const stack: Array<RootContent | ElementContent | "boundary"> = []
  for (let i = root.children.length - 1; i >= 0; i--) stack.push(root.children[i]!)
  while (stack.length > 0) {
    const node = stack.pop()!
    if (node === "boundary") words.boundary()
    else if (node.type === "text") words.add(node.value)
    else if (node.type === "element" && !dropped.has(node.tagName)) {
      const block = WORD_BOUNDARY_ELEMENTS.has(node.tagName)
      if (block) {
        words.boundary()
        stack.push("boundary")
      }
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!)
    }
  }
  return words.count()
}
