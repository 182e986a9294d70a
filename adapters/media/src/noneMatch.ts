/** What reading an `If-None-Match` list found, and how many characters it read to find it. */
export interface NoneMatchScan {
  readonly named: boolean
  /** Characters read: at most the header's length plus one, whatever the header. */
  readonly reads: number
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09
/** `etagc` of RFC 9110 8.8.3 (as a Latin-1 header string holds it). */
const isEtagChar = (c: number): boolean => c === 0x21 || (c >= 0x23 && c <= 0x7e) || (c >= 0x80 && c <= 0xff)

/**
 * Reads an `If-None-Match` list (RFC 9110 13.1.2): whether it names `etag` (`*`, or a tag compared
 * weakly: `W/"x"` names `"x"`). A header that is not a list of entity tags (empty elements
 * allowed) names nothing. One pass: each character is read once, so a run of spaces before a
 * stray character costs its length, not its square (as the sticky regular expression
 * `[ \t]*(?:tag)?[ \t]*(,|$)` did, retrying every split of the run between its two quantifiers).
 */
export const scanNoneMatch = (header: string, etag: string): NoneMatchScan => {
  const wanted = etag.slice(1, -1)
  const n = header.length
  let at = 0
  let reads = 0
  const skipSpaces = () => {
    while (at < n) {
      reads++
      if (!isSpace(header.charCodeAt(at))) return
      at++
    }
  }
  skipSpaces()
  if (at < n && header[at] === "*") {
    at++
    skipSpaces()
    return { named: at === n, reads }
  }
  let named = false
  for (;;) {
    skipSpaces()
    if (at === n) return { named, reads }
    if (header[at] === "W" || header[at] === '"') {
      if (header[at] === "W") {
        if (header[at + 1] !== "/") return { named: false, reads }
        at += 2
        reads += 2
      }
      if (header[at] !== '"') return { named: false, reads }
      const from = ++at
      while (at < n) {
        reads++
        if (!isEtagChar(header.charCodeAt(at))) break
        at++
      }
      if (header[at] !== '"') return { named: false, reads }
      if (header.slice(from, at) === wanted) named = true
      at++
      skipSpaces()
      if (at === n) return { named, reads }
    }
    if (header[at] !== ",") return { named: false, reads }
    at++
  }
}

/** Whether a GET's `If-None-Match` names the image's entity tag (`scanNoneMatch`). */
export const noneMatchNames = (header: string, etag: string): boolean => scanNoneMatch(header, etag).named
