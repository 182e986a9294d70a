/**
 * Instances that open one new PostgreSQL database at once (a deployment's replicas, or
 * `admin migrate` beside a server's start) each run the pending migrations: they take turns, so
 * every one opens and the migrations are applied once, where all but one failed on the tables and
 * types the first had just made ("duplicate key value violates unique constraint
 * pg_type_typname_nsp_index", exit code 2 for `admin migrate`).
 */
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openDatabase, type OrmDatabase } from "../src/index.ts"
import type { OrmEventLog } from "../src/eventLog.ts"
import { createTempDir, createTestDatabase } from "../../../test/support/databases.ts"

describe("migrations run by several processes at once (postgresql)", { timeout: 120_000 }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  const temp = createTempDir("cs-migrate-")
  const opened: Array<OrmDatabase> = []

  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterAll(async () => {
    for (const db of opened) await db.close()
    await database?.drop()
    temp.remove()
  })

  it("should open every instance of a new database started at once, applying each migration once", async () => {
    const quiet: OrmEventLog = { info: () => {}, warn: () => {}, error: () => {} }
    const outcomes = await Promise.allSettled(
      [0, 1, 2, 3].map(() => openDatabase({ databaseUrl: database.url, dataDir: temp.dir, poolMax: 2, housekeepingIntervalMs: 0, log: quiet })),
    )
    for (const o of outcomes) if (o.status === "fulfilled") opened.push(o.value)
    expect(outcomes.map((o) => (o.status === "fulfilled" ? "opened" : String(o.reason)))).toEqual(["opened", "opened", "opened", "opened"])
    // and `admin migrate` on all of them at once finds nothing left to do
    await Promise.all(opened.map((db) => db.migrate()))
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      const { rows } = await client.query<{ n: number; distinct: number }>("select count(*)::int as n, count(distinct name)::int as distinct from mikro_orm_migrations")
      expect(rows[0]!.n).toBe(rows[0]!.distinct)
    } finally {
      await client.end()
    }
  })
})
