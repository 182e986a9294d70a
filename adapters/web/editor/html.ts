/**
 * Article HTML to editor document and back, exactly. `loadBody` builds the document node by node
 * (not with ProseMirror's forgiving clipboard parser, which repairs what it does not expect);
 * `toHtml` serialises it; `roundTrips` says whether a body survives the trip unchanged, judged on
 * the trees the HTML parser makes of both strings, which is what the server compares after it
 * parses and sanitises a saved body.
 */
import { DOMSerializer, type Mark, type Node as PMNode } from "prosemirror-model"
import { BLOCK_TAGS, type HtmlAttrs, inert, MARK_TAGS, schema, serialising, TEXTBLOCK_TAGS } from "./schema.ts"

/** Thrown when a body holds markup the editor cannot keep exactly. */
export class Unrepresentable extends Error {}

const attrsOf = (el: Element): HtmlAttrs => Array.from(el.attributes).map((a) => [a.name, a.value] as const)

const isProtected = (n: Node): boolean => n.nodeType === 1 && (n as Element).hasAttribute("data-service-protected")
const tagOf = (n: Node): string => (n.nodeType === 1 ? (n as Element).localName : "")
const isBlock = (n: Node): boolean => n.nodeType === 1 && BLOCK_TAGS.has(tagOf(n))
const isWhitespaceText = (n: Node): boolean => n.nodeType === 3 && /^[\t\n\f\r ]*$/.test(n.nodeValue ?? "")

const inlineNodes = (nodes: ReadonlyArray<Node>, marks: ReadonlyArray<Mark>, out: Array<PMNode>): void => {
  for (const n of nodes) {
    if (n.nodeType === 3) {
      const text = n.nodeValue ?? ""
      if (text !== "") out.push(schema.text(text, marks))
      continue
    }
    if (n.nodeType !== 1) throw new Unrepresentable(`a ${n.nodeName} node`)
    const el = n as Element
    const tag = el.localName
    if (BLOCK_TAGS.has(tag)) throw new Unrepresentable(`a <${tag}> inside text`)
    if (isProtected(el)) {
      out.push(schema.nodes["protected_inline"]!.create({ html: el.outerHTML }, null, marks))
    } else if (tag === "img" || tag === "br") {
      out.push(schema.nodes[tag]!.create({ html: attrsOf(el) }, null, marks))
    } else if (MARK_TAGS.includes(tag)) {
      if (el.childNodes.length === 0) throw new Unrepresentable(`an empty <${tag}>`)
      const mark = schema.marks[tag]!.create({ html: attrsOf(el) })
      if (mark.isInSet(marks)) throw new Unrepresentable(`a <${tag}> inside the same <${tag}>`)
      inlineNodes(Array.from(el.childNodes), mark.addToSet(marks), out)
    } else {
      throw new Unrepresentable(`a <${tag}>`)
    }
  }
}

const blockOf = (el: Element): PMNode => {
  const tag = el.localName
  if (isProtected(el)) return schema.nodes["protected_block"]!.create({ html: el.outerHTML })
  const type = schema.nodes[tag]
  if (type === undefined) throw new Unrepresentable(`a <${tag}>`)
  const html = attrsOf(el)
  if (tag === "hr") return type.create({ html })
  if (TEXTBLOCK_TAGS.includes(tag)) {
    const content: Array<PMNode> = []
    inlineNodes(Array.from(el.childNodes), [], content)
    return type.createChecked({ html }, content)
  }
  return type.createChecked({ html }, blockContent(Array.from(el.childNodes)))
}

/**
 * A flow container's children as blocks: block elements as they are, each run of inline content
 * as a `plain` block, and whitespace between blocks kept on the block before (or after) it.
 */
const blockContent = (children: ReadonlyArray<Node>): Array<PMNode> => {
  const out: Array<{ node: PMNode; before: string; after: string }> = []
  let run: Array<Node> = []
  let pendingWs = ""
  const flush = () => {
    if (run.length === 0) return
    if (run.every(isWhitespaceText) && children.some(isBlock)) {
      const ws = run.map((n) => n.nodeValue).join("")
      const last = out[out.length - 1]
      if (last !== undefined) last.after += ws
      else pendingWs += ws
    } else {
      const content: Array<PMNode> = []
      inlineNodes(run, [], content)
      out.push({ node: schema.nodes["plain"]!.createChecked(null, content), before: pendingWs, after: "" })
      pendingWs = ""
    }
    run = []
  }
  for (const child of children) {
    if (child.nodeType === 8) throw new Unrepresentable("a comment")
    if (isBlock(child)) {
      flush()
      out.push({ node: blockOf(child as Element), before: pendingWs, after: "" })
      pendingWs = ""
    } else {
      run.push(child)
    }
  }
  flush()
  return out.map(({ node, before, after }) =>
    before === "" && after === "" ? node : node.type.create({ ...node.attrs, wsBefore: before, wsAfter: after }, node.content, node.marks),
  )
}

