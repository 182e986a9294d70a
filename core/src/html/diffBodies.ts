import type { Element, ElementContent, RootContent } from "hast"
import { diffArrays, diffWordsWithSpace, formatPatch, type StructuredPatchHunk } from "diff"
import { articleSchema } from "./articleSchema.ts"
import { parseHtmlFragment, storedFormBudget, TOO_DEEP, TOO_LARGE } from "./parseHtmlFragment.ts"
import { serializeNodes } from "./serializeHtml.ts"
import { isWhiteSpace, WORD_BOUNDARY_ELEMENTS } from "./words.ts"

/**
 * Diffs of article bodies, for agents (a unified diff with word counts) and for pages (line and
 * word changes). The alignment is jsdiff's (Myers' O(ND) algorithm); the HTML is split here.
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
}

// Myers' algorithm costs about (items on both sides) x (edits). Past a budget of that product a
// diff stops aligning and reports the differing middle as replaced: still a true diff, only a
// longer one, and the same answer every time (a time limit would not be).
const WORK_BUDGET = 4_000_000
const maxEditLength = (items: number): number => Math.max(64, Math.floor(WORK_BUDGET / Math.max(1, items)))
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

const HTML_SPACE = /^[\t\n\f\r ]+|[\t\n\f\r ]+$/g
// A line must not hold a line break: breaks in text and attribute values (kept in `pre`) are
// written as the character references they are equivalent to.
const oneLine = (html: string): string => html.replace(HTML_SPACE, "").replace(/\n/g, "&#10;").replace(/\r/g, "&#13;")

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

/** The changes between two lists, by jsdiff, or the differing middle as one replacement when that is too long to align. */
const alignLists = <T>(
  before: ReadonlyArray<T>,
  after: ReadonlyArray<T>,
  equals: (a: T, b: T) => boolean,
): ReadonlyArray<{ readonly op: "same" | "del" | "ins"; readonly items: ReadonlyArray<T> }> => {
  const changes = diffArrays(before as Array<T>, after as Array<T>, {
    comparator: equals,
    maxEditLength: maxEditLength(before.length + after.length),
  })
  if (changes !== undefined) {
    return changes.map((change) => ({ op: change.added ? "ins" : change.removed ? "del" : "same", items: change.value }))
  }
  let start = 0
  while (start < before.length && start < after.length && equals(before[start]!, after[start]!)) start++
  let endA = before.length
  let endB = after.length
  while (endA > start && endB > start && equals(before[endA - 1]!, after[endB - 1]!)) {
    endA--
    endB--
  }
  return [
    { op: "same" as const, items: before.slice(0, start) },
    { op: "del" as const, items: before.slice(start, endA) },
    { op: "ins" as const, items: after.slice(start, endB) },
    { op: "same" as const, items: before.slice(endA) },
  ].filter((part) => part.items.length > 0)
}

const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff

const sameText = (a: string, b: string): boolean => a === b

/**
 * The line diff of two lists of lines (for example `bodyLines` of two bodies, or two titles):
 * every line of both, in order, marked unchanged, removed or added.
 */
export const diffLines = (before: ReadonlyArray<string>, after: ReadonlyArray<string>): ReadonlyArray<DiffLine> => {
  const out: Array<DiffLine> = []
  let oldNo = 0
  let newNo = 0
  for (const part of alignLists(before, after, sameText)) {
    for (const text of part.items) {
      if (part.op === "same") out.push({ op: "same", text, oldNo: ++oldNo, newNo: ++newNo })
      else if (part.op === "del") out.push({ op: "del", text, oldNo: ++oldNo, newNo: null })
      else out.push({ op: "ins", text, oldNo: null, newNo: ++newNo })
    }
  }
  return out
}

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

/**
 * Diffs two article bodies: a unified diff of their `bodyLines` (3 lines of context, headers
 * `--- from` / `+++ to` or the given labels; "" when the bodies have the same lines) and the
 * number of words removed and added. Words are counted as `"word count"` counts them, by a
 * word diff of the bodies' texts, so changing one word of a paragraph is 1 removed and 1 added,
 * not the whole paragraph twice.
 */
export const diffBodies = (
  fromHtml: string,
  toHtml: string,
  labels: { readonly from: string; readonly to: string } = { from: "from", to: "to" },
): BodyDiff => {
  const before = linesOf(fromHtml)
  const after = linesOf(toHtml)
  const lines = diffLines(
    before.map((line) => line.html),
    after.map((line) => line.html),
  )
  // Words are diffed over the whole text, not line by line: how a line diff pairs up repeated
  // lines must not change how many words an edit is said to touch.
  let added = 0
  let removed = 0
  for (const part of alignLists(before.flatMap((line) => line.words), after.flatMap((line) => line.words), sameText)) {
    if (part.op === "del") removed += part.items.length
    else if (part.op === "ins") added += part.items.length
  }
  const hunks = hunksOf(lines)
  const unified =
    hunks.length === 0
      ? ""
      : formatPatch(
          { oldFileName: labels.from, newFileName: labels.to, oldHeader: undefined, newHeader: undefined, hunks },
          { includeIndex: false, includeUnderline: false, includeFileHeaders: true },
        )
  return { unified, added_words: added, removed_words: removed }
}

/**
 * A word diff of two texts, for pages: every piece is a word, a punctuation mark or a run of
 * whitespace, marked unchanged, removed (`del`) or added (`ins`). The `same` and `del` pieces
 * joined give `fromText`, the `same` and `ins` pieces give `toText`.
 */
export const diffWords = (fromText: string, toText: string): ReadonlyArray<WordChange> => {
  const changes = diffWordsWithSpace(fromText, toText, { maxEditLength: maxEditLength(fromText.length / 4 + toText.length / 4) })
  if (changes !== undefined) {
    return changes
      .filter((change) => change.value !== "")
      .map((change) => ({ op: change.added ? "ins" : change.removed ? "del" : "same", text: change.value }))
  }
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
  const pieces: Array<WordChange> = [
    { op: "same", text: fromText.slice(0, start) },
    { op: "del", text: fromText.slice(start, endA) },
    { op: "ins", text: toText.slice(start, endB) },
    { op: "same", text: fromText.slice(endA) },
  ]
  return pieces.filter((piece) => piece.text !== "")
}
