/**
 * The activity log's totals on PostgreSQL come from per-day counts kept by triggers (plus the part
 * days at a range's ends): they must equal counting the rows, for any range, channel, insert by hand,
 * batched delete or dropped month.
 */
import { ActivityLog } from "@content-site/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openTestStore, type TestStore } from "../support/testStore.ts"

const DAY = 86_400_000
const ACCOUNT = "acc_counts"

describe("activity totals from per-day counts", () => {
  let store: TestStore
  /** Midnight (UTC) of today. */
  const today = Math.floor(Date.now() / DAY) * DAY

  beforeAll(async () => {
    store = await openTestStore()
    // by hand, in two statements: 3 days back to today, every 97 minutes, three channels, and another account
    for (const account of [ACCOUNT, "acc_other"]) {
      await store.admin.query(
        `insert into activity (id, account_id, at, channel, actor, action, status, duration_ms, request_id)
         select $1 || '_' || g, $1, $2::timestamptz + g * interval '97 minutes', (array['api', 'mcp', 'web'])[1 + g % 3], null, 'x', '200', 1, $1 || '_' || g
         from generate_series(0, 60) g`,
        [account, new Date(today - 3 * DAY).toISOString()],
      )
    }
  })
  afterAll(async () => {
    await store?.close()
  })

  const listed = (filter: { channel?: "api" | "mcp" | "web"; from?: string; to?: string }) =>
    store.runtime.runPromise(ActivityLog.use((l) => l.list(ACCOUNT, filter, { offset: 0, limit: 5 })))
  const counted = async (filter: { channel?: string; from?: string; to?: string }) =>
    (
      await store.admin.query<{ n: number }>(
        `select count(*)::int as n from activity where account_id = $1 and ($2::text is null or channel = $2)
           and ($3::timestamptz is null or at >= $3) and ($4::timestamptz is null or at <= $4)`,
        [ACCOUNT, filter.channel ?? null, filter.from ?? null, filter.to ?? null],
      )
    ).rows[0]!.n
  const iso = (ms: number) => new Date(ms).toISOString()
  const ranges = [
    {},
    { channel: "mcp" as const },
    { from: iso(today - 2 * DAY) },
    { to: iso(today - DAY - 1) },
    { from: iso(today - 2 * DAY), to: iso(today - 1) },
    { from: iso(today - 2 * DAY + 3_600_000), to: iso(today - 7_200_000) },
    { from: iso(today - DAY + 600_000), to: iso(today - DAY + 40_000_000), channel: "api" as const },
    { from: iso(today - 3 * DAY + 1), channel: "web" as const },
    { to: iso(today + 1) },
  ]

  it("should answer the same total as counting the rows, for whole days, part days and channels", async () => {
    for (const range of ranges) expect({ range, total: (await listed(range)).total }).toEqual({ range, total: await counted(range) })
  })

  it("should follow entries the journal writes, deletes and dropped months", async () => {
    for (let i = 0; i < 5; i++) {
      await store.runtime.runPromise(
        ActivityLog.use((l) =>
          l.record({ id: `act_cj_${i}`, account_id: ACCOUNT, at: new Date().toISOString(), channel: "mcp", actor: null, action: "get_article",
            site_id: null, article_id: null, status: "ok", error_code: null, duration_ms: 1, request_id: `cj_${i}`, count: 1 }),
        ),
      )
    }
    await store.db.flushActivity()
    await store.admin.query("delete from activity where account_id = $1 and at < $2 and channel = 'api'", [ACCOUNT, iso(today - 2 * DAY + 5 * 3_600_000)])
    for (const range of ranges) expect({ range, total: (await listed(range)).total }).toEqual({ range, total: await counted(range) })
    // a prune at the start of the month after the last entry (the rows by hand run to tomorrow
    // 01:00, which is next month's on a month's last day; the journal's are of now): every month
    // before goes whole, and all counts of its days with it
    const lastEntry = new Date(Math.max(today - 3 * DAY + 60 * 97 * 60_000, Date.now()))
    const monthAfter = new Date(Date.UTC(lastEntry.getUTCFullYear(), lastEntry.getUTCMonth() + 1, 1))
    await store.db.pruneActivity(monthAfter)
    expect((await listed({})).total).toBe(0)
    expect((await store.admin.query("select coalesce(sum(n), 0)::int as n from activity_counts")).rows[0].n).toBe(0)
  })
})