/** Parses HTML as a body fragment in an inert document (nothing loads, nothing runs). */
export const parseFragment = (html: string): HTMLElement => {
  const holder = inert().createElement("div")
  holder.innerHTML = html
  return holder
}

/**
 * Pasted HTML without inline styles, event handlers, `<style>` and `<script>`, which a word
 * processor's or a web page's copy carries: the sanitiser removes them on saving, and until then
 * every parse of the body (each keystroke serialises it) would be a CSP violation in the console.
 * A `<b>` whose style says it is not bold is a wrapper, not bold: its content stays, unwrapped.
 */
export const withoutStylesAndHandlers = (html: string): string => {
  const holder = parseFragment(html)
  for (const el of Array.from(holder.querySelectorAll("style, script"))) el.remove()
  // Google Docs wraps a whole copy in <b style="font-weight:normal">: not bold, only a wrapper.
  for (const el of Array.from(holder.querySelectorAll("b"))) {
    if (/(^|;)\s*font-weight\s*:\s*(normal|400)\s*(;|$)/i.test(el.getAttribute("style") ?? "")) el.replaceWith(...Array.from(el.childNodes))
  }
  // Word processors (Google Docs, Word online) say bold and italic with a span's style only: that
  // formatting is kept as <strong> and <em> before the style goes, or the paste would lose it. Only
  // spans, outside protected elements and outside what is bold or italic already (a heading a web
  // page's copy styles as bold is not bold text).
  for (const el of Array.from(holder.querySelectorAll("span[style]"))) {
    if (el.closest("[data-service-protected]") !== null) continue
    const style = el.getAttribute("style") ?? ""
    const weight = /(?:^|;)\s*font-weight\s*:\s*([^;]+?)\s*(?:;|$)/i.exec(style)?.[1]?.toLowerCase()
    const fontStyle = /(?:^|;)\s*font-style\s*:\s*([^;]+?)\s*(?:;|$)/i.exec(style)?.[1]?.toLowerCase()
    const wrap = (tag: string) => {
      const w = el.ownerDocument.createElement(tag)
      w.append(...Array.from(el.childNodes))
      el.append(w)
    }
    if (weight !== undefined && /^(bold|bolder|[6-9]00)$/.test(weight) && el.closest("b, strong, h1, h2, h3, h4, h5, h6, th") === null) wrap("strong")
    if (fontStyle !== undefined && /^(italic|oblique)/.test(fontStyle) && el.closest("i, em, cite, var, dfn, address") === null) wrap("em")
  }
  for (const el of Array.from(holder.querySelectorAll("*"))) {
    for (const a of Array.from(el.attributes)) if (a.name === "style" || a.name.startsWith("on")) el.removeAttribute(a.name)
  }
  return holder.innerHTML
}

/** The editor document of a body; throws `Unrepresentable` for markup it cannot hold. */
export const loadBody = (html: string): PMNode =>
  schema.nodes["doc"]!.createChecked(null, blockContent(Array.from(parseFragment(html).childNodes)))

/** The body HTML of an editor document. */
export const toHtml = (doc: PMNode): string => {
  const holder = inert().createElement("div")
  holder.appendChild(serialising(() => DOMSerializer.fromSchema(schema).serializeFragment(doc.content, { document: inert() })))
  for (const el of Array.from(holder.querySelectorAll("[data-cs-wsb],[data-cs-wsa]"))) {
    const before = el.getAttribute("data-cs-wsb")
    const after = el.getAttribute("data-cs-wsa")
    el.removeAttribute("data-cs-wsb")
    el.removeAttribute("data-cs-wsa")
    if (before) el.before(before)
    if (after) el.after(after)
  }
  for (const el of Array.from(holder.querySelectorAll("cs-plain"))) el.replaceWith(...Array.from(el.childNodes))
  return holder.innerHTML
}

/** A body as the HTML parser reads it, serialised again: equal trees give equal strings. */
export const canonical = (html: string): string => parseFragment(html).innerHTML

/** Where two canonical bodies first differ, as a short excerpt of the first. */
export const firstDifference = (a: string, b: string): string => {
  let i = 0
  while (i < a.length && i < b.length && a[i] === b[i]) i++
  return a.slice(Math.max(0, i - 30), i + 40)
}

/**
 * Loads a body if the editor can keep it exactly: the document, or why not (with where).
 */
export const tryLoad = (html: string): { doc: PMNode } | { reason: string } => {
  let doc: PMNode
  try {
    doc = loadBody(html)
  } catch (error) {
    if (error instanceof Unrepresentable) return { reason: `it contains ${error.message}` }
    if (error instanceof RangeError) return { reason: "its elements are nested in a way the visual editor cannot show" }
    throw error
  }
  const before = canonical(html)
  const after = canonical(toHtml(doc))
  if (before !== after) return { reason: `the visual editor would change it near “${firstDifference(before, after)}”` }
  return { doc }
}
