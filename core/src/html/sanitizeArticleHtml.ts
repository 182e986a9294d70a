import type { Element, ElementContent, Nodes, Properties, Root, RootContent } from "hast"
import { sanitize, type Schema } from "hast-util-sanitize"
import { Effect } from "effect"
import { InvalidRequest, PayloadTooLarge } from "../errors.ts"
import { isWithinBodyLimit, MAX_BODY_BYTES } from "../schema/writes.ts"
import { ATTRIBUTE_NAMES, BLOCK_EQUIVALENTS, MAX_NESTING_DEPTH, articleSchema } from "./articleSchema.ts"
import { MAX_PARSED_NODES, parseHtmlFragment, storedFormBudget, TOO_DEEP, TOO_LARGE } from "./parseHtmlFragment.ts"
import { toProtectedBlock, type ProtectedBlock } from "./protectedBlock.ts"
import { escapeText, serializeRoot } from "./serializeHtml.ts"
import { makeWordCounter } from "./words.ts"

/** What the sanitiser removed from one body. */
export interface SanitizeReport {
  /** Whether the stored HTML differs from the input's own serialisation (its canonical form). */
  readonly changed: boolean
  /** Removed elements (by tag name), attributes (`"onclick attribute"`) and comments, sorted by `what`. */
  readonly removed: ReadonlyArray<{ readonly what: string; readonly count: number }>
}

/** A sanitised body and the report of what was removed from it. */
export interface SanitizedHtml {
  readonly html: string
  readonly report: SanitizeReport
}

/** A sanitised body with everything callers derive from it, computed from the same tree. */
export interface AnalyzedHtml extends SanitizedHtml {
  /** The outermost protected blocks of the sanitised body, in document order. */
  readonly blocks: ReadonlyArray<ProtectedBlock>
  /** `"word count"` of the sanitised body (see `countWords`). */
  readonly wordCount: number
}

/** The error for input nested deeper than `MAX_NESTING_DEPTH` elements. */
export const tooDeep = (): InvalidRequest =>
  new InvalidRequest({
    detail: `The body is HTML nested deeper than ${MAX_NESTING_DEPTH} elements.`,
    errors: [{ path: "body", message: `HTML must not be nested deeper than ${MAX_NESTING_DEPTH} elements` }],
  })

/** Why a body is refused by the sanitiser. */
export type HtmlRefusal = InvalidRequest | PayloadTooLarge

/** The error for input whose parse would build more than `MAX_PARSED_NODES` elements and attributes. */
export const tooManyNodes = (): PayloadTooLarge =>
  new PayloadTooLarge({
    detail:
      `The body's HTML builds more than ${MAX_PARSED_NODES} elements and attributes when parsed ` +
      "(for example formatting tags left open, which the parser reopens in every following paragraph); close them or simplify the markup.",
  })

/** The error for a body whose sanitised form is larger than `MAX_BODY_BYTES`. */
export const sanitizedTooLarge = (): PayloadTooLarge =>
  new PayloadTooLarge({
    detail:
      `The body's sanitised HTML is larger than ${MAX_BODY_BYTES} bytes (1 MiB); the parser closes and reopens ` +
      "elements left open, which can make the stored form larger than what was sent. Close the elements or send less.",
  })

/** Whether a sanitised body fits the body limit. */
const fits = isWithinBodyLimit

// ---------------------------------------------------------------------------------------------
// Audit: the same decisions hast-util-sanitize makes, read from the same schema, so the report
// can say what was removed. A test pins "nothing reported" to "tree unchanged"; the rules are
// exported for their own tests (core/test/html/auditRules.test.ts), not through the index.

type Definition = NonNullable<Schema["attributes"]>[string][number]

const own = Object.prototype.hasOwnProperty
const tagNames: ReadonlySet<string> = new Set(articleSchema.tagNames ?? [])
const strip: ReadonlySet<string> = new Set(articleSchema.strip ?? [])
const ancestors: Readonly<Record<string, ReadonlyArray<string>>> = articleSchema.ancestors ?? {}
const attributeRules: Readonly<Record<string, ReadonlyArray<Definition>>> = articleSchema.attributes ?? {}

