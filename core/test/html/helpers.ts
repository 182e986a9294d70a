import type { Element, Nodes } from "hast"
import { fromHtml } from "hast-util-from-html"
import { Effect } from "effect"
import { sanitizeArticleHtml } from "../../src/html/index.ts"

/** Sanitises and returns the stored HTML, throwing when the sanitiser refuses. */
export const clean = (input: string): string => Effect.runSync(sanitizeArticleHtml(input)).html

/** Runs an effect and returns its failure's `_tag`, or "success". */
export const failureTag = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>): string =>
  Effect.runSync(Effect.match(effect, { onFailure: (error) => error._tag, onSuccess: () => "success" }))

/** Runs an effect expected to fail and returns its error. */
export const failureOf = <A, E>(effect: Effect.Effect<A, E>): E => Effect.runSync(Effect.flip(effect))

/** Every element of `html` parsed as a fragment (body context) by a spec-compliant parser. */
export const elementsOf = (html: string): Array<Element> => {
  const out: Array<Element> = []
  const stack: Array<Nodes> = [fromHtml(html, { fragment: true })]
  while (stack.length > 0) {
    const node = stack.pop()!
    if (node.type === "element") {
      out.push(node)
      if (node.content !== undefined) stack.push(node.content)
    }
    if (node.type === "element" || node.type === "root") stack.push(...node.children)
  }
  return out
}

const forbiddenElements = new Set([
  "script", "iframe", "frame", "object", "embed", "applet", "base", "meta", "link", "form", "style",
  "svg", "math", "template", "noscript",
])
const urlProperties = ["href", "src", "action", "formAction", "xLinkHref", "poster", "background", "cite"]

/** The corpora README's requirements 2-4 on re-parsed output: the list of broken ones (empty if none). */
export const unsafeParts = (html: string): Array<string> => {
  const problems: Array<string> = []
  for (const element of elementsOf(html)) {
    if (forbiddenElements.has(element.tagName)) problems.push(`element ${element.tagName}`)
    for (const [key, value] of Object.entries(element.properties)) {
      const lower = key.toLowerCase()
      if (lower.startsWith("on") || lower === "style" || lower === "srcdoc") problems.push(`attribute ${key}`)
      if (urlProperties.includes(key)) {
        const url = String(value).replace(/[\u0000-\u0020\u007f]/g, "")
        const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)
        if (scheme !== null && !["http", "https", "mailto", "tel"].includes(scheme[1]!.toLowerCase())) {
          problems.push(`${key}=${url}`)
        }
      }
    }
  }
  return problems
}
