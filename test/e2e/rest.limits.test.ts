import { listActivity } from "@content-site/core"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../support/eventually.ts"
import { startServer, type StartedServer } from "../../apps/server/server.ts"
import { middayToday, testClock } from "../support/clock.ts"
import { json, KEYS, scratchDirs, startTestServer, type TestServer } from "./helpers.ts"

// Both instances run on a clock the test moves: no minute or UTC day ends unless the test says so.
const clock = testClock(middayToday())
let t: TestServer
let second: StartedServer
const dirs = scratchDirs()
beforeAll(async () => {
  const env = { RATE_LIMIT_PER_MINUTE: "5", DAILY_EDIT_LIMIT: "2", AUTH_FAILURE_LIMIT_PER_MINUTE: "3" }
  t = await startTestServer(env, { now: clock.now })
  // A second instance on the same database: limits are shared by every instance.
  second = await startServer({
    env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false", DATABASE_URL: t.databaseUrl, DATA_DIR: dirs.make(), ...env },
    now: clock.now,
    quiet: true,
  })
})
afterAll(async () => {
  await second?.close()
  await t?.close()
  dirs.removeAll()
})

const bCaller = (requestId: string) => ({
  accountId: "acc_b",
  actor: { type: "api_key" as const, id: "key_b", name: "b write" },
  scope: "write" as const,
  channel: "api" as const,
  requestId,
  action: "test",
  startedAt: Date.now(),
})

describe("request limit per account", () => {
  it("should count across instances, send RateLimit-* headers and refuse over the limit with 429 and Retry-After", async () => {
    const remaining: Array<string | null> = []
    for (let i = 0; i < 5; i++) {
      const base = i % 2 === 0 ? t.url : second.url
      const res = await fetch(`${base}/api/v1/sites`, { headers: { authorization: `Bearer ${KEYS.b}` } })
      expect(res.status).toBe(200)
      expect(res.headers.get("ratelimit-limit")).toBe("5")
      remaining.push(res.headers.get("ratelimit-remaining"))
    }
    expect(remaining).toEqual(["4", "3", "2", "1", "0"])
    const refused = await t.api("/api/v1/sites/site_b1/articles", { key: KEYS.b })
    expect(refused.status).toBe(429)
    const body = await json(refused)
    expect(body.code).toBe("rate_limited")
    // The clock stands 30 s into its minute: the window ends in 30 s.
    expect(refused.headers.get("retry-after")).toBe("30")
    expect(body.retry_after).toBe(30)
    expect(refused.headers.get("ratelimit-remaining")).toBe("0")
    expect(refused.headers.get("ratelimit-limit")).toBe("5")
    // A write refused so says only when to retry: no read of the day's edits for it.
    const write = await t.api("/api/v1/articles/art_b1?dry_run=true", { key: KEYS.b, method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ title: "x" }) })
    expect(write.status).toBe(429)
    expect(write.headers.get("retry-after")).toBe("30")
    expect(write.headers.get("edit-limit-remaining")).toBeNull()
    // The refused request is still logged.
    const log = await t.server.runtime.runPromise(listActivity(bCaller("req_test_log"), { per_page: 100 }))
    expect(log.data.find((e) => e.request_id === refused.headers.get("x-request-id"))).toMatchObject({
      status: 429,
      error_code: "rate_limited",
      action: "GET /api/v1/sites/{id}/articles",
    })
  })
})

describe("daily edit limit", () => {
  it("should count real changes only and refuse over the limit with 429 daily_edit_limit", async () => {
    const put = (title: string, query = "") =>
      t.api(`/api/v1/articles/art_a12${query}`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ title }) })
    const dry = await put("dry", "?dry_run=true")
    expect(dry.headers.get("edit-limit-remaining")).toBe("2")
    const one = await put("one")
    expect(one.headers.get("edit-limit-remaining")).toBe("1")
    const two = await put("two")
    expect(two.headers.get("edit-limit-remaining")).toBe("0")
    const three = await put("three")
    expect(three.status).toBe(429)
    const problem = await json(three)
    expect(problem.code).toBe("daily_edit_limit")
    expect(three.headers.get("edit-limit-remaining")).toBe("0")
    // The clock stands at 12:00:30 UTC: the day's budget comes back at midnight, 11 h 59 min 30 s away.
    expect(three.headers.get("retry-after")).toBe(String(12 * 3600 - 30))
    expect(problem.retry_after).toBe(12 * 3600 - 30)
    // The dry run of a change answers what the real call would, 429 included.
    const dryOver = await put("four", "?dry_run=true")
    expect(dryOver.status).toBe(429)
    expect((await json(dryOver)).code).toBe("daily_edit_limit")

    // The refusal is in the account's log, with its code, as a client reads it (in a new minute,
    // so the request budget does not hide it).
    clock.advance(60_000)
    // Nothing of the refused edits was written.
    expect((await json(await t.api("/api/v1/articles/art_a12"))).title).toBe("two")
    const log = await json(await t.api("/api/v1/activity?channel=api&per_page=100"))
    expect(log.data.find((e: { request_id: string }) => e.request_id === three.headers.get("x-request-id"))).toMatchObject({
      action: "PUT /api/v1/articles/{id}",
      status: 429,
      error_code: "daily_edit_limit",
      article_id: "art_a12",
    })

    // A new UTC day brings the budget back.
    clock.set(middayToday() + 12 * 3_600_000)
    const nextDay = await put("next day")
    expect(nextDay.status).toBe(200)
    expect(nextDay.headers.get("edit-limit-remaining")).toBe("1")
  })

  it("should answer a replayed write with the edits left now, not those left when it was first answered", async () => {
    clock.set(clock.now() + 86_400_000)
    const put = (title: string, headers: Record<string, string> = {}) =>
      t.api("/api/v1/articles/art_a13", { method: "PUT", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ title }) })
    const first = await put("replayed", { "idempotency-key": "replay-after-another-edit" })
    expect(first.headers.get("edit-limit-remaining")).toBe("1")
    expect((await put("another")).headers.get("edit-limit-remaining")).toBe("0")
    const replay = await put("replayed", { "idempotency-key": "replay-after-another-edit" })
    expect(replay.status).toBe(200)
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(replay.headers.get("edit-limit-remaining")).toBe("0")
  })
})