export const findDefinition = (definitions: ReadonlyArray<Definition> | undefined, key: string): Definition | undefined => {
  let dataDefault: Definition | undefined
  if (definitions !== undefined) {
    for (const entry of definitions) {
      const name = typeof entry === "string" ? entry : entry[0]
      if (name === key) return entry
      if (name === "data*") dataDefault = entry
    }
  }
  return key.length > 4 && key.slice(0, 4).toLowerCase() === "data" ? dataDefault : undefined
}

export const valueAllowed = (definition: Definition | undefined, value: unknown): boolean => {
  if (definition === undefined) return false
  if (Array.isArray(value)) return true
  if (typeof value !== "boolean" && typeof value !== "number" && typeof value !== "string") return false
  if (typeof definition === "string" || definition.length <= 1) return true
  for (let i = 1; i < definition.length; i++) {
    const allowed = definition[i]
    if (allowed instanceof RegExp ? allowed.test(String(value)) : allowed === value) return true
  }
  return false
}

const propertyKept = (tag: string, key: string, value: unknown): boolean =>
  valueAllowed(findDefinition(own.call(attributeRules, tag) ? attributeRules[tag] : undefined, key), value) ||
  valueAllowed(findDefinition(attributeRules["*"], key), value)

export const elementKept = (tag: string, ancestorTags: ReadonlyArray<string>): boolean => {
  // (the schema names no "" or "*" element: its list alone decides)
  if (!tagNames.has(tag)) return false
  if (!own.call(ancestors, tag)) return true
  return ancestors[tag]!.some((name) => ancestorTags.includes(name))
}

const knownAttributes: ReadonlyMap<string, string> = new Map([
  ...ATTRIBUTE_NAMES.map(([attribute, property]) => [property, attribute] as const),
  ["htmlFor", "for"],
  ["acceptCharset", "accept-charset"],
  ["httpEquiv", "http-equiv"],
])

/** The HTML attribute name of a hast property name, for the report. */
export const attributeName = (property: string): string => {
  const known = knownAttributes.get(property)
  if (known !== undefined) return known
  const prefixed = /^(data|aria|xLink|xmlns|xml)([A-Z].*)$/.exec(property)
  if (prefixed === null) return property.toLowerCase()
  const [, prefix, rest] = prefixed as unknown as [string, string, string]
  if (prefix === "data") return "data" + rest.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase())
  if (prefix === "aria") return "aria-" + rest.toLowerCase()
  return prefix.toLowerCase() + ":" + rest.toLowerCase()
}

type Removed = Map<string, number>

/**
 * Kinds of removed markup a report names at most, and the characters of a kind's name shown: the
 * report is answered with every edit and kept with its idempotency key, so it stays a few KiB
 * whatever the body holds (a body of 20 000 distinct `data-x<n>` attributes made a 929 KB report,
 * kept whole with its key). Past the bound the kinds counted most often are named and the rest
 * summed in one last entry; `unstable markup` is always named.
 */
export const MAX_REPORTED_KINDS = 50
const MAX_KIND_CHARS = 100

/** The kinds a report names, by name, within `MAX_REPORTED_KINDS`: linear in the kinds but for one sort. */
const reportedKinds = (removed: Removed): Array<readonly [string, number]> => {
  // names cut to their bound (two cut alike are counted together)
  const cut = new Map<string, number>()
  for (const [what, count] of removed) {
    const name = what.length > MAX_KIND_CHARS ? `${what.slice(0, MAX_KIND_CHARS - 1)}…` : what
    cut.set(name, (cut.get(name) ?? 0) + count)
  }
  const byName = (a: readonly [string, number], b: readonly [string, number]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)
  const all = [...cut]
  if (all.length <= MAX_REPORTED_KINDS) return all.sort(byName)
  const first = (e: readonly [string, number]) => (e[0] === "unstable markup" ? 1 : 0)
  const ranked = all.sort((a, b) => first(b) - first(a) || b[1] - a[1] || byName(a, b))
  const named = ranked.slice(0, MAX_REPORTED_KINDS - 1).sort(byName)
  const rest = ranked.slice(MAX_REPORTED_KINDS - 1)
  return [...named, [`${rest.length} other kinds of markup`, rest.reduce((sum, [, count]) => sum + count, 0)]]
}

