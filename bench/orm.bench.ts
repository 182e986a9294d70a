/**
 * The ORM adapter against raw `pg` on the same PostgreSQL database, in the same run:
 * - an article read through the ArticleRepository (parameterised SQL on the ORM's pg pool, mapping
 *   to the core record) against `SELECT ... WHERE id = $1 AND account_id = $2` on a pg Pool;
 * - the other storage calls of an authenticated REST GET (LimitStore.peek/hit,
 *   ApiKeyRepository.findByHash, ActivityLog.record), on PostgreSQL and on embedded PGlite;
 * - one edit through the ArticleWriter (row lock, plan, budget upsert, revision, article update,
 *   activity) against the same statements in a hand-written pg transaction.
 * Prints per-operation times and the ratios. Not a test: nothing asserts a time.
 */
import {
  ActivityLog,
  ApiKeyRepository,
  ArticleRepository,
  ArticleWriter,
  DataImporter,
  LimitStore,
  type ActivityRecord,
  type ImportPlan,
} from "@content-site/core"
import { openDatabase, type OrmDatabase } from "@content-site/orm"
import { Effect, ManagedRuntime } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { changeOf, worldPlan, bigBudget } from "../test/persistence/fixtures/world.ts"
import { createTestDatabase } from "../test/support/databases.ts"

const READS = 2000
const EDITS = 300
const PGLITE_READS = 1000

/** The world plus one API key, for the auth lookup. */
const benchPlan = (accountId: string): ImportPlan => {
  const plan = worldPlan(accountId, 2)
  return {
    ...plan,
    apiKeys: [
      {
        id: `${accountId}_key`,
        account_id: accountId,
        name: "bench",
        scope: "write",
        key_hash: `${accountId}_hash`,
        created_at: "2026-11-01T00:00:00.000Z",
        last_used_at: null,
        revoked_at: null,
      },
    ],
  }
}

const activityOf = (accountId: string, i: number, label: string): ActivityRecord => ({
  id: `act_${label}_${i}_${Date.now().toString(36)}`,
  account_id: accountId,
  at: new Date().toISOString(),
  channel: "api",
  actor: { type: "api_key", id: `${accountId}_key`, name: "bench" },
  action: "GET /api/v1/articles/{id}",
  site_id: null,
  article_id: `${accountId}_art0`,
  status: 200,
  error_code: null,
  duration_ms: 1,
  request_id: `req_${label}_${i}_${Date.now().toString(36)}`,
  count: 1,
})

/** The storage calls of an authenticated GET, one by one, on an open database. */
const hotPath = async (db: OrmDatabase, accountId: string, n: number, label: string) => {
  const runtime = ManagedRuntime.make(db.layer)
  try {
    await runtime.runPromise(DataImporter.use((i) => i.apply(benchPlan(accountId))))
    const rows = [
      await measure(`${label}: ArticleRepository.get`, n, () =>
        runtime.runPromise(ArticleRepository.use((r) => r.get(accountId, `${accountId}_art0`))),
      ),
      await measure(`${label}: ApiKeyRepository.findByHash`, n, () =>
        runtime.runPromise(ApiKeyRepository.use((r) => r.findByHash(`${accountId}_hash`))),
      ),
      await measure(`${label}: LimitStore.peek`, n, () => runtime.runPromise(LimitStore.use((l) => l.peek(`ip:${label}`, 10, 60)))),
      await measure(`${label}: LimitStore.hit`, n, () => runtime.runPromise(LimitStore.use((l) => l.hit(`key:${label}`, 1e9, 60)))),
      await measure(`${label}: ActivityLog.record`, n, (i) =>
        runtime.runPromise(ActivityLog.use((l) => l.record(activityOf(accountId, i, label)))),
      ),
    ]
    return rows
  } finally {
    await runtime.dispose()
  }
}

const measure = async (label: string, n: number, f: (i: number) => Promise<unknown>) => {
  for (let i = 0; i < Math.min(50, n); i++) await f(i) // warm-up
  const times: Array<number> = []
  const start = performance.now()
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await f(i)
    times.push(performance.now() - t)
  }
  const total = performance.now() - start
  times.sort((a, b) => a - b)
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!
  return { label, n, mean: total / n, p50: q(0.5), p95: q(0.95) }
}

type Row = Awaited<ReturnType<typeof measure>>
const fmt = (ms: number) => `${(ms * 1000).toFixed(0).padStart(7)} µs`
const line = (r: Row) => `  ${r.label.padEnd(44)} n=${String(r.n).padEnd(5)} mean ${fmt(r.mean)}  p50 ${fmt(r.p50)}  p95 ${fmt(r.p95)}`

