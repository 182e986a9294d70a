import type { Element, ElementContent, RootContent } from "hast"
import { formatPatch, type StructuredPatchHunk } from "diff"
import { articleSchema } from "./articleSchema.ts"
import { parseHtmlFragment, storedFormBudget, TOO_DEEP, TOO_LARGE } from "./parseHtmlFragment.ts"
import { serializeNodes } from "./serializeHtml.ts"
import { isWhiteSpace, trimHtmlSpace, WORD_BOUNDARY_ELEMENTS } from "./words.ts"
import { alignIds, type DiffBudget, internTokens, makeDiffBudget, type Run, trimAlign } from "./diffBudget.ts"

/**
 * Diffs of article bodies, for agents (a unified diff with word counts) and for pages (line and
 * word changes). The HTML is split here; the alignment (Myers' O(ND) algorithm) spends one
 * budget per comparison (`diffBudget.ts`), and past it the comparison is coarser and says so.
 */

/** One line of a line diff: unchanged, removed or added, with its 1-based line numbers. */
export interface DiffLine {
  readonly op: "same" | "del" | "ins"
  readonly text: string
  /** Line number in the old lines (same, del), else null. */
  readonly oldNo: number | null
  /** Line number in the new lines (same, ins), else null. */
  readonly newNo: number | null
}

/** One piece of a word diff: text both sides share, text only the old side has, or only the new. */
export interface WordChange {
  readonly op: "same" | "ins" | "del"
  readonly text: string
}

/** A unified diff of two bodies and how many words it removes and adds. */
export interface BodyDiff {
  /** Unified diff (3 lines of context) of `bodyLines` of both bodies; "" when they are equal. */
  readonly unified: string
  /** Words (as `"word count"` splits them) of the new body that the old one lacks there. */
  readonly added_words: number
  /** Words of the old body that the new one lacks there. */
  readonly removed_words: number
  /**
   * How finely the bodies were compared within the comparison's budget: `word` (lines aligned,
   * words aligned), `block` (lines aligned; the words of each changed line counted whole) or
   * `whole` (only the lines both share at the start and the end aligned; everything between
   * shown removed and added whole, its words counted so).
   */
  readonly granularity: DiffGranularity
  /** Says, when the comparison is coarser than word by word, why and what that means; else null. */
  readonly note: string | null
}

/** How finely a comparison could compare two bodies within its budget, finest first. */
export type DiffGranularity = "word" | "block" | "whole"

/** The sentence a comparison coarser than word by word carries. */
export const GRANULARITY_NOTES: Readonly<Record<DiffGranularity, string | null>> = {
  word: null,
  block:
    "The bodies are too long to compare word by word within one comparison's budget of work: lines are aligned exactly, and the words of each changed line are counted (and shown) as removed and added whole.",
  whole:
    "The bodies differ too much to align line by line within one comparison's budget of work: the lines both share at the start and at the end are kept, and every line between is shown removed and added whole.",
}

const CONTEXT = 3

const dropped: ReadonlySet<string> = new Set(articleSchema.strip ?? [])
// Elements that separate words but sit inside a line, as a reader sees them.
const INLINE_BOUNDARIES: ReadonlySet<string> = new Set(["br", "img"])
const isBlock = (node: RootContent | ElementContent): node is Element =>
  node.type === "element" && WORD_BOUNDARY_ELEMENTS.has(node.tagName) && !INLINE_BOUNDARIES.has(node.tagName)

/** A line of a body with its words, as `"word count"` splits them. */
interface BodyLine {
  readonly html: string
  readonly words: ReadonlyArray<string>
}

// A line must not hold a line break: breaks in text and attribute values (kept in `pre`) are
// written as the character references they are equivalent to.
const oneLine = (html: string): string => trimHtmlSpace(html).replace(/\n/g, "&#10;").replace(/\r/g, "&#13;")

const wordsOf = (nodes: ReadonlyArray<ElementContent | RootContent>): Array<string> => {
  const words: Array<string> = []
  let word = ""
  const end = (): void => {
    if (word !== "") words.push(word)
    word = ""
  }
  const stack: Array<ElementContent | RootContent | "boundary"> = []
  for (let i = nodes.length - 1; i >= 0; i--) stack.push(nodes[i]!)
  while (stack.length > 0) {
    const node = stack.pop()!
    if (node === "boundary") end()
    else if (node.type === "text") {
      for (let i = 0; i < node.value.length; i++) {
        if (isWhiteSpace(node.value.charCodeAt(i))) end()
        else word += node.value[i]
      }
    } else if (node.type === "element" && !dropped.has(node.tagName)) {
      if (WORD_BOUNDARY_ELEMENTS.has(node.tagName)) {
        end()
        stack.push("boundary")
      }
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!)
    }
  }
  end()
  return words
}