const note = (removed: Removed, what: string): void => {
  removed.set(what, (removed.get(what) ?? 0) + 1)
}

/**
 * Turns a disallowed block element into its allowed equivalent, in place, keeping only the
 * attributes the schema allows the equivalent (and not `data-service-protected`); the schema then
 * keeps it whole, so nothing more is reported for it. Answers the tag it now has.
 */
const toBlockEquivalent = (element: Element, equivalent: string): string => {
  const kept: Properties = {}
  const properties: Properties = element.properties
  for (const key in properties) {
    if (own.call(properties, key) && key !== "dataServiceProtected" && propertyKept(equivalent, key, properties[key])) kept[key] = properties[key]
  }
  element.tagName = equivalent
  element.properties = kept
  return equivalent
}

interface AuditFrame {
  readonly nodes: ReadonlyArray<RootContent | ElementContent>
  index: number
  /** This frame's children are inside an element dropped with its content. */
  readonly dropped: boolean
}

/**
 * Walks the parsed tree without recursion: refuses it when nested deeper than the limit, notes
 * what the schema will remove (outside content that is dropped as a whole), and turns each
 * disallowed block element into its allowed equivalent (`BLOCK_EQUIVALENTS`) on the way.
 */
const audit = (root: Root, removed: Removed): boolean => {
  const ancestorTags: Array<string> = []
  const stack: Array<AuditFrame> = []
  let frame: AuditFrame = { nodes: root.children, index: 0, dropped: false }
  for (;;) {
    if (frame.index < frame.nodes.length) {
      const node = frame.nodes[frame.index++]!
      if (node.type === "element") {
        if (ancestorTags.length >= MAX_NESTING_DEPTH) return false
        let tag = node.tagName
        let dropped = frame.dropped
        if (!dropped) {
          if (elementKept(tag, ancestorTags)) {
            const properties: Properties = node.properties
            for (const key in properties) {
              if (own.call(properties, key) && !propertyKept(tag, key, properties[key])) note(removed, `${attributeName(key)} attribute`)
            }
          } else {
            note(removed, tag)
            dropped = strip.has(tag)
            const equivalent = dropped || !own.call(BLOCK_EQUIVALENTS, tag) ? undefined : BLOCK_EQUIVALENTS[tag]
            if (equivalent !== undefined && elementKept(equivalent, ancestorTags)) tag = toBlockEquivalent(node, equivalent)
          }
        }
        ancestorTags.push(tag)
        stack.push(frame)
        frame = { nodes: node.children, index: 0, dropped }
      } else if (node.type === "comment" && !frame.dropped) {
        note(removed, "comment")
      }
    } else {
      const parent = stack.pop()
      if (parent === undefined) return true
      ancestorTags.pop()
      frame = parent
    }
  }
}

// ---------------------------------------------------------------------------------------------

interface Round {
  readonly html: string
  readonly tree: Root
  readonly protectedElements: ReadonlyArray<Element>
  readonly protectedHidden: ReadonlyArray<boolean>
  readonly wordCount: number
}

/**
 * Whether serialising `tree` must write more than `limit` characters: its text and attribute
 * values alone (a lower bound of the output, before tags and escapes) are counted, each node once,
 * and the count stops as soon as it passes the limit.
 */
export const writesMoreThan = (tree: Root, limit: number): boolean => {
  let total = 0
  const stack: Array<Nodes> = [tree]
  while (stack.length > 0) {
    const node = stack.pop()!
    if (node.type === "text") total += node.value.length
    else if (node.type === "root" || node.type === "element") {
      if (node.type === "element") {
        for (const value of Object.values(node.properties)) {
          if (typeof value === "string") total += value.length
          else if (Array.isArray(value)) {
            // written joined by a separator of at least one character
            for (const item of value) total += String(item).length
            total += Math.max(0, value.length - 1)
          }
        }
      }
      for (const child of node.children) stack.push(child)
    }
    if (total > limit) return true
  }
  return false
}

