/** One line of a line diff. */
export interface DiffLine {
  readonly op: "same" | "del" | "ins"
  readonly text: string
  /** Line number in the old text (same/del). */
  readonly oldNo: number | null
  /** Line number in the new text (same/ins). */
  readonly newNo: number | null
}

/** Cells above which the quadratic LCS gives way to a plain "replaced" block. */
const MAX_CELLS = 4_000_000

const BLOCK_END = /(<\/(?:p|h[1-6]|li|ul|ol|blockquote|pre|table|thead|tbody|tfoot|tr|figure|figcaption|div|section|aside|header|footer|dl|dt|dd)>|<br\s*\/?>|<hr\s*\/?>)/gi
const BLOCK_START = /(<(?:ul|ol|table|thead|tbody|tr|blockquote|figure|section|div)(?:\s[^>]*)?>)/gi

/** Splits HTML into lines at block boundaries, so a line diff shows paragraphs, not one long line. */
export const htmlLines = (markup: string): ReadonlyArray<string> =>
  markup
    .replace(BLOCK_END, "$1\n")
    .replace(BLOCK_START, "\n$1\n")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")

/** The line diff of two texts given as lines: a longest-common-subsequence alignment. */
export const diffLines = (before: ReadonlyArray<string>, after: ReadonlyArray<string>): ReadonlyArray<DiffLine> => {
  let start = 0
  while (start < before.length && start < after.length && before[start] === after[start]) start++
  let endA = before.length
  let endB = after.length
  while (endA > start && endB > start && before[endA - 1] === after[endB - 1]) {
    endA--
    endB--
  }
  const out: Array<DiffLine> = []
  for (let i = 0; i < start; i++) out.push({ op: "same", text: before[i]!, oldNo: i + 1, newNo: i + 1 })
  const a = before.slice(start, endA)
  const b = after.slice(start, endB)
  const n = a.length
  const m = b.length
  if (n * m > MAX_CELLS) {
    a.forEach((t, i) => out.push({ op: "del", text: t, oldNo: start + i + 1, newNo: null }))
    b.forEach((t, j) => out.push({ op: "ins", text: t, oldNo: null, newNo: start + j + 1 }))
  } else {
    // lcs[i][j]: length of the LCS of a[i..] and b[j..], in one flat array.
    const w = m + 1
    const lcs = new Uint32Array((n + 1) * w)
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * w + j] = a[i] === b[j] ? lcs[(i + 1) * w + j + 1]! + 1 : Math.max(lcs[(i + 1) * w + j]!, lcs[i * w + j + 1]!)
      }
    }
    let i = 0
    let j = 0
    while (i < n || j < m) {
      if (i < n && j < m && a[i] === b[j]) {
        out.push({ op: "same", text: a[i]!, oldNo: start + i + 1, newNo: start + j + 1 })
        i++
        j++
      } else if (i < n && (j === m || lcs[(i + 1) * w + j]! >= lcs[i * w + j + 1]!)) {
        out.push({ op: "del", text: a[i]!, oldNo: start + i + 1, newNo: null })
        i++
      } else {
        out.push({ op: "ins", text: b[j]!, oldNo: null, newNo: start + j + 1 })
        j++
      }
    }
  }
  const shift = endA - start
  const shiftB = endB - start
  for (let k = 0; k < before.length - endA; k++) {
    out.push({ op: "same", text: before[endA + k]!, oldNo: start + shift + k + 1, newNo: start + shiftB + k + 1 })
  }
  return out
}
