/**
 * The nesting of JSON a request body may have, and the scan that tells it before the body is
 * parsed: REST's bodies and MCP's messages alike (a message of a few million brackets held the
 * event loop for seconds in `JSON.parse` and built hundreds of MiB of arrays).
 */

/** Largest nesting of arrays/objects accepted in a JSON body. */
export const MAX_JSON_DEPTH = 32

/**
 * Whether JSON text nests arrays and objects deeper than `max`. Strings are skipped with
 * `indexOf` to their closing quote (one not preceded by an odd run of backslashes), so a body's
 * megabyte of HTML inside one string is passed natively, not character by character; each
 * character is still looked at a bounded number of times (a backslash run once, for the quote
 * after it): linear in the text.
 */
export const jsonDepthExceeds = (text: string, max: number): boolean => {
  let depth = 0
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 34) {
      let end = i
      for (;;) {
        end = text.indexOf('"', end + 1)
        if (end === -1) return false // an unterminated string: JSON.parse says so
        let b = end - 1
        while (text.charCodeAt(b) === 92) b--
        if ((end - 1 - b) % 2 === 0) break
      }
      i = end
    } else if (c === 123 || c === 91) {
      if (++depth > max) return true
    } else if (c === 125 || c === 93) depth--
  }
  return false
}
