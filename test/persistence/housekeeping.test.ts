/**
 * Housekeeping of the bookkeeping tables on a real PostgreSQL: request counters of ended windows
 * and edit counters of past days go, in batches; current ones stay, and so does a counter a lease
 * moves to a new window while the sweep waits for it; the schedule runs by itself; activity
 * entries go only when pruned.
 */
import { openDatabase, type OrmDatabase } from "@content-site/orm"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { middayToday, testClock } from "../support/clock.ts"
import { createTestDatabase } from "../support/databases.ts"
import { eventually } from "../support/eventually.ts"

const DAY = 86_400_000
/** Every instance's clock here: it stands at midday, so no day or month ends during a test. */
const clock = testClock(middayToday())
const today = () => new Date(clock.now()).toISOString().slice(0, 10)
const daysAgo = (n: number) => new Date(clock.now() - n * DAY).toISOString().slice(0, 10)
/** The first instant of the month `back` months before the clock's (negative: ahead). */
const month = (back: number) => new Date(Date.UTC(new Date(clock.now()).getUTCFullYear(), new Date(clock.now()).getUTCMonth() - back, 1))
const partitionOf = (m: Date) => `activity_p${m.getUTCFullYear()}${String(m.getUTCMonth() + 1).padStart(2, "0")}`