export async function run(): Promise<void> {
  const database = await createTestDatabase()
  const db = await openDatabase({ databaseUrl: database.url })
  const runtime = ManagedRuntime.make(db.layer)
  const pool = new pg.Pool({ connectionString: database.url, max: 10 })
  try {
    await runtime.runPromise(DataImporter.use((i) => i.apply(worldPlan("acc_bench", 2))))
    const ormArticle = "acc_bench_art0"
    const rawArticle = "acc_bench_art1"

    const ormRead = await measure("read: ArticleRepository.get (adapter)", READS, () =>
      runtime.runPromise(ArticleRepository.use((r) => r.get("acc_bench", ormArticle))),
    )
    const rawRead = await measure("read: raw pg SELECT of the same row", READS, () =>
      pool.query("select * from articles where id = $1 and account_id = $2", [rawArticle, "acc_bench"]),
    )

    const pgHot = await hotPath(db, "acc_hot", READS, "pg")

    const ormEdit = await measure("edit: ArticleWriter.change (MikroORM tx)", EDITS, (i) =>
      runtime.runPromise(
        ArticleWriter.use((w) => w.change("acc_bench", ormArticle, bigBudget, (c) => Effect.succeed(changeOf(c, `orm ${i}`)))),
      ),
    )
    const rawEdit = await measure("edit: raw pg transaction, same statements", EDITS, async (i) => {
      const client = await pool.connect()
      try {
        await client.query("begin")
        await client.query("set local lock_timeout = 5000")
        const { rows } = await client.query("select * from articles where id = $1 and account_id = $2 for update", [rawArticle, "acc_bench"])
        const current = rows[0] as { revision: number; site_id: string; featured_image: null }
        const change = changeOf(
          { id: rawArticle, account_id: "acc_bench", site_id: current.site_id, featured_image: null } as never,
          `raw ${i}`,
        )
        const used = await client.query(
          `insert into edit_counters (account_id, day, count) values ($1, $2, 1)
           on conflict (account_id, day) do update set count = edit_counters.count + 1 returning count`,
          ["acc_bench_raw", bigBudget.day],
        )
        if (Number(used.rows[0].count) > bigBudget.limit) throw new Error("budget")
        const number = current.revision + 1
        await client.query(
          `insert into revisions (id, account_id, article_id, number, origin, title, body, featured_image, reason, actor, restored_from, created_at)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
          [change.revision.id, "acc_bench", rawArticle, number, change.revision.origin, change.title, change.body, null, null, JSON.stringify(change.revision.actor), null, change.revision.created_at],
        )
        await client.query(
          "update articles set title = $1, body = $2, word_count = $3, featured_image = $4, updated_at = $5, revision = $6 where id = $7",
          [change.title, change.body, change.word_count, null, change.updated_at, number, rawArticle],
        )
        const a = change.activity!
        await client.query(
          `insert into activity (id, account_id, at, channel, actor, action, site_id, article_id, status, error_code, duration_ms, request_id)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) on conflict (channel, request_id, at) do nothing`,
          [a.id, a.account_id, a.at, a.channel, JSON.stringify(a.actor), a.action, a.site_id, a.article_id, String(a.status), a.error_code, a.duration_ms, a.request_id],
        )
        await client.query("commit")
      } catch (e) {
        await client.query("rollback")
        throw e
      } finally {
        client.release()
      }
    })

    console.log("PostgreSQL (127.0.0.1), sequential, one operation at a time:")
    for (const r of [ormRead, rawRead, ...pgHot, ormEdit, rawEdit]) console.log(line(r))
    console.log(`  ratio read  ORM / raw pg: mean ${(ormRead.mean / rawRead.mean).toFixed(2)}x, p50 ${(ormRead.p50 / rawRead.p50).toFixed(2)}x, p95 ${(ormRead.p95 / rawRead.p95).toFixed(2)}x`)
    console.log(`  ratio edit  ORM / raw pg: mean ${(ormEdit.mean / rawEdit.mean).toFixed(2)}x, p50 ${(ormEdit.p50 / rawEdit.p50).toFixed(2)}x, p95 ${(ormEdit.p95 / rawEdit.p95).toFixed(2)}x`)
  } finally {
    await pool.end()
    await runtime.dispose()
    await db.close()
    await database.drop()
  }

  const dir = await mkdtemp(join(tmpdir(), "cs-bench-pglite-"))
  const lite = await openDatabase({ dataDir: dir })
  try {
    const liteHot = await hotPath(lite, "acc_lite", PGLITE_READS, "pglite")
    console.log("Embedded PGlite, sequential, one operation at a time:")
    for (const r of liteHot) console.log(line(r))
  } finally {
    await lite.close()
    await rm(dir, { recursive: true, force: true })
  }
}
