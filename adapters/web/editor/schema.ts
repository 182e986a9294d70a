/**
 * The editor's document schema: one node or mark type per element the article sanitiser keeps,
 * each carrying the element's own attributes in their original order, so that a body the editor
 * loads serialises back to the same HTML. Two node types have no element of their own: `plain`
 * (inline content that sits directly in a flow container, like the text of `<li>A</li>`) and the
 * locked protected elements (`protected_inline`, `protected_block`), kept as their exact HTML.
 */
import { type DOMOutputSpec, type Mark, type MarkSpec, type Node as PMNode, type NodeSpec, Schema } from "prosemirror-model"

/** An element's attributes as `[name, value]` pairs, in document order. */
export type HtmlAttrs = ReadonlyArray<readonly [string, string]>

/** Tags of elements that are blocks to the editor (everything else the sanitiser keeps is inline). */
export const BLOCK_TAGS: ReadonlySet<string> = new Set([
  "p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "hr",
  "blockquote", "div", "section", "article", "aside", "header", "footer", "figure", "figcaption", "details", "summary",
  "ul", "ol", "li", "dl", "dt", "dd",
  "table", "caption", "thead", "tbody", "tfoot", "tr", "td", "th",
])

/** Text blocks: their content is inline. */
export const TEXTBLOCK_TAGS: ReadonlyArray<string> = ["p", "h1", "h2", "h3", "h4", "h5", "h6", "pre"]

/** Flow containers: their content is blocks (and `plain` runs of inline content). */
export const FLOW_TAGS: ReadonlyArray<string> = [
  "blockquote", "div", "section", "article", "aside", "header", "footer", "figure", "figcaption", "details", "summary",
  "li", "dl", "dt", "dd", "td", "th", "caption",
]

/** Inline elements become marks, outermost first when several wrap the same text. */
export const MARK_TAGS: ReadonlyArray<string> = [
  "a", "strong", "b", "em", "i", "u", "s", "del", "ins", "mark", "small", "sub", "sup", "abbr", "cite", "q", "time", "span", "code", "kbd", "samp",
]

/**
 * Attributes the page's own DOM must not get from article content: ids and ARIA would clash with
 * the page, and classes would take the page's own styles (`visually-hidden` hides text from the
 * person editing, `notice` or `pm-protected` dresses it as the service's). Inline styles and event
 * handlers (pasted from a word processor or a web page) are refused by the page's CSP, each a
 * console error, and the sanitiser removes them on saving anyway. The view carries them as
 * `data-html-<name>`.
 */
export const VIEW_ONLY_DROP = /^(id|role|aria-.*|class|style|on.*)$/

const attrObject = (attrs: HtmlAttrs, view: boolean): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [name, value] of attrs) {
    if (view && VIEW_ONLY_DROP.test(name)) out[`data-html-${name}`] = value
    else out[name] = value
  }
  return out
}

/** Serialisation mode: `true` while building the editor's own view, `false` for the saved HTML. */
let forView = true

/** Runs `fn` with node specs producing the saved HTML (with markers that `toHtml` resolves). */
export const serialising = <T>(fn: () => T): T => {
  forView = false
  try {
    return fn()
  } finally {
    forView = true
  }
}

const wsMarkers = (node: PMNode): Record<string, string> => {
  const out: Record<string, string> = {}
  if (node.attrs["wsBefore"]) out["data-cs-wsb"] = node.attrs["wsBefore"] as string
  if (node.attrs["wsAfter"]) out["data-cs-wsa"] = node.attrs["wsAfter"] as string
  return out
}

const element = (tag: string, node: PMNode, hole: boolean): DOMOutputSpec => {
  const attrs = { ...attrObject(node.attrs["html"] as HtmlAttrs, forView), ...(forView ? {} : wsMarkers(node)) }
  return hole ? [tag, attrs, 0] : [tag, attrs]
}

// (an element copied from the editor's own view carries its view-only attributes as `data-html-<name>`)
const readAttrs = (dom: HTMLElement): HtmlAttrs =>
  Array.from(dom.attributes)
    .filter((a) => a.name !== "data-service-protected" && !a.name.startsWith("data-cs-") && !a.name.startsWith("data-pm-"))
    .map((a) => {
      const name = a.name.startsWith("data-html-") ? a.name.slice("data-html-".length) : a.name
      return [VIEW_ONLY_DROP.test(name) ? name : a.name, a.value] as const
    })

const blockAttrs = { html: { default: [] }, wsBefore: { default: "" }, wsAfter: { default: "" } }

/** A protected element's HTML as a live element (parsed in an inert document, never run). */
export const protectedElement = (html: string): HTMLElement => {
  const holder = inert().createElement("div")
  holder.innerHTML = html
  const el = holder.firstElementChild as HTMLElement | null
  return el ?? inert().createElement("span")
}

let inertDoc: Document | null = null
/** A document without a browsing context: parsing HTML there loads nothing and runs nothing. */
export const inert = (): Document => (inertDoc ??= document.implementation.createHTMLDocument(""))

