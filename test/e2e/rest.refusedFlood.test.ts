/**
 * A flood of refused calls on PostgreSQL: every call is counted in the activity log, but past
 * REFUSED_ENTRIES_PER_MINUTE a minute from one address (or key) they are one entry carrying
 * `count`, not a row each.
 */
import { REFUSED_ENTRIES_PER_MINUTE as BUDGET } from "@content-site/core"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testClock } from "../support/clock.ts"
import { json, KEYS, startTestServer, type TestServer } from "./helpers.ts"

let t: TestServer
// The clock stands still: the flood stays in one minute.
const clock = testClock(Date.parse("2026-11-24T12:00:10.000Z"))
beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PER_MINUTE: "100000", AUTH_FAILURE_LIMIT_PER_MINUTE: "5" }, { now: clock.now })
})
afterAll(async () => {
  await t?.close()
})

const rows = async (sql: string, params: ReadonlyArray<unknown> = []) => {
  const client = new pg.Client({ connectionString: t.databaseUrl })
  await client.connect()
  try {
    return (await client.query(sql, [...params])).rows
  } finally {
    await client.end()
  }
}

describe("refused calls past their budget", () => {
  it("should log a bogus-key flood as the budget's entries and one carrying the count of the rest, a live key's refusals on its account", async () => {
    const calls = BUDGET + 30
    const statuses: Array<number> = []
    for (let i = 0; i < calls; i++) statuses.push((await t.api("/api/v1/sites", { key: `cs_bogus${String(i).padStart(32, "0")}` })).status)
    // 401 until the address's failure budget is spent, 429 after: all refused, all counted
    expect(statuses.slice(0, 5)).toEqual(Array(5).fill(401))
    expect(statuses.slice(5)).toEqual(Array(calls - 5).fill(429))
    // the same minute, account B's live key from that address: refused by the address's budget, on B's account
    for (let i = 0; i < BUDGET + 3; i++) expect((await t.api("/api/v1/sites", { key: KEYS.b })).status).toBe(429)
    // a minute later the address may call again; listing ships this instance's journal first
    clock.advance(60_000)
    const log = await json(await t.api("/api/v1/activity?per_page=100", { key: KEYS.b }))
    const anon = await rows("select count, status, error_code, request_id from activity where account_id is null and action = 'GET /api/v1/sites'")
    expect(anon).toHaveLength(BUDGET + 1)
    expect(anon.reduce((n: number, r: { count: number }) => n + r.count, 0)).toBe(calls)
    expect(anon.filter((r: { count: number }) => r.count > 1)).toEqual([
      { count: calls - BUDGET, status: "429", error_code: "rate_limited", request_id: expect.stringMatching(/^refused-/) },
    ])
    const refused = (log.data as Array<{ actor: { id: string } | null; count: number; error_code: string | null }>).filter((e) => e.error_code === "rate_limited")
    expect(refused).toHaveLength(BUDGET + 1)
    expect(refused.map((e) => e.count).sort((a, b) => b - a)).toEqual([3, ...Array(BUDGET).fill(1)])
    expect(refused.every((e) => e.actor?.id === "key_b")).toBe(true)
  })

  it("should give every other refusal of a key an entry of its own, however many", async () => {
    const ids: Array<string> = []
    for (let i = 0; i < BUDGET + 3; i++) {
      const res = await t.api("/api/v1/articles/art_a02", { method: "PUT", key: KEYS.aRead, headers: { "content-type": "application/json" }, body: JSON.stringify({ title: "x" }) })
      expect(res.status).toBe(403)
      ids.push(res.headers.get("x-request-id")!)
    }
    const log = await json(await t.api("/api/v1/activity?per_page=100"))
    const listed = new Set((log.data as Array<{ request_id: string; count: number }>).filter((e) => e.count === 1).map((e) => e.request_id))
    expect(ids.filter((id) => !listed.has(id))).toEqual([])
  })
})
