import { WORD_BOUNDARY_ELEMENTS } from "./words.ts"
import type { Element, ElementContent, Properties, Root, RootContent } from "hast"
import { ATTRIBUTE_NAMES } from "./articleSchema.ts"

/** Elements the HTML serialisation algorithm writes without children or end tag. */
const VOID_ELEMENTS: ReadonlySet<string> = new Set([
  "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "img", "input",
  "keygen", "link", "meta", "param", "source", "track", "wbr",
])

const attributeOf: ReadonlyMap<string, string> = new Map(ATTRIBUTE_NAMES.map(([attribute, property]) => [property, attribute]))

const textEscapes = /[&<>\u00a0]/g
const attributeEscapes = /["&<>\u00a0]/g
const escapeChar = (c: string): string =>
  c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&nbsp;"

/** Escapes text as the HTML fragment serialisation algorithm does. */
export const escapeText = (value: string): string => value.replace(textEscapes, escapeChar)

/** Escapes an attribute value as the HTML fragment serialisation algorithm does. */
export const escapeAttribute = (value: string): string => value.replace(attributeEscapes, escapeChar)

const htmlWhitespaceRun = /[\t\n\f\r ]+/g

/** Collapses runs of HTML whitespace to one space. */
export const collapseWhitespace = (value: string): string => value.replace(htmlWhitespaceRun, " ")

/** The attribute string of a value, or null when the attribute is absent. */
const attributeValue = (value: Properties[string]): string | null => {
  if (value === null || value === undefined || value === false) return null
  if (value === true) return ""
  if (Array.isArray(value)) return value.join(" ")
  return String(value)
}

const attributes = (properties: Properties, sorted: boolean): string => {
  const pairs: Array<readonly [string, string]> = []
  for (const property in properties) {
    const name = attributeOf.get(property)
    // Only properties the policy knows can be written; anything else is dropped (fail closed).
    if (name === undefined) continue
    const value = attributeValue(properties[property])
    if (value !== null) pairs.push([name, value])
  }
  if (sorted) pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  let out = ""
  for (const [name, value] of pairs) out += ` ${name}="${escapeAttribute(value)}"`
  return out
}

/** What one serialisation pass found besides the HTML string. */
export interface Serialized {
  readonly html: string
  /** Outermost elements carrying `data-service-protected`, in document order. */
  readonly protectedElements: ReadonlyArray<Element>
  /** For each of `protectedElements`, whether an ancestor hides or strikes it: `del`, `s`, `[hidden]`, `[aria-hidden="true"]`, or a `details` outside its summary. */
  readonly protectedHidden: ReadonlyArray<boolean>
}

const STRIKING: ReadonlySet<string> = new Set(["del", "s"])

/** Whether an element hides or strikes its content: `del`, `s`, `[hidden]`, `[aria-hidden="true"]`. */
const hidesContent = (element: Element): boolean => {
  const { hidden, ariaHidden } = element.properties
  return (
    STRIKING.has(element.tagName) ||
    (hidden !== undefined && hidden !== null && hidden !== false) ||
    String(Array.isArray(ariaHidden) ? ariaHidden.join(" ") : ariaHidden).trim().toLowerCase() === "true"
  )
}

interface Frame {
  readonly nodes: ReadonlyArray<RootContent | ElementContent>
  index: number
  readonly endTag: string
  readonly protectedRoot: boolean
  readonly block: boolean
  /** The frame's nodes are hidden or struck (inside `del`, `s`, `[hidden]`, `[aria-hidden=true]`, or a `details` outside its summary). */
  readonly hidden: boolean
  /** The frame's nodes are a `details`'s children, and whether its summary (the first `summary` child) was met. */
  readonly details: boolean
  summarySeen: boolean
}

/** Options of `serializeNodes`. */
export interface SerializeOptions {
  /** Write attributes sorted by name and collapse whitespace runs in text (protected-block form). */
  readonly canonical?: boolean
  /** Write attributes sorted by name, text as it is (a block's identity in a merge: attribute order means nothing). */
  readonly sortAttributes?: boolean
  /** Receives every text node's value, in document order. */
  readonly onText?: (value: string) => void
  /** Called where a block element starts or ends (see `WORD_BOUNDARY_ELEMENTS`). */
  readonly onBoundary?: () => void
  /** Collect the outermost `data-service-protected` elements. */
  readonly collectProtected?: boolean
}

/**
 * Serialises hast nodes following the HTML fragment serialisation algorithm (the output of
 * `innerHTML`), iteratively so depth cannot overflow the stack. Comments, doctypes and template
 * contents are not written. As the parser drops a newline right after `<pre>`, a `pre` whose
 * text starts with a newline gets one more, so the output parses back to the same tree.
 */
export const serializeNodes = (
  nodes: ReadonlyArray<RootContent | ElementContent>,
  options: SerializeOptions = {},
): Serialized => {
  const canonical = options.canonical === true
  const sortAttributes = canonical || options.sortAttributes === true
  const onText = options.onText
  const onBoundary = options.onBoundary
  const collect = options.collectProtected === true
  const protectedElements: Array<Element> = []
  const protectedHidden: Array<boolean> = []
  let insideProtected = 0
  let html = ""
  // Adjacent text nodes are written as one, so that splitting text does not change the output.
  let pending = ""
  const flush = (): void => {
    if (pending.length > 0) {
      html += escapeText(canonical ? collapseWhitespace(pending) : pending)
      pending = ""
    }
  }
  const stack: Array<Frame> = []
  let frame: Frame = { nodes, index: 0, endTag: "", protectedRoot: false, block: false, hidden: false, details: false, summarySeen: false }
  for (;;) {
    if (frame.index < frame.nodes.length) {
      const node = frame.nodes[frame.index++]!
      if (node.type === "element") {
        const tag = node.tagName
        flush()
        html += `<${tag}${attributes(node.properties, sortAttributes)}>`
        const block = onBoundary !== undefined && WORD_BOUNDARY_ELEMENTS.has(tag)
        if (block) onBoundary()
        if (VOID_ELEMENTS.has(tag)) continue
        const first = node.children[0]
        if (tag === "pre" && first !== undefined && first.type === "text" && first.value.charCodeAt(0) === 10) {
          html += "\n"
        }
        const isProtected = collect && node.properties["dataServiceProtected"] != null && node.properties["dataServiceProtected"] !== false
        // A details shows its first summary child; the rest only when a reader opens it.
        const isSummary = frame.details && tag === "summary" && !frame.summarySeen
        if (isSummary) frame.summarySeen = true
        const hidden = frame.hidden || (frame.details && !isSummary)
        if (isProtected && insideProtected === 0) {
          protectedElements.push(node)
          protectedHidden.push(hidden)
        }
        if (isProtected) insideProtected++
        stack.push(frame)
        frame = {
          nodes: node.children,
          index: 0,
          endTag: `</${tag}>`,
          protectedRoot: isProtected,
          block,
          hidden: hidden || (collect && hidesContent(node)),
          details: tag === "details",
          summarySeen: false,
        }
      } else if (node.type === "text") {
        if (onText !== undefined) onText(node.value)
        pending += node.value
      }
    } else {
      flush()
      const parent = stack.pop()
      if (parent === undefined) break
      html += frame.endTag
      if (frame.block && onBoundary !== undefined) onBoundary()
      if (frame.protectedRoot) insideProtected--
      frame = parent
    }
  }
  return { html, protectedElements, protectedHidden }
}

/** Serialises a hast root (see `serializeNodes`). */
export const serializeRoot = (root: Root, options?: SerializeOptions): Serialized => serializeNodes(root.children, options)
