/** A traced statement's text keeps its shape and loses its string literals. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { literalsReplaced, sqlWithoutLiterals, TRACED_SQL_CHARACTERS } from "../src/sqlText.ts"

describe("sqlWithoutLiterals", () => {
  it("should write every string literal as '?', quotes doubled inside, E-strings' escapes and dollar quotes too", () => {
    expect(sqlWithoutLiterals(`insert into "oauth_payloads" ("model", "id", "payload") values ('RefreshToken', 'GFJGhWYx-secret', '{"a":"it''s"}')`)).toBe(
      `insert into "oauth_payloads" ("model", "id", "payload") values ('?', '?', '?')`,
    )
    expect(sqlWithoutLiterals(String.raw`select E'a\'secret\'' as x, $tag$dollar 'secret'$tag$, $$also$$ where id = $1 and n = 42`)).toBe(
      "select E'?' as x, '?', '?' where id = $1 and n = 42",
    )
    expect(sqlWithoutLiterals("select 1")).toBe("select 1")
  })

  it("should replace a literal left open whole, and cut a long text", () => {
    expect(sqlWithoutLiterals("select 'never closed secret")).toBe("select '?'")
    const long = sqlWithoutLiterals(`select ${"x, ".repeat(5_000)}'secret'`)
    expect(long.length).toBe(TRACED_SQL_CHARACTERS + 1)
    expect(long.endsWith("…")).toBe(true)
    expect(long).not.toContain("secret")
  })

  it("should answer a statement without literals as the character-by-character pass does, at once", () => {
    const statement = `select ${"a.id, ".repeat(30)}b from articles a where a.id = any($1) and a.account_id = $2 limit $3`
    expect(sqlWithoutLiterals(statement)).toBe(statement)
    const pieces = fc.constantFrom("select ", "'", "''", "E'", "\\", "$", "$1", "$tag$", "$$", "$a_1$", "x", " ", "é", "\n")
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 40 }), fc.nat({ max: 4_200 }), (parts, pad) => {
        // padded so that some literals begin around the cut
        const text = `${"y".repeat(pad)}${parts.join("")}`
        expect(sqlWithoutLiterals(text)).toBe(literalsReplaced(text))
      }),
      { numRuns: 500 },
    )
  })
})