describe("housekeeping on PostgreSQL", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let db: OrmDatabase
  let admin: pg.Client
  const keys = async (table: "limit_counters", like: string) =>
    (await admin.query<{ key: string }>(`select key from ${table} where key like $1 order by key`, [like])).rows.map((r) => r.key)

  beforeAll(async () => {
    database = await createTestDatabase()
    db = await openDatabase({ databaseUrl: database.url, housekeepingIntervalMs: 0, now: clock.now })
    admin = new pg.Client({ connectionString: database.url })
    await admin.connect()
  })
  afterAll(async () => {
    await admin?.end()
    await db?.close()
    await database?.drop()
  })

  it("should delete request counters of ended windows and edit counters of past days, and keep current ones", async () => {
    const now = clock.now()
    await admin.query(
      `insert into limit_counters (key, window_start, count) values
        ('hk:old', $1, 5), ('hk:two-days', $2, 5), ('hk:hour', $3, 5), ('hk:now', $4, 5)`,
      [now - 3 * DAY, now - 2 * DAY - 60_000, now - 3_600_000, now - 1_000],
    )
    await admin.query(
      `insert into edit_counters (account_id, day, count) values ('acc_hk', $1, 3), ('acc_hk', $2, 3), ('acc_hk', $3, 3), ('acc_hk', $4, 3)`,
      [daysAgo(10), daysAgo(3), daysAgo(1), today()],
    )
    const swept = await db.sweepCounters()
    expect(swept).toEqual({ limitCounters: 2, editCounters: 2, idempotencyKeys: 0, termChanges: 0 })
    expect(await keys("limit_counters", "hk:%")).toEqual(["hk:hour", "hk:now"])
    const days = (await admin.query<{ day: string }>("select day from edit_counters where account_id = 'acc_hk' order by day")).rows.map((r) => r.day)
    expect(days).toEqual([daysAgo(1), today()])
    // nothing left to do: a second run deletes nothing
    expect(await db.sweepCounters()).toEqual({ limitCounters: 0, editCounters: 0, idempotencyKeys: 0, termChanges: 0 })
  })

  it("should delete idempotency keys past their 24 hours and keep live ones", async () => {
    const at = (ms: number) => new Date(ms).toISOString()
    const now = clock.now()
    await admin.query(
      `insert into idempotency_keys (account_id, key, fingerprint, status, headers, body, lease_until, expires_at) values
        ('acc_hk', 'expired', 'f', 200, '{}', '{}', $1, $1), ('acc_hk', 'pending-expired', 'f', null, null, null, $1, $1),
        ('acc_hk', 'live', 'f', 200, '{}', '{}', $2, $3)`,
      [at(now - 60_000), at(now - 30_000), at(now + 86_000_000)],
    )
    expect((await db.sweepCounters()).idempotencyKeys).toBe(2)
    const left = (await admin.query<{ key: string }>("select key from idempotency_keys where account_id = 'acc_hk'")).rows.map((r) => r.key)
    expect(left).toEqual(["live"])
  })

  it("should delete any number of stale rows in one run, batch after batch", async () => {
    await admin.query(
      `insert into limit_counters (key, window_start, count) select 'hk:bulk:' || i, $1, 1 from generate_series(1, 12345) as i`,
      [clock.now() - 5 * DAY],
    )
    expect((await db.sweepCounters()).limitCounters).toBe(12_345)
    expect(await keys("limit_counters", "hk:bulk:%")).toEqual([])
  })

  it("should keep a counter that a lease moves to a new window while the sweep waits for its row", async () => {
    await admin.query("insert into limit_counters (key, window_start, count) values ('hk:racing', $1, 7)", [clock.now() - 3 * DAY])
    const lease = new pg.Client({ connectionString: database.url })
    await lease.connect()
    try {
      await lease.query("begin")
      await lease.query("update limit_counters set window_start = $1, count = 1 where key = 'hk:racing'", [clock.now()])
      // the sweep picks the row as stale, then waits for the lease's row lock
      const sweeping = db.sweepCounters()
      const waiting = async () =>
        (
          await admin.query<{ n: number }>(
            "select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'",
            [database.name],
          )
        ).rows[0]!.n
      expect(await eventually(waiting, (n) => n > 0)).toBeGreaterThan(0)
      await lease.query("commit")
      await sweeping
    } finally {
      await lease.end()
    }
    const row = (await admin.query<{ count: number }>("select count from limit_counters where key = 'hk:racing'")).rows[0]
    expect(row?.count).toBe(1)
  })

  it("should sweep on its own schedule", async () => {
    const scheduled = await openDatabase({ databaseUrl: database.url, housekeepingIntervalMs: 100, now: clock.now })
    try {
      await admin.query("insert into limit_counters (key, window_start, count) values ('hk:scheduled', $1, 1)", [clock.now() - 3 * DAY])
      expect(await eventually(() => keys("limit_counters", "hk:scheduled"), (left) => left.length === 0)).toEqual([])
    } finally {
      await scheduled.close()
    }
  })

  it("should leave the activity log alone and delete entries only when pruned, the older ones", async () => {
    const insert = (id: string, at: Date) =>
      admin.query(
        `insert into activity (id, account_id, at, channel, actor, action, status, duration_ms, request_id)
         values ($1, null, $2, 'api', null, 'GET /api/v1/sites', '200', 1, $1)`,
        [id, at.toISOString()],
      )
    await insert("act_hk_old", new Date(clock.now() - 400 * DAY))
    await insert("act_hk_new", new Date(clock.now() - DAY))
    await db.sweepCounters()
    const ids = async () => (await admin.query<{ id: string }>("select id from activity where id like 'act_hk_%' order by id")).rows.map((r) => r.id)
    expect(await ids()).toEqual(["act_hk_new", "act_hk_old"])
    expect(await db.pruneActivity(new Date(clock.now() - 365 * DAY))).toEqual({ deleted: 1, droppedPartitions: [] })
    expect(await ids()).toEqual(["act_hk_new"])
  })

  it("should prune whole months by dropping their partitions, and the rows of the month the cut falls in", async () => {
    // two past months of their own (as housekeeping made them when they were ahead)
    for (const back of [3, 2]) {
      await admin.query(`create table ${partitionOf(month(back))} partition of activity for values from ('${month(back).toISOString()}') to ('${month(back - 1).toISOString()}')`)
    }
    const insert = (id: string, at: Date) =>
      admin.query(
        `insert into activity (id, account_id, at, channel, actor, action, status, duration_ms, request_id)
         values ($1, null, $2, 'api', null, 'GET /api/v1/sites', '200', 1, $1)`,
        [id, at.toISOString()],
      )
    await insert("act_pm_3a", new Date(month(3).getTime() + DAY))
    await insert("act_pm_3b", new Date(month(3).getTime() + 2 * DAY))
    await insert("act_pm_2a", new Date(month(2).getTime() + DAY))
    await insert("act_pm_2b", new Date(month(2).getTime() + 20 * DAY))
    // the cut falls inside the month two back: the month three back goes whole, one row of the other
    const pruned = await db.pruneActivity(new Date(month(2).getTime() + 10 * DAY))
    expect(pruned).toEqual({ deleted: 3, droppedPartitions: [partitionOf(month(3))] })
    const left = await admin.query<{ id: string }>("select id from activity where id like 'act_pm_%' order by id")
    expect(left.rows.map((r) => r.id)).toEqual(["act_pm_2b"])
    const tables = await admin.query<{ name: string }>("select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'activity'::regclass")
    expect(tables.rows.map((r) => r.name)).not.toContain(partitionOf(month(3)))
    expect(tables.rows.map((r) => r.name)).toContain(partitionOf(month(2)))
  })

  it("should create the coming months' partitions when housekeeping runs", async () => {
    const name = partitionOf(month(-2))
    const sweeping = await openDatabase({ databaseUrl: database.url, housekeepingIntervalMs: 50, now: clock.now })
    try {
      // gone after the start (which makes the months ahead too): only a housekeeping run brings it back
      await admin.query(`drop table ${name}`)
      const made = async () =>
        (await admin.query("select 1 from pg_class where relname = $1", [name])).rowCount === 1
      expect(await eventually(made, (m) => m)).toBe(true)
    } finally {
      await sweeping.close()
    }
  })

  it("should leave a month whose rows the default partition holds there, and say so in the service's log", async () => {
    const name = partitionOf(month(-2))
    await admin.query(`drop table ${name}`)
    const at = new Date(month(-2).getTime() + DAY)
    await admin.query(
      `insert into activity (id, account_id, at, channel, actor, action, status, duration_ms, request_id)
       values ('act_hk_default', null, $1, 'api', null, 'GET /api/v1/sites', '200', 1, 'act_hk_default')`,
      [at.toISOString()],
    )
    const warnings: Array<{ fields: object; message: string }> = []
    const log = { info: () => {}, warn: (fields: object, message: string) => void warnings.push({ fields, message }), error: () => {} }
    try {
      const started = await openDatabase({ databaseUrl: database.url, housekeepingIntervalMs: 0, now: clock.now, log })
      await started.close()
      expect(warnings).toContainEqual({ fields: { partition: name }, message: `activity: the month ${name} stays in activity_default, which holds rows of it already` })
    } finally {
      await admin.query("delete from activity where id = 'act_hk_default'")
      await admin.query(`create table if not exists ${name} partition of activity for values from ('${month(-2).toISOString()}') to ('${month(-3).toISOString()}')`)
    }
  })
})
