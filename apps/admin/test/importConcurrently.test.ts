/**
 * Two imports at once on one PostgreSQL database (two operators, two scripts): the ownership
 * checks and the writes are one step, so an id one import is creating for its account is never
 * taken over by the other import's rows (a site's articles written for another account).
 */
import { importData, Settings } from "@content-site/core"
import { openDatabase, type OrmDatabase } from "@content-site/orm"
import { nodePlatform } from "@content-site/platform"
import { Exit, Layer, ManagedRuntime } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTempDir, createTestDatabase } from "../../../test/support/databases.ts"

const fileOf = (n: number) => ({
  accounts: [
    {
      id: `acc_race_${n}`,
      email: `race${n}@example.test`,
      password: `race-password-${n}`,
      sites: [
        {
          id: "site_race",
          name: `Race ${n}`,
          url: "https://race.test",
          articles: [{ id: `art_race_${n}`, title: `Race ${n}`, url: `https://race.test/${n}`, status: "published", body: "<p>x</p>" }],
          backlinks: [{ id: `bl_race_${n}`, date_acquired: "2026-10-05", source_domain: "news.test", source_url: "https://news.test/p", target_url: "https://race.test/", anchor_text: "x", anchor_type: "exact", category: "industry" }],
        },
      ],
    },
  ],
})

describe("two imports at the same moment (PostgreSQL)", { timeout: 120_000 }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  const temp = createTempDir("cs-import-race-")
  const dbs: Array<OrmDatabase> = []
  const runtimes: Array<ManagedRuntime.ManagedRuntime<any, any>> = []

  beforeAll(async () => {
    database = await createTestDatabase()
    // two processes' worth: two databases opened separately, each with its own pool
    for (let i = 0; i < 2; i++) {
      const db = await openDatabase({ databaseUrl: database.url, dataDir: temp.dir, housekeepingIntervalMs: 0 })
      dbs.push(db)
      const settings = Layer.succeed(Settings, { publicUrl: "http://localhost", limits: {} as never })
      runtimes.push(ManagedRuntime.make(Layer.mergeAll(db.layer, nodePlatform({ N: 2 ** 10, r: 8, p: 1 }), settings)))
    }
  })
  afterAll(async () => {
    for (const r of runtimes) await r.dispose()
    for (const db of dbs) await db.close()
    await database?.drop()
    temp.remove()
  })

  it("should never write one account's rows under another account's site: one import succeeds, the other is refused naming the site", async () => {
    for (let round = 0; round < 5; round++) {
      const client = new pg.Client({ connectionString: database.url })
      await client.connect()
      try {
        await client.query("truncate accounts, api_keys, sites, articles, revisions, backlinks cascade")
        const files = [fileOf(2 * round), fileOf(2 * round + 1)]
        const exits = await Promise.all(files.map((f, i) => runtimes[i]!.runPromiseExit(importData(f) as never)))
        const crossed = await client.query(
          `select 'article' as kind, a.id from articles a join sites s on s.id = a.site_id where a.account_id <> s.account_id
           union all select 'backlink', b.id from backlinks b join sites s on s.id = b.site_id where b.account_id <> s.account_id`,
        )
        expect(crossed.rows).toEqual([])
        expect(exits.filter(Exit.isSuccess)).toHaveLength(1)
        const refused = exits.find(Exit.isFailure)!
        expect(JSON.stringify(refused)).toContain("the site id 'site_race' belongs to another account already")
      } finally {
        await client.end()
      }
    }
  })
})