describe("unauthenticated failures per client address", () => {
  it("should refuse further attempts from an address after too many failures", async () => {
    const statuses: Array<number> = []
    const guesses: Array<string> = []
    for (let i = 0; i < 4; i++) {
      const guess = await t.api("/api/v1/sites", { key: `cs_guess${String(i).repeat(32)}` })
      statuses.push(guess.status)
      guesses.push(guess.headers.get("x-request-id")!)
    }
    expect(statuses).toEqual([401, 401, 401, 429])
    // Every API call is logged, refused ones before any account was known too: with no account
    // and no actor, so that they are in no account's view of the log.
    const db = new pg.Client({ connectionString: t.databaseUrl })
    await db.connect()
    try {
      const rows = await eventually(
        async () =>
          (
            await db.query<{ request_id: string; account_id: string | null; actor: unknown; channel: string; action: string; status: string; error_code: string }>(
              "select request_id, account_id, actor, channel, action, status, error_code from activity where request_id = any($1)",
              [guesses],
            )
          ).rows,
        (r) => r.length === 4,
        10_000,
      )
      const byRequest = new Map(rows.map((r) => [r.request_id, [r.account_id, r.actor, r.channel, r.action, r.status, r.error_code]]))
      expect(guesses.map((id) => byRequest.get(id))).toEqual([
        ...[0, 1, 2].map(() => [null, null, "api", "GET /api/v1/sites", "401", "unauthenticated"]),
        [null, null, "api", "GET /api/v1/sites", "429", "rate_limited"],
      ])
    } finally {
      await db.end()
    }
    const res = await t.api("/api/v1/sites", { key: "cs_guessguessguessguessguessguessguess" })
    expect(res.status).toBe(429)
    const refusal = await json(res)
    expect(refusal.code).toBe("rate_limited")
    expect(refusal.detail).toMatch(/^More than 3 failed authentications from this address in a minute; retry in \d+ s\.$/)
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0)

    // A live key from that address is refused the same way (or guessing would go on behind the
    // budget): the same answer as for a guess, nothing that tells the two apart ...
    const live = await t.api("/api/v1/sites/site_a1/articles", { key: KEYS.a })
    expect(live.status).toBe(429)
    expect((await json(live)).code).toBe("rate_limited")
    expect(live.headers.get("ratelimit-remaining")).toBeNull()
    expect(res.headers.get("ratelimit-remaining")).toBeNull()
    // ... and the refusal is logged on the key's account, naming the site in its path.
    const aCaller = { ...bCaller("req_test_log_a"), accountId: "acc_a", actor: { type: "api_key" as const, id: "key_a", name: "a write" } }
    const log = await t.server.runtime.runPromise(listActivity(aCaller, { per_page: 100 }))
    expect(log.data.find((e) => e.request_id === live.headers.get("x-request-id"))).toMatchObject({
      status: 429,
      error_code: "rate_limited",
      action: "GET /api/v1/sites/{id}/articles",
      site_id: "site_a1",
      actor: { type: "api_key", id: "key_a" },
    })
  })

  it("should answer no more guesses than the budget as such when a burst of them reaches both instances at once", async () => {
    // A later minute: a new window. Every guess reads the budget open before any is counted; the
    // count admits three, and the rest are refused for the budget, REST and MCP alike.
    clock.set(clock.now() + 60_000)
    const guess = (i: number) => {
      const key = `cs_burst${String(i).padStart(30, "0")}`
      return i % 2 === 0 ? t.api("/api/v1/sites", { key }) : fetch(`${second.url}/api/v1/sites`, { headers: { authorization: `Bearer ${key}` } })
    }
    const statuses = (await Promise.all(Array.from({ length: 10 }, (_, i) => guess(i)))).map((r) => r.status)
    expect(statuses.filter((s) => s === 401)).toHaveLength(3)
    expect(statuses.filter((s) => s === 429)).toHaveLength(7)

    clock.set(clock.now() + 60_000)
    const tokens = await Promise.all(
      Array.from({ length: 6 }, (_, i) => fetch(`${(i % 2 === 0 ? t.server : second).url}/mcp`, { method: "POST", headers: { authorization: `Bearer not.a.token${i}`, "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{}" })),
    )
    expect(tokens.map((r) => r.status).filter((s) => s === 401)).toHaveLength(3)
    expect(tokens.map((r) => r.status).filter((s) => s === 429)).toHaveLength(3)
  })
})
