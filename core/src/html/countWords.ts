import type { ElementContent, RootContent } from "hast"
import { articleSchema } from "./articleSchema.ts"
import { parseHtmlFragment, TOO_DEEP } from "./parseHtmlFragment.ts"
import { makeWordCounter } from "./words.ts"

const dropped: ReadonlySet<string> = new Set(articleSchema.strip ?? [])

/**
 * `word_count` of a body: the words of its text (tags, comments and attribute values excluded,
 * character references decoded), split on Unicode whitespace. Text is the concatenation of the
 * text nodes, so `a<b>b</b>` is one word. Content the sanitiser drops (`script`, `style`, ...)
 * is not text. A stored (sanitised) body gives the same count as `applyEditPolicy` did.
 */
export const countWords = (html: string): number => {
  const words = makeWordCounter()
  const root = parseHtmlFragment(html)
  if (root === TOO_DEEP) {
    // Thousands of levels deep: never a stored body; counted from a crude tag strip.
    words.add(html.replace(/<[^>]*>/g, ""))
    return words.count()
  }
  const stack: Array<RootContent | ElementContent> = []
  for (let i = root.children.length - 1; i >= 0; i--) stack.push(root.children[i]!)
  while (stack.length > 0) {
    const node = stack.pop()!
    if (node.type === "text") words.add(node.value)
    else if (node.type === "element" && !dropped.has(node.tagName)) {
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!)
    }
  }
  return words.count()
}