const startTag = (element: Element): string => {
  const { html } = serializeNodes([{ ...element, children: [] }])
  return html.endsWith(`</${element.tagName}>`) ? html.slice(0, -(element.tagName.length + 3)) : html
}

const linesOf = (html: string): ReadonlyArray<BodyLine> => {
  const root = parseHtmlFragment(html, storedFormBudget(html))
  if (root === TOO_DEEP || root === TOO_LARGE) {
    // Never a stored body (those are at most 256 elements deep, within the parse budget): one line, words from a tag strip.
    const line = oneLine(html)
    return line === "" ? [] : [{ html: line, words: wordsOf([{ type: "text", value: html.replace(/<[^>]*>/g, " ") }]) }]
  }
  const out: Array<BodyLine> = []
  // Consecutive inline nodes between blocks make one line.
  const flushInline = (run: Array<ElementContent | RootContent>): void => {
    if (run.length === 0) return
    const line = oneLine(serializeNodes(run).html)
    if (line !== "") out.push({ html: line, words: wordsOf(run) })
    run.length = 0
  }
  // A work list instead of recursion: a block holding blocks is its start tag, its children and its end tag.
  const work: Array<ElementContent | RootContent | string> = []
  for (let i = root.children.length - 1; i >= 0; i--) work.push(root.children[i]!)
  const run: Array<ElementContent | RootContent> = []
  while (work.length > 0) {
    const item = work.pop()!
    if (typeof item === "string") {
      flushInline(run)
      out.push({ html: item, words: [] })
    } else if (!isBlock(item)) {
      run.push(item)
    } else {
      flushInline(run)
      if (item.tagName === "pre" || !item.children.some(isBlock)) {
        out.push({ html: oneLine(serializeNodes([item]).html), words: wordsOf([item]) })
      } else {
        out.push({ html: oneLine(startTag(item)), words: [] })
        work.push(`</${item.tagName}>`)
        for (let i = item.children.length - 1; i >= 0; i--) work.push(item.children[i]!)
      }
    }
  }
  flushInline(run)
  return out
}

/**
 * The lines of an article body as its diffs show it: one block element a line (a paragraph,
 * heading, list item, table cell, `pre` ...), a block that holds blocks as its start tag, its
 * children and its end tag, and the inline content between blocks as one line. Whitespace
 * between blocks is not a line; a line break inside a line is written `&#10;`.
 */
export const bodyLines = (html: string): ReadonlyArray<string> => linesOf(html).map((line) => line.html)

/**
 * The runs aligning two lists of strings within the budget, or undefined (nothing more spent
 * than was tried) when they do not fit: interned, then aligned.
 */
const alignStrings = (budget: DiffBudget, before: ReadonlyArray<string>, after: ReadonlyArray<string>): ReadonlyArray<Run> | undefined => {
  const ids = internTokens(budget, before, after)
  return ids === undefined ? undefined : alignIds(budget, ids[0], ids[1])
}

const sameText = (a: string, b: string): boolean => a === b

/** Every item of both lists along the runs, numbered on each side. */
const linesAlong = (runs: ReadonlyArray<Run>, before: ReadonlyArray<string>, after: ReadonlyArray<string>): Array<DiffLine> => {
  const out: Array<DiffLine> = []
  let oldNo = 0
  let newNo = 0
  for (const run of runs) {
    for (let i = 0; i < run.count; i++) {
      if (run.op === "same") {
        out.push({ op: "same", text: before[oldNo]!, oldNo: oldNo + 1, newNo: newNo + 1 })
        oldNo++
        newNo++
      } else if (run.op === "del") out.push({ op: "del", text: before[oldNo++]!, oldNo, newNo: null })
      else out.push({ op: "ins", text: after[newNo++]!, oldNo: null, newNo })
    }
  }
  return out
}

/**
 * The line diff of two lists of lines (for example `bodyLines` of two bodies, or two titles):
 * every line of both, in order, marked unchanged, removed or added. Spends the given budget
 * (a fresh one by default); past it, the lines between those both lists share at the start
 * and at the end are all removed and added.
 */