const protectedSpec = (inline: boolean): NodeSpec => ({
  group: inline ? "inline" : "block",
  inline,
  atom: true,
  selectable: true,
  draggable: true,
  attrs: inline ? { html: { default: "" } } : { html: { default: "" }, wsBefore: { default: "" }, wsAfter: { default: "" } },
  toDOM: (node) => {
    const el = protectedElement(node.attrs["html"] as string)
    const dom = document.importNode(el, true)
    if (!forView) {
      for (const [k, v] of Object.entries(wsMarkers(node))) dom.setAttribute(k, v)
    }
    return dom
  },
  parseDOM: [
    {
      tag: inline ? MARK_TAGS.map((t) => `${t}[data-service-protected]`).join(",") : [...BLOCK_TAGS].map((t) => `${t}[data-service-protected]`).join(","),
      priority: 100,
      getAttrs: (dom) => {
        // Not ProseMirror's slice marker, which a pasted element carries when it was the first one copied.
        const el = (dom as HTMLElement).cloneNode(true) as HTMLElement
        el.removeAttribute("data-pm-slice")
        return { html: el.outerHTML }
      },
    },
  ],
})

const nodes: Record<string, NodeSpec> = {
  doc: { content: "block*" },
  // First textblock: the one new blocks default to.
  p: { group: "block", content: "inline*", attrs: blockAttrs, toDOM: (n) => element("p", n, true), parseDOM: [{ tag: "p", getAttrs: (d) => ({ html: readAttrs(d as HTMLElement) }) }] },
  plain: {
    group: "block",
    content: "inline*",
    attrs: blockAttrs,
    toDOM: () => (forView ? ["div", { class: "pm-plain" }, 0] : ["cs-plain", 0]),
    parseDOM: [{ tag: "cs-plain" }],
  },
}
for (const tag of ["h1", "h2", "h3", "h4", "h5", "h6"]) {
  nodes[tag] = { group: "block", content: "inline*", defining: true, attrs: blockAttrs, toDOM: (n) => element(tag, n, true), parseDOM: [{ tag, getAttrs: (d) => ({ html: readAttrs(d as HTMLElement) }) }] }
}
nodes["pre"] = {
  group: "block",
  content: "inline*",
  code: true,
  defining: true,
  whitespace: "pre",
  attrs: blockAttrs,
  toDOM: (n) => element("pre", n, true),
  parseDOM: [{ tag: "pre", preserveWhitespace: "full", getAttrs: (d) => ({ html: readAttrs(d as HTMLElement) }) }],
}
nodes["hr"] = { group: "block", attrs: blockAttrs, toDOM: (n) => element("hr", n, false), parseDOM: [{ tag: "hr", getAttrs: (d) => ({ html: readAttrs(d as HTMLElement) }) }] }
nodes["protected_block"] = protectedSpec(false)
const containerContent: Record<string, string> = { ul: "li*", ol: "li*", table: "table_part*", thead: "tr*", tbody: "tr*", tfoot: "tr*", tr: "cell*" }
const containerGroup: Record<string, string> = { caption: "block table_part", thead: "table_part", tbody: "table_part", tfoot: "table_part", tr: "table_part", td: "cell", th: "cell" }
for (const tag of [...FLOW_TAGS, "ul", "ol", "table", "thead", "tbody", "tfoot", "tr"]) {
  nodes[tag] = {
    group: containerGroup[tag] ?? "block",
    content: containerContent[tag] ?? "block*",
    defining: tag === "li" || tag === "td" || tag === "th" || tag === "blockquote",
    isolating: tag === "td" || tag === "th",
    attrs: blockAttrs,
    toDOM: (n) => element(tag, n, true),
    parseDOM: [{ tag, getAttrs: (d) => ({ html: readAttrs(d as HTMLElement) }) }],
  }
}
nodes["text"] = { group: "inline" }
nodes["img"] = {
  group: "inline",
  inline: true,
  draggable: true,
  attrs: { html: { default: [] } },
  toDOM: (n) => element("img", n, false),
  parseDOM: [{ tag: "img[src]", getAttrs: (d) => ({ html: readAttrs(d as HTMLElement) }) }],
}
nodes["br"] = { group: "inline", inline: true, selectable: false, attrs: { html: { default: [] } }, toDOM: (n) => element("br", n, false), parseDOM: [{ tag: "br", getAttrs: (d) => ({ html: readAttrs(d as HTMLElement) }) }] }
nodes["protected_inline"] = protectedSpec(true)

const marks: Record<string, MarkSpec> = {}
for (const tag of MARK_TAGS) {
  marks[tag] = {
    attrs: { html: { default: [] } },
    // Identical marks merge; the same element with other attributes nests (e.g. two spans).
    excludes: tag === "a" ? "a" : "",
    inclusive: tag !== "a",
    code: tag === "code" || tag === "kbd" || tag === "samp",
    toDOM: (m: Mark) => [tag, attrObject(m.attrs["html"] as HtmlAttrs, forView), 0],
    parseDOM: [{ tag, getAttrs: (d) => ({ html: readAttrs(d as HTMLElement) }) }],
  } as MarkSpec
}
// What a pasted document calls bold or italic by style only is not kept: styles are not allowed.

/** The article schema. */
export const schema = new Schema({ nodes, marks })

/** The value of one HTML attribute of a node or mark, if present. */
export const htmlAttr = (attrs: HtmlAttrs, name: string): string | null => attrs.find(([n]) => n === name)?.[1] ?? null
