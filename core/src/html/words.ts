/**
 * Whether a UTF-16 code unit is Unicode `White_Space` (all such characters are in the BMP):
 * U+0009-U+000D, U+0020, U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F,
 * U+205F, U+3000. A test pins this to `/\p{White_Space}/u`.
 */
export const isWhiteSpace = (c: number): boolean =>
  c <= 0x20
    ? c === 0x20 || (c >= 0x09 && c <= 0x0d)
    : c >= 0x85 &&
      (c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 ||
        c === 0x202f || c === 0x205f || c === 0x3000)

/** Whether a UTF-16 code unit is HTML's ASCII white space: tab, line feed, form feed, carriage return, space. */
export const isHtmlSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d

/**
 * The text without HTML's ASCII white space at either end. One pass in from each end, so linear
 * in the text: `/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g` would retry its `$` branch from every space of
 * a run inside the text, quadratic in the run's length.
 */
export const trimHtmlSpace = (s: string): string => {
  let start = 0
  let end = s.length
  while (start < end && isHtmlSpace(s.charCodeAt(start))) start++
  while (end > start && isHtmlSpace(s.charCodeAt(end - 1))) end--
  return s.slice(start, end)
}

/** Counts words across consecutive text chunks: a word may continue from one chunk into the next. */
export interface WordCounter {
  /** Feeds the next chunk of text. */
  readonly add: (text: string) => void
  /** Ends the current word: a block boundary such as `</p><p>` separates words like whitespace. */
  readonly boundary: () => void
  /** The number of words fed so far. */
  readonly count: () => number
}

/** A word counter that splits on Unicode whitespace (`White_Space`), as `"word count"` does. */
export const makeWordCounter = (): WordCounter => {
  let words = 0
  let inWord = false
  return {
    add: (text) => {
      for (let i = 0; i < text.length; i++) {
        if (isWhiteSpace(text.charCodeAt(i))) inWord = false
        else if (!inWord) {
          inWord = true
          words++
        }
      }
    },
    boundary: () => {
      inWord = false
    },
    count: () => words,
  }
}

/**
 * Elements whose start and end separate words, as a reader sees them (and as `innerText` lays
 * them out): `<p>a</p><p>b</p>` is two words, while inline markup (`a<b>b</b>`) joins text.
 */
export const WORD_BOUNDARY_ELEMENTS: ReadonlySet<string> = new Set([
  "address", "article", "aside", "blockquote", "br", "caption", "dd", "details", "div", "dl", "dt",
  "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "img", "li",
  "main", "ol", "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead",
  "tr", "ul",
])
