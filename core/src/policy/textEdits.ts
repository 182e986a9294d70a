import type { EditMismatch, FieldError } from "../errors.ts"
import { isStorableText, UNSTORABLE_TEXT_MESSAGE } from "../schema/common.ts"

/**
 * The texts of edits that a PUT's body would refuse (a NUL, an unpaired surrogate: see
 * `isStorableText`), as field errors naming them (`edits/<index>/find` or `/replace`). A `find`
 * counts too: matched in a stored body, an unpaired surrogate can only match half of a pair,
 * and replacing it would leave the other half unpaired.
 */
export const unstorableEditTexts = (
  edits: ReadonlyArray<{ readonly find: string; readonly replace: string }>,
): ReadonlyArray<FieldError> =>
  edits.flatMap((edit, index) =>
    (["find", "replace"] as const)
      .filter((field) => !isStorableText(edit[field]))
      .map((field) => ({ path: `edits/${index}/${field}`, message: UNSTORABLE_TEXT_MESSAGE })),
  )

/** Where a `find` occurs in a text, looked for up to its second occurrence, and what the search cost. */
export interface FindResult {
  /** Start offsets of the first occurrences, at most two (overlapping ones count: `aa` is at 0 and 1 in `aaa`). */
  readonly at: ReadonlyArray<number>
  /** Characters compared, preparing `find` and scanning the text: at most 2 × (text length + find length). */
  readonly comparisons: number
}

/**
 * Looks for `find` in `text` with the Knuth-Morris-Pratt search and stops at its second
 * occurrence. Overlapping occurrences count (`aa` occurs twice in `aaa`). Linear whatever the
 * input: the failure table of `find` costs at most 2 × its length in character comparisons and the
 * scan at most 2 × the text's length (each comparison either moves the scan on or shortens the
 * current partial match, which grew by at most one a step), and `comparisons` says how many were
 * made. An empty `find` occurs at 0 and 1 of any non-empty text, at 0 only of "".
 */
export const findAtMostTwice = (text: string, find: string): FindResult => {
  const m = find.length
  if (m === 0) return { at: text.length === 0 ? [0] : [0, 1], comparisons: 0 }
  let comparisons = 0
  // One step of the automaton: from a partial match of length k, read c. Every comparison either
  // ends the step or shortens k, and k grows by at most one a step: at most 2 comparisons a step
  // on average over any run.
  const step = (k: number, c: number, failure: Int32Array): number => {
    for (;;) {
      comparisons++
      if (c === find.charCodeAt(k)) return k + 1
      if (k === 0) return 0
      k = failure[k - 1]!
    }
  }
  // failure[i]: length of the longest proper border of find[0..i].
  const failure = new Int32Array(m)
  for (let i = 1, k = 0; i < m; i++) {
    k = step(k, find.charCodeAt(i), failure)
    failure[i] = k
  }
  const at: Array<number> = []
  for (let i = 0, k = 0; i < text.length; i++) {
    k = step(k, text.charCodeAt(i), failure)
    if (k === m) {
      at.push(i - m + 1)
      if (at.length === 2) break
      k = failure[m - 1]!
    }
  }
  return { at, comparisons }
}

/**
 * How many times `find` occurs in `text`, overlapping occurrences included (`aa` is twice in
 * `aaa`), counted up to 2: 0, 1, or 2 for "2 or more". Linear in both lengths (`findAtMostTwice`).
 */
export const occurrences = (text: string, find: string): number => findAtMostTwice(text, find).at.length

/** The text with every edit made, or every edit that could not be made. */
export type TextEditsResult = { readonly text: string } | { readonly mismatches: ReadonlyArray<EditMismatch> }

/**
 * Applies find-and-replace edits in order, each on the result of the one before. Every `find`
 * must occur exactly once in the text it is applied to; an edit that does not is skipped and
 * reported (`edits/<index>/find` with its count: 0, or 2 for "2 or more", the search stopping at
 * the second occurrence), and the later edits are still checked, against the text with the
 * applicable earlier edits made. Each edit is one linear search (`findAtMostTwice`) and is applied
 * where that search found it: at most 2 × (text + find) characters compared an edit, the text
 * being the one that edit is applied to; `work.comparisons`, when given, adds them up. Answers the
 * new text, or every mismatch.
 */
export const applyTextEdits = (
  text: string,
  edits: ReadonlyArray<{ readonly find: string; readonly replace: string }>,
  work: { comparisons: number } = { comparisons: 0 },
): TextEditsResult => {
  let out = text
  const mismatches: Array<EditMismatch> = []
  edits.forEach((edit, index) => {
    const search = findAtMostTwice(out, edit.find)
    work.comparisons += search.comparisons
    const found = search.at
    const count = found.length
    if (count !== 1) {
      mismatches.push({
        path: `edits/${index}/find`,
        message:
          count === 0
            ? "Not found in the body: copy the text exactly as the body is served (HTML, entities and whitespace included)."
            : "Found at least 2 times in the body: include more of the surrounding text so that it occurs exactly once.",
        count,
      })
      return
    }
    const at = found[0]!
    out = out.slice(0, at) + edit.replace + out.slice(at + edit.find.length)
  })
  return mismatches.length > 0 ? { mismatches } : { text: out }
}
