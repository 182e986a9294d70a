/**
 * The nesting of JSON a request body may have, and the scan that tells it before the body is
 * parsed: REST's bodies and MCP's messages alike (a message of a few million brackets held the
 * event loop for seconds in `JSON.parse` and built hundreds of MiB of arrays).
 */

/** Largest nesting of arrays/objects accepted in a JSON body. */
export const MAX_JSON_DEPTH = 32

/**
 * Most structural characters (`{`, `[`, `,` and `:` outside strings) a JSON body may hold: about
 * as many values and keys. `JSON.parse` costs half a microsecond a value, so a body at this bound
 * holds the event loop for some 35 ms, where 16 MiB of `{},` held it 3 s; a full MCP batch of 100
 * `edit_article` calls of 100 edits each has about 52 000, a REST body a few hundred.
 */
export const MAX_JSON_TOKENS = 65_536

/**
 * Which bound JSON text passes first, in one scan before it is parsed: `depth`, arrays and objects
 * nested deeper than `maxDepth`; `tokens`, more than `maxTokens` of `{`, `[`, `,` and `:` outside
 * its strings; or undefined. Strings are skipped with `indexOf` to their closing quote (one not
 * preceded by an odd run of backslashes), so a body's megabyte of HTML inside one string is passed
 * natively, not character by character; each character is still looked at a bounded number of
 * times (a backslash run once, for the quote after it): linear in the text, stopping at a bound.
 */
export const jsonBoundPassed = (text: string, maxDepth: number, maxTokens: number): "depth" | "tokens" | undefined => {
  let depth = 0
  let tokens = 0
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 34) {
      let end = i
      for (;;) {
        end = text.indexOf('"', end + 1)
        if (end === -1) return undefined // an unterminated string: JSON.parse says so
        let b = end - 1
        while (text.charCodeAt(b) === 92) b--
        if ((end - 1 - b) % 2 === 0) break
      }
      i = end
    } else if (c === 123 || c === 91) {
      if (++depth > maxDepth) return "depth"
      if (++tokens > maxTokens) return "tokens"
    } else if (c === 125 || c === 93) depth--
    else if (c === 44 || c === 58) {
      if (++tokens > maxTokens) return "tokens"
    }
  }
  return undefined
}

/** Whether JSON text nests arrays and objects deeper than `max` (`jsonBoundPassed`'s depth alone). */
export const jsonDepthExceeds = (text: string, max: number): boolean => jsonBoundPassed(text, max, Number.POSITIVE_INFINITY) === "depth"

/** Whether JSON text holds more than `max` of `{`, `[`, `,` and `:` outside its strings (`jsonBoundPassed`'s count alone). */
export const jsonTokensExceed = (text: string, max: number): boolean => jsonBoundPassed(text, Number.POSITIVE_INFINITY, max) === "tokens"
