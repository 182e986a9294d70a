import { bodyLines, type DiffLine, diffLines, diffWords, type WordChange } from "@content-site/core"
import { type Html, html } from "./html.ts"

/** One row of a side-by-side comparison: the old text and the new, each with its word changes. */
export type CompareRow =
  | { readonly kind: "same"; readonly text: string }
  | { readonly kind: "gap"; readonly texts: ReadonlyArray<string> }
  | { readonly kind: "changed"; readonly before: ReadonlyArray<WordChange> | null; readonly after: ReadonlyArray<WordChange> | null }

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" }

/** The readable text of one line of stored (serialised) body HTML: tags dropped, references decoded. */
export const lineText = (line: string): string =>
  line
    .replace(/<(?:br|img)\b[^>]*>/gi, " ")
    .replace(/<[^>]*>/g, "")
    .replace(/&(?:#(\d+)|#x([0-9a-f]+)|([a-z]+));/gi, (m, dec: string | undefined, hex: string | undefined, name: string | undefined) =>
      dec !== undefined ? String.fromCodePoint(Number(dec)) : hex !== undefined ? String.fromCodePoint(parseInt(hex, 16)) : (ENTITIES[name!.toLowerCase()] ?? m),
    )
    .replace(/[\t\n\f\r ]+/g, " ")
    .trim()

/** Unchanged paragraphs shown around each change. */
const CONTEXT = 2
/** The shortest run of other unchanged paragraphs that is folded: a fold of one would hide nothing. */
const FOLD_AT_LEAST = 2

/**
 * The rows comparing two bodies as a reader sees them: the core's line diff of their block
 * lines, each removed line paired with the added line in its place and compared word by word
 * (the core's `diffWords`), unchanged runs away from any change folded (a reader unfolds them)
 * with a few lines of context kept. Lines without text (an opening `<ul>`) are left out.
 */
export const compareRows = (beforeHtml: string, afterHtml: string): ReadonlyArray<CompareRow> => {
  const lines = diffLines(bodyLines(beforeHtml).map(lineText).filter((t) => t !== ""), bodyLines(afterHtml).map(lineText).filter((t) => t !== ""))
  const rows: Array<CompareRow> = []
  let i = 0
  while (i < lines.length) {
    if (lines[i]!.op === "same") {
      rows.push({ kind: "same", text: lines[i]!.text })
      i++
      continue
    }
    const dels: Array<DiffLine> = []
    const inss: Array<DiffLine> = []
    while (i < lines.length && lines[i]!.op !== "same") (lines[i]!.op === "del" ? dels : inss).push(lines[i++]!)
    for (let k = 0; k < Math.max(dels.length, inss.length); k++) {
      const d = dels[k]
      const n = inss[k]
      if (d !== undefined && n !== undefined) {
        const words = diffWords(d.text, n.text)
        rows.push({ kind: "changed", before: words.filter((w) => w.op !== "ins"), after: words.filter((w) => w.op !== "del") })
      } else {
        rows.push({ kind: "changed", before: d ? [{ op: "del", text: d.text }] : null, after: n ? [{ op: "ins", text: n.text }] : null })
      }
    }
  }
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

/** A side-by-side comparison of two bodies (and titles): removed words in red, added in green. */
export const wordComparison = (input: { beforeLabel: string; afterLabel: string; beforeTitle: string; afterTitle: string; beforeBody: string; afterBody: string }): Html => {
  const rows: Array<CompareRow> = []
  if (input.beforeTitle !== input.afterTitle) {
    const t = diffWords(input.beforeTitle, input.afterTitle)
    rows.push({ kind: "changed", before: t.filter((w) => w.op !== "ins"), after: t.filter((w) => w.op !== "del") })
  }
  rows.push(...compareRows(input.beforeBody, input.afterBody))
  if (rows.every((r) => r.kind !== "changed")) return html`<p class="empty">The text is the same in both.</p>`
  return html`<p class="legend compare-legend"><del>Removed words</del> are red and struck through; <ins>added words</ins> are green and underlined.</p>
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
