import type { ReadingComparison, ReadingRow, WordChange } from "@content-site/core"
import { type Html, html } from "./html.ts"

/** One row of a side-by-side comparison: the old text and the new, each with its word changes. */
export type CompareRow =
  | { readonly kind: "same"; readonly text: string }
  | { readonly kind: "gap"; readonly texts: ReadonlyArray<string> }
  | { readonly kind: "changed"; readonly before: ReadonlyArray<WordChange> | null; readonly after: ReadonlyArray<WordChange> | null }

/** Unchanged paragraphs shown around each change. */
const CONTEXT = 2
/** The shortest run of other unchanged paragraphs that is folded: a fold of one would hide nothing. */
const FOLD_AT_LEAST = 2

/**
 * The rows comparing two bodies as a reader sees them (the core's `compareBodies` rows: each
 * removed line paired with the added line in its place and compared word by word), unchanged
 * runs away from any change folded (a reader unfolds them) with a few lines of context kept.
 */
export const foldRows = (rows: ReadonlyArray<ReadingRow>): ReadonlyArray<CompareRow> => {
  // Fold unchanged rows far from any change (the page lets a reader unfold them).
  const near = rows.map((_, k) => rows.slice(Math.max(0, k - CONTEXT), k + CONTEXT + 1).some((r) => r.kind !== "same"))
  const out: Array<CompareRow> = []
  let gap: Array<string> = []
  const endGap = () => {
    if (gap.length >= FOLD_AT_LEAST) out.push({ kind: "gap", texts: gap })
    else out.push(...gap.map((text) => ({ kind: "same" as const, text })))
    gap = []
  }
  rows.forEach((row, k) => {
    if (row.kind === "same" && !near[k]) gap.push(row.text)
    else {
      endGap()
      out.push(row)
    }
  })
  endGap()
  return out
}

const words = (changes: ReadonlyArray<WordChange> | null): Html =>
  changes === null
    ? html`<span class="muted">(nothing here)</span>`
    : html`${changes.map((c) =>
        c.op === "same" ? c.text : c.op === "del" ? html`<del><span class="visually-hidden">[removed: </span>${c.text}<span class="visually-hidden">]</span></del>` : html`<ins><span class="visually-hidden">[added: </span>${c.text}<span class="visually-hidden">]</span></ins>`,
      )}`

/**
 * A side-by-side comparison of two bodies (and titles) from one comparison (`compareBodies`
 * with `reading` and `titles`): removed words in red, added in green, and the comparison's note
 * when it had to be coarser than word by word.
 */
export const wordComparison = (input: { beforeLabel: string; afterLabel: string; comparison: ReadingComparison }): Html => {
  const { comparison } = input
  const rows: Array<CompareRow> = []
  const t = comparison.title
  if (t !== null) rows.push({ kind: "changed", before: t.filter((w) => w.op !== "ins"), after: t.filter((w) => w.op !== "del") })
  // (one push a row: a body's rows spread into one call could overflow the stack)
  for (const row of foldRows(comparison.rows)) rows.push(row)
  if (rows.every((r) => r.kind !== "changed")) return html`<p class="empty">The text is the same in both.</p>`
  const note = comparison.diff.note
  return html`${note === null ? "" : html`<p class="notice" role="note">${note}</p>`}<p class="legend compare-legend"><del>Removed words</del> are red and struck through; <ins>added words</ins> are green and underlined.</p>
  <div class="table-wrap" tabindex="0" role="region" aria-label="Side-by-side comparison"><table class="compare">
    <thead><tr><th scope="col">${input.beforeLabel}</th><th scope="col">${input.afterLabel}</th></tr></thead>
    <tbody>${rows.map((row) =>
      row.kind === "gap"
        ? html`<tr class="gap"><td colspan="2"><details><summary>${row.texts.length} unchanged paragraph${row.texts.length === 1 ? "" : "s"}<span class="visually-hidden">: show them</span></summary><div class="unchanged">${row.texts.map((t) => html`<p>${t}</p>`)}</div></details></td></tr>`
        : row.kind === "same"
          ? html`<tr class="same"><td>${row.text}</td><td>${row.text}</td></tr>`
          : html`<tr class="changed"><td class="before">${words(row.before)}</td><td class="after">${words(row.after)}</td></tr>`,
    )}</tbody>
  </table></div>`
}