export const diffLines = (
  before: ReadonlyArray<string>,
  after: ReadonlyArray<string>,
  budget: DiffBudget = makeDiffBudget(),
): ReadonlyArray<DiffLine> => linesAlong(alignStrings(budget, before, after) ?? trimAlign(budget, before, after, sameText), before, after)

/** Unified-diff hunks of a full line diff, with `CONTEXT` unchanged lines around each change. */
const hunksOf = (lines: ReadonlyArray<DiffLine>): Array<StructuredPatchHunk> => {
  const hunks: Array<StructuredPatchHunk> = []
  let i = 0
  while (i < lines.length) {
    if (lines[i]!.op === "same") {
      i++
      continue
    }
    // A hunk runs from CONTEXT lines before a change to CONTEXT lines after the last change that
    // is at most 2 x CONTEXT unchanged lines from the one before.
    const start = Math.max(0, i - CONTEXT)
    let end = i
    let j = i
    while (j < lines.length) {
      if (lines[j]!.op !== "same") {
        end = j
        j++
      } else if (j - end > 2 * CONTEXT) break
      else j++
    }
    const stop = Math.min(lines.length, end + CONTEXT + 1)
    const slice = lines.slice(start, stop)
    const oldLines = slice.filter((l) => l.op !== "ins").length
    const newLines = slice.filter((l) => l.op !== "del").length
    // Where the hunk starts on each side (formatPatch writes an empty side as the line before it).
    let oldStart = 1
    let newStart = 1
    for (let k = start - 1; k >= 0; k--) {
      const line = lines[k]!
      if (line.oldNo !== null && oldStart === 1) oldStart = line.oldNo + 1
      if (line.newNo !== null && newStart === 1) newStart = line.newNo + 1
      if (oldStart > 1 && newStart > 1) break
    }
    hunks.push({
      oldStart,
      oldLines,
      newStart,
      newLines,
      lines: slice.map((l) => (l.op === "same" ? " " : l.op === "del" ? "-" : "+") + l.text),
    })
    i = stop
  }
  return hunks
}

const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff

// Words, runs of whitespace, and any other character (a surrogate pair whole) each make a token.
const WORD_TOKENS = /[\p{L}\p{N}\p{M}_]+|\s+|[^]/gu

/** A word diff's pieces along the runs of the two texts' tokens, neighbours of one kind joined. */
const piecesAlong = (runs: ReadonlyArray<Run>, before: ReadonlyArray<string>, after: ReadonlyArray<string>): Array<WordChange> => {
  const out: Array<WordChange> = []
  let i = 0
  let j = 0
  for (const run of runs) {
    const tokens = run.op === "ins" ? after.slice(j, j + run.count) : before.slice(i, i + run.count)
    if (run.op !== "ins") i += run.count
    if (run.op !== "del") j += run.count
    out.push({ op: run.op, text: tokens.join("") })
  }
  return out.filter((piece) => piece.text !== "")
}

/** The coarse word diff once the budget is out: the texts' shared start and end, the middle replaced. */
const trimWords = (budget: DiffBudget, fromText: string, toText: string): Array<WordChange> => {
  let start = 0
  while (start < fromText.length && start < toText.length && fromText[start] === toText[start]) start++
  // Never split a surrogate pair.
  if (start > 0 && isHighSurrogate(fromText.charCodeAt(start - 1))) start--
  let endA = fromText.length
  let endB = toText.length
  while (endA > start && endB > start && fromText[endA - 1] === toText[endB - 1]) {
    endA--
    endB--
  }
  if (endA < fromText.length && isHighSurrogate(fromText.charCodeAt(endA - 1))) {
    endA++
    endB++
  }
  budget.fallback += start + (fromText.length - endA) + 1
  const pieces: Array<WordChange> = [
    { op: "same", text: fromText.slice(0, start) },
    { op: "del", text: fromText.slice(start, endA) },
    { op: "ins", text: toText.slice(start, endB) },
    { op: "same", text: fromText.slice(endA) },
  ]
  return pieces.filter((piece) => piece.text !== "")
}

/** A word diff within the budget, or undefined (nothing more spent than was tried) when it does not fit. */
const alignWords = (budget: DiffBudget, fromText: string, toText: string): Array<WordChange> | undefined => {
  const before = fromText.match(WORD_TOKENS) ?? []
  const after = toText.match(WORD_TOKENS) ?? []
  const runs = alignStrings(budget, before, after)
  return runs === undefined ? undefined : piecesAlong(runs, before, after)
}

