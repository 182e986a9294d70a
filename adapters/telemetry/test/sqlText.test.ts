/** A traced statement's text keeps its shape and loses its string literals. */
import { describe, expect, it } from "vitest"
import { sqlWithoutLiterals, TRACED_SQL_CHARACTERS } from "../src/sqlText.ts"

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
})