/**
 * One parse-sanitise-serialise round. With `within` (small work), `nextChars` is the bound of the
 * next round's input: a round whose output must be longer than that stops before serialising
 * (NOT_SMALL), since that output would not be small input for the next round anyway, and one long
 * attribute reopened in each paragraph makes the output grow with the square of the input.
 */
const round = (input: string, removed: Removed, stored: boolean, within?: SmallWork, nextChars?: number): Round | HtmlRefusal | typeof NOT_SMALL => {
  if (within !== undefined && input.length > within.chars) return NOT_SMALL
  const parsed = stored ? parseHtmlFragment(input, storedFormBudget(input)) : parseHtmlFragment(input, within?.nodes)
  if (parsed === TOO_LARGE) return within === undefined ? tooManyNodes() : NOT_SMALL
  if (parsed === TOO_DEEP || !audit(parsed, removed)) return tooDeep()
  const tree = sanitize(parsed, articleSchema) as Root
  if (within !== undefined && writesMoreThan(tree, nextChars ?? within.chars)) return NOT_SMALL
  const words = makeWordCounter()
  const { html, protectedElements, protectedHidden } = serializeRoot(tree, { collectProtected: true, onText: words.add, onBoundary: words.boundary })
  // Checked on every round, so a later round never re-parses more than the limit.
  if (!stored && !fits(html)) return sanitizedTooLarge()
  return { html, tree, protectedElements, protectedHidden, wordCount: words.count() }
}

/** How many parse-sanitise-serialise rounds may run before the markup is given up on. */
const MAX_ROUNDS = 4

const textOnly = (tree: Nodes): string => {
  let text = ""
  const stack: Array<Nodes> = [tree]
  while (stack.length > 0) {
    const node = stack.pop()!
    if (node.type === "text") text += node.value
    else if (node.type === "root" || node.type === "element") {
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!)
    }
  }
  return escapeText(text.replaceAll("\u0000", ""))
}

/** Whether a round or an analysis was refused. */
export const isRefusal = (value: object): value is HtmlRefusal => value instanceof InvalidRequest || value instanceof PayloadTooLarge

export interface AnalyzeOptions {
  /**
   * The body is one already stored (the current body, a revision), read to learn its protected
   * blocks or words, not a body sent in: the input limits (the parse budget, 1 MiB after
   * sanitising) are not applied, since a body stored before them must stay readable and
   * editable. The parse is still bounded, linearly in the body's length (`storedFormBudget`).
   */
  readonly storedForm?: boolean
  /**
   * Analyse only if the work is small: the input at most `chars` characters, each later round's
   * input (the previous round's output, which closing tags and escapes lengthen) at most twice
   * that, and each parse at most `nodes` elements and attributes; past any of them the analysis
   * stops and answers `NOT_SMALL` (having done at most that much). Within them the answer is
   * exactly the one without them, since a bound that is not reached changes nothing.
   */
  readonly within?: SmallWork
  /**
   * How many rounds may run before unstable markup falls back to its text (default 4). A seam
   * for tests only: no input known needs more than three rounds, so only fewer reach the fallback.
   */
  readonly maxRounds?: number
}

/** Bounds of a small analysis (`AnalyzeOptions.within`). */
export interface SmallWork {
  readonly chars: number
  readonly nodes: number
}

/** The answer of an analysis stopped at its `within` bounds: the body needs the full budget. */
export const NOT_SMALL = "not-small" as const

/**
 * The whole policy on one body: parse, sanitise, serialise. When the output is not the input
 * byte for byte, it is parsed and sanitised again until it no longer changes (serialising and
 * re-parsing can restructure a tree, e.g. mutation XSS), so the result is idempotent by
 * construction. Input already in stored form is parsed once.
 */