/**
 * A word diff of two texts, for pages: every piece is a word, a punctuation mark or a run of
 * whitespace, marked unchanged, removed (`del`) or added (`ins`). The `same` and `del` pieces
 * joined give `fromText`, the `same` and `ins` pieces give `toText`. Spends the given budget (a
 * fresh one by default); past it, the middle between the texts' shared start and end is
 * replaced whole.
 */
export const diffWords = (fromText: string, toText: string, budget: DiffBudget = makeDiffBudget()): ReadonlyArray<WordChange> =>
  alignWords(budget, fromText, toText) ?? trimWords(budget, fromText, toText)

/** One row of a comparison as a reader sees it: a line of text both share, or a changed one with its word changes. */
export type ReadingRow =
  | { readonly kind: "same"; readonly text: string }
  | { readonly kind: "changed"; readonly before: ReadonlyArray<WordChange> | null; readonly after: ReadonlyArray<WordChange> | null }

const ENTITIES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" }

/** The readable text of one line of stored (serialised) body HTML: tags dropped, references decoded, whitespace collapsed. */
export const lineText = (line: string): string =>
  line
    .replace(/<(?:br|img)\b[^>]*>/gi, " ")
    .replace(/<[^>]*>/g, "")
    .replace(/&(?:#(\d+)|#x([0-9a-f]+)|([a-z]+));/gi, (m, dec: string | undefined, hex: string | undefined, name: string | undefined) =>
      dec !== undefined ? String.fromCodePoint(Number(dec)) : hex !== undefined ? String.fromCodePoint(parseInt(hex, 16)) : (ENTITIES[name!.toLowerCase()] ?? m),
    )
    .replace(/[\t\n\f\r ]+/g, " ")
    .trim()

/** What `compareBodies` is asked for besides the unified diff. */
export interface CompareOptions {
  /** Labels of the unified diff's headers (default `from` / `to`). */
  readonly labels?: { readonly from: string; readonly to: string }
  /**
   * Also what a page shows: the line diff of both bodies (`lines`) and the rows a reader sees
   * (`ReadingRow`), each changed line paired and compared word by word.
   */
  readonly reading?: boolean
  /** Also the two titles compared word by word (pages), first, within the same budget. */
  readonly titles?: { readonly from: string; readonly to: string }
}

/** One comparison of two bodies, all its parts within one budget. */
export interface BodyComparison {
  /** The agents' answer: unified diff, words added and removed, granularity. */
  readonly diff: BodyDiff
  /**
   * The line diff of both bodies' `bodyLines` (the unified diff's lines, every one), when asked
   * (`reading`); else null: every line of both bodies, which an answer of the unified diff alone
   * would carry back from the worker thread only to drop (twice the bodies' size).
   */
  readonly lines: ReadonlyArray<DiffLine> | null
  /** The rows a reader sees, when asked (`reading`); else null. Lines without text are left out. */
  readonly rows: ReadonlyArray<ReadingRow> | null
  /** The word diff of the titles, when asked (`titles`) and they differ; else null. */
  readonly title: ReadonlyArray<WordChange> | null
  /** What the comparison spent: `used` (at most `limit`) and the coarse fallbacks' `fallback`. */
  readonly work: { readonly limit: number; readonly used: number; readonly fallback: number }
}

/**
 * A comparison made for a page (`reading`): the line diff of both bodies and the rows a reader
 * sees are there.
 */
export interface ReadingComparison extends BodyComparison {
  readonly lines: ReadonlyArray<DiffLine>
  readonly rows: ReadonlyArray<ReadingRow>
}

/** What a comparison asked with `options` answers: a `ReadingComparison` when asked for `reading`. */
export type ComparisonFor<O extends CompareOptions> = O extends { readonly reading: true } ? ReadingComparison : BodyComparison

const coarser = (a: DiffGranularity, b: DiffGranularity): DiffGranularity => (a === "whole" || b === "whole" ? "whole" : a === "block" || b === "block" ? "block" : "word")

/**
 * Compares two article bodies with one budget of work (`makeDiffBudget`; the REST diff, the MCP
 * tool and the revision page each make one comparison): their `bodyLines` aligned, the words
 * added and removed counted by aligning the words of both whole texts (not line by line: how a
 * line diff pairs repeated lines must not change how many words an edit touches), and, when
 * asked, each changed line paired and compared word by word for a reader. Each part spends the
 * same budget; a part that does not fit falls back to a coarser comparison (`granularity`, with
 * its `note`): linear, one pass over the lines and words at most.
 */
export const compareBodies = <const O extends CompareOptions = CompareOptions>(
  fromHtml: string,
  toHtml: string,
  options: O = {} as O,
  budget: DiffBudget = makeDiffBudget(),
): ComparisonFor<O> => {
  const titles = options.titles
  const title = titles === undefined || titles.from === titles.to ? null : diffWords(titles.from, titles.to, budget)
  const before = linesOf(fromHtml)
  const after = linesOf(toHtml)
  const beforeHtml = before.map((line) => line.html)
  const afterHtml = after.map((line) => line.html)
  let granularity: DiffGranularity = "word"
  let lineRuns = alignStrings(budget, beforeHtml, afterHtml)
  if (lineRuns === undefined) {
    granularity = "whole"
    lineRuns = trimAlign(budget, beforeHtml, afterHtml, sameText)
  }
  const lines = linesAlong(lineRuns, beforeHtml, afterHtml)

  let added = 0
  let removed = 0
  const wordRuns = granularity === "word" ? alignStrings(budget, before.flatMap((line) => line.words), after.flatMap((line) => line.words)) : undefined
  if (wordRuns !== undefined) {
    for (const run of wordRuns) {
      if (run.op === "del") removed += run.count
      else if (run.op === "ins") added += run.count
    }
  } else {
    granularity = coarser(granularity, "block")
    // The words of every line removed or added, whole.
    let i = 0
    let j = 0
    for (const run of lineRuns) {
      budget.fallback += run.count
      for (let k = 0; k < run.count; k++) {
        if (run.op !== "ins") {
          if (run.op === "del") removed += before[i]!.words.length
          i++
        }
        if (run.op !== "del") {
          if (run.op === "ins") added += after[j]!.words.length
          j++
        }
      }
    }
  }

  let rows: Array<ReadingRow> | null = null
  if (options.reading === true) {
    rows = []
    let k = 0
    while (k < lines.length) {
      const line = lines[k]!
      if (line.op === "same") {
        const text = lineText(line.text)
        if (text !== "") rows.push({ kind: "same", text })
        k++
        continue
      }
      const dels: Array<string> = []
      const inss: Array<string> = []
      for (; k < lines.length && lines[k]!.op !== "same"; k++) {
        const text = lineText(lines[k]!.text)
        if (text !== "") (lines[k]!.op === "del" ? dels : inss).push(text)
      }
      for (let p = 0; p < Math.max(dels.length, inss.length); p++) {
        const d = dels[p]
        const n = inss[p]
        if (d !== undefined && n !== undefined) {
          if (d === n) {
            rows.push({ kind: "same", text: d })
            continue
          }
          const words = granularity === "word" ? alignWords(budget, d, n) : undefined
          if (words !== undefined) {
            rows.push({ kind: "changed", before: words.filter((w) => w.op !== "ins"), after: words.filter((w) => w.op !== "del") })
            continue
          }
          granularity = coarser(granularity, "block")
          budget.fallback += 1
        }
        rows.push({ kind: "changed", before: d !== undefined ? [{ op: "del", text: d }] : null, after: n !== undefined ? [{ op: "ins", text: n }] : null })
      }
    }
  }

  const hunks = hunksOf(lines)
  const labels = options.labels ?? { from: "from", to: "to" }
  const unified =
    hunks.length === 0
      ? ""
      : formatPatch(
          { oldFileName: labels.from, newFileName: labels.to, oldHeader: undefined, newHeader: undefined, hunks },
          { includeIndex: false, includeUnderline: false, includeFileHeaders: true },
        )
  const comparison: BodyComparison = {
    diff: { unified, added_words: added, removed_words: removed, granularity, note: GRANULARITY_NOTES[granularity] },
    lines: options.reading === true ? lines : null,
    rows,
    title,
    work: { limit: budget.limit, used: budget.used, fallback: budget.fallback },
  }
  // (`reading` set both `lines` and `rows` above)
  return comparison as ComparisonFor<O>
}

/**
 * Diffs two article bodies: a unified diff of their `bodyLines` (3 lines of context, headers
 * `--- from` / `+++ to` or the given labels; "" when the bodies have the same lines) and the
 * number of words removed and added, within one budget (`compareBodies`).
 */
export const diffBodies = (
  fromHtml: string,
  toHtml: string,
  labels: { readonly from: string; readonly to: string } = { from: "from", to: "to" },
  budget: DiffBudget = makeDiffBudget(),
): BodyDiff => compareBodies(fromHtml, toHtml, { labels }, budget).diff
