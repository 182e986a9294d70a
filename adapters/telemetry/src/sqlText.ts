/**
 * A statement's text as a trace may hold it: every string literal written as `'?'`. MikroORM writes
 * some statements' values into their text (its unit of work inlines parameters), among them the
 * OAuth store's tokens, codes and session ids: a trace must not carry them (a refresh token read
 * from a collector could be used). Numbers, names and the statement's shape stay.
 */

/** Characters of a statement kept in a trace, at most (the rest is cut: `…`). */
export const TRACED_SQL_CHARACTERS = 4096

/** Where a string literal may begin: a quote, or a dollar quote's opening tag. */
const LITERAL_START = /'|\$[A-Za-z_]?[A-Za-z0-9_]*\$/

/**
 * `text` with each string literal (`'...'` with `''` inside, `E'...'` with backslash escapes, and
 * `$tag$...$tag$`) replaced by `'?'`, cut after TRACED_SQL_CHARACTERS characters of output. Most
 * statements carry their values as parameters (`$1`) and hold no literal: one regular-expression
 * scan of the part that could be kept tells so, and the text is kept as it is (cut). Else one pass
 * over at most the first 64 Ki characters of the text: a literal still open there is replaced whole.
 */
export const sqlWithoutLiterals = (text: string): string => {
  // (a dollar quote's tag is read up to 64 characters on from where it starts)
  if (!LITERAL_START.test(text.slice(0, TRACED_SQL_CHARACTERS + 64))) return text.length > TRACED_SQL_CHARACTERS ? `${text.slice(0, TRACED_SQL_CHARACTERS)}…` : text
  return literalsReplaced(text)
}

/** `sqlWithoutLiterals`, character by character (exported for the tests, which hold the two to one answer). */
export const literalsReplaced = (text: string): string => {
  const end = Math.min(text.length, 64 * 1024)
  let out = ""
  let i = 0
  while (i < end && out.length < TRACED_SQL_CHARACTERS) {
    const c = text[i]!
    if (c === "'") {
      // E'...' escapes with backslashes; a plain literal only doubles its quotes
      const escapes = i > 0 && (text[i - 1] === "E" || text[i - 1] === "e")
      i++
      while (i < end) {
        if (escapes && text[i] === "\\") i += 2
        else if (text[i] === "'" && text[i + 1] === "'") i += 2
        else if (text[i] === "'") break
        else i++
      }
      i++
      out += "'?'"
      continue
    }
    if (c === "$") {
      const tag = /^\$[A-Za-z_]?[A-Za-z0-9_]*\$/.exec(text.slice(i, Math.min(end, i + 64)))
      if (tag !== null) {
        const close = text.indexOf(tag[0], i + tag[0].length)
        i = close === -1 || close >= end ? end : close + tag[0].length
        out += "'?'"
        continue
      }
    }
    out += c
    i++
  }
  return i < text.length || out.length > TRACED_SQL_CHARACTERS ? `${out.slice(0, TRACED_SQL_CHARACTERS)}…` : out
}
