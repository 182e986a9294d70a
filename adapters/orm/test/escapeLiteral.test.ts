/**
 * The linear string literal that replaces MikroORM's character-at-a-time one: the same text as
 * the library's for any string, installed by `initOrm` (one path for both drivers; PGlite's
 * platform shares the method, and its first start costs seconds, so PostgreSQL stands for both
 * here), and read back unchanged by a real PostgreSQL.
 */
import { BasePostgreSqlPlatform } from "@mikro-orm/sql"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { escapeLiteral } from "../src/escapeLiteral.ts"
import { initOrm, type Orm } from "../src/orm.ts"
import { createTestDatabase } from "../../../test/support/databases.ts"

const libraryEscape = (text: string): string =>
  (BasePostgreSqlPlatform.prototype as unknown as { escapeLiteral: (t: string) => string }).escapeLiteral.call(null, text)

/** Strings made mostly of the characters the literal treats specially. */
const awkward = fc.string({ unit: fc.constantFrom("'", "\\", "a", "é", "\n", "?", "😀", '"', "E"), maxLength: 60 })

const samples = ["", "'", "\\", "it's", "a\\'b", "\\\\''", "E'x'", "?", "$1", "😀 ünïcödé", "line\nbreak\ttab", "'; drop table articles; --"]

describe("escapeLiteral", () => {
  it("should give exactly the library's literal for any string", () => {
    for (const s of samples) expect(escapeLiteral(s)).toBe(libraryEscape(s))
    fc.assert(
      fc.property(fc.oneof(awkward, fc.string({ unit: "binary", maxLength: 80 })), (s) => {
        expect(escapeLiteral(s)).toBe(libraryEscape(s))
      }),
    )
  })

  describe("on PostgreSQL", () => {
    let database: Awaited<ReturnType<typeof createTestDatabase>>
    let orm: Orm

    beforeAll(async () => {
      database = await createTestDatabase()
      orm = await initOrm({ databaseUrl: database.url, connectTimeoutMs: 5_000, statementTimeoutMs: 10_000 })
    })

    afterAll(async () => {
      await orm?.close(true)
      await database?.drop()
    })

    it("should be the platform's literal, and read back unchanged", async () => {
      expect((orm.em.getPlatform() as unknown as { escapeLiteral: unknown }).escapeLiteral).toBe(escapeLiteral)
      const em = orm.em.fork()
      for (const s of [...samples, `${"<p>x</p>".repeat(10_000)}\\'`]) {
        const rows = await em.execute<Array<{ v: string }>>("select ? as v", [s])
        expect(rows[0]?.v, s.slice(0, 20)).toBe(s)
      }
    })
  })
})