export function analyzeHtml(input: string, options?: AnalyzeOptions & { readonly within?: undefined }): AnalyzedHtml | HtmlRefusal
export function analyzeHtml(input: string, options: AnalyzeOptions): AnalyzedHtml | HtmlRefusal | typeof NOT_SMALL
export function analyzeHtml(input: string, options: AnalyzeOptions = {}): AnalyzedHtml | HtmlRefusal | typeof NOT_SMALL {
  const stored = options.storedForm === true
  const within = stored ? undefined : options.within
  const removed: Removed = new Map()
  const later = within === undefined ? undefined : { chars: 2 * within.chars, nodes: within.nodes }
  const first = round(input, removed, stored, within, later?.chars)
  if (first === NOT_SMALL || isRefusal(first)) return first
  let last = first
  let html = first.html
  let settled = html === input
  const rounds = options.maxRounds ?? MAX_ROUNDS
  for (let n = 1; !settled && n < rounds; n++) {
    const next = round(html, removed, stored, later)
    if (next === NOT_SMALL || isRefusal(next)) return next
    settled = next.html === html
    last = next
    html = next.html
  }
  if (!settled) {
    // Markup that keeps changing when re-parsed is not kept at all: its text is.
    note(removed, "unstable markup")
    html = textOnly(last.tree)
    const check = round(html, removed, stored, later)
    if (check === NOT_SMALL || isRefusal(check)) return check
    if (check.html !== html) throw new Error("sanitiser: text-only fallback is not stable")
    last = check
  }
  const entries = reportedKinds(removed)
  return {
    html,
    report: {
      changed: entries.length > 0 || html !== first.html,
      removed: entries.map(([what, count]) => ({ what, count })),
    },
    blocks: last.protectedElements.map((element, i) => toProtectedBlock(element, last.protectedHidden[i] === true)),
    wordCount: last.wordCount,
  }
}

/**
 * Parses (fragment, body context), sanitises and serialises article HTML; idempotent; fails
 * with InvalidRequest when the input is nested deeper than 256 elements, and with
 * PayloadTooLarge when its parse would build more than `MAX_PARSED_NODES` elements and
 * attributes or its sanitised form is larger than 1 MiB.
 */
export const sanitizeArticleHtml = (input: string): Effect.Effect<SanitizedHtml, HtmlRefusal> =>
  Effect.suspend(() => {
    const result = analyzeHtml(input)
    return isRefusal(result) ? Effect.fail(result) : Effect.succeed({ html: result.html, report: result.report })
  })

/**
 * Sanitises article HTML and returns, from the same parse, its protected blocks and word count;
 * fails like `sanitizeArticleHtml`.
 */
export const analyzeArticleHtml = (input: string): Effect.Effect<AnalyzedHtml, HtmlRefusal> =>
  Effect.suspend(() => {
    const result = analyzeHtml(input)
    return isRefusal(result) ? Effect.fail(result) : Effect.succeed(result)
  })

/**
 * Sanitises each part on its own, as `analyzeArticleHtml` sanitises a body: for each, its
 * sanitised HTML, or null where that refuses it. A part is a closed fragment: an unclosed comment,
 * `script` or `textarea` (or a tag left open) in one ends with it and never reaches the next.
 */
export const sanitizeEachPart = (parts: ReadonlyArray<string>): Array<string | null> =>
  parts.map((part) => {
    const result = analyzeHtml(part)
    return isRefusal(result) ? null : result.html
  })

/**
 * `analyzeArticleHtml` if the body is small work (`within`: every round's input and parse bounded),
 * with the same answer; otherwise `NOT_SMALL`, at a cost of at most that bounded work. Lets a
 * caller do small bodies where it stands and send the rest where big work belongs.
 */
export const analyzeSmallArticleHtml = (input: string, within: SmallWork): Effect.Effect<AnalyzedHtml | typeof NOT_SMALL, HtmlRefusal> =>
  Effect.suspend(() => {
    const result = analyzeHtml(input, { within })
    return result !== NOT_SMALL && isRefusal(result) ? Effect.fail(result) : Effect.succeed(result)
  })
