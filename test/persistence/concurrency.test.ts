import { ArticleRepository, ArticleWriter, IdempotencyStore, LimitStore, type Reservation, RevisionRepository } from "@content-site/core"
import { openDatabase } from "@content-site/orm"
import { Cause, Effect, Exit, ManagedRuntime, Option } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { middayToday, testClock } from "../support/clock.ts"
import { createTestDatabase } from "../support/databases.ts"
import { openTwoInstances, type TwoInstances } from "./fixtures/instances.ts"
import { bigBudget, changeOf } from "./fixtures/world.ts"

const REDIS_URL = process.env["TEST_REDIS_URL"] ?? "redis://127.0.0.1:6379"
/** The instances' clock, half a minute into a minute: no one-minute window ends during a burst. */
const clock = testClock(middayToday())

describe("concurrency across two instances on one PostgreSQL database", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let pair: TwoInstances | undefined
  let ra: ManagedRuntime.ManagedRuntime<any, never>
  let rb: ManagedRuntime.ManagedRuntime<any, never>

  beforeAll(async () => {
    database = await createTestDatabase()
    pair = await openTwoInstances(database.url, "acc_conc", { now: clock.now })
    ;({ ra, rb } = pair)
  })
  afterAll(async () => {
    await pair?.close()
    await database?.drop()
  })

  it("should apply 20 concurrent edits of one article one after another with gapless numbers 2..21", async () => {
    const articleId = "acc_conc_art0"
    const edit = (i: number) =>
      ArticleWriter.use((w) => w.change("acc_conc", articleId, bigBudget, (c) => Effect.succeed(changeOf(c, `edit ${i}`))))
    const exits = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? ra : rb).runPromiseExit(edit(i))),
    )
    const numbers: Array<number> = []
    for (const exit of exits) {
      if (Exit.isSuccess(exit)) numbers.push(exit.value.committed!.revision.number)
      else expect((Option.getOrUndefined(Cause.findErrorOption(exit.cause)) as { _tag: string })._tag).toBe("EditConflict")
    }
    expect(numbers.length).toBe(20)
    expect(numbers.sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2))
    const article = await ra.runPromise(ArticleRepository.use((r) => r.get("acc_conc", articleId)))
    expect(article.revision).toBe(21)
    const revisions = await ra.runPromise(RevisionRepository.use((r) => r.list("acc_conc", articleId, { offset: 0, limit: 100 })))
    expect(revisions.items.map((r) => r.number)).toEqual(Array.from({ length: 21 }, (_, i) => 21 - i))
    // the article holds exactly the last revision's content
    expect(article.title).toBe(revisions.items[0]!.title)
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      const activity = await client.query("select count(*)::int as n from activity where article_id = $1", [articleId])
      expect(activity.rows[0].n).toBe(20)
      const counter = await client.query("select count from edit_counters where account_id = 'acc_conc'")
      expect(counter.rows[0].count).toBe(20)
    } finally {
      await client.end()
    }
  })

  it("should answer EditConflict, not wait forever, when the article stays locked", async () => {
    const articleId = "acc_conc_art0"
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    const quick = await openDatabase({ databaseUrl: database.url, lockTimeoutMs: 200 })
    const rq = ManagedRuntime.make(quick.layer)
    try {
      await client.query("begin")
      await client.query("select id from articles where id = $1 for update", [articleId])
      const exit = await rq.runPromiseExit(
        ArticleWriter.use((w) => w.change("acc_conc", articleId, bigBudget, (c) => Effect.succeed(changeOf(c, "blocked")))),
      )
      expect(Exit.isFailure(exit) && (Option.getOrUndefined(Cause.findErrorOption(exit.cause)) as { _tag: string })._tag).toBe("EditConflict")
    } finally {
      await client.query("rollback")
      await client.end()
      await rq.dispose()
      await quick.close()
    }
    expect((await ra.runPromise(ArticleRepository.use((r) => r.get("acc_conc", articleId)))).title).not.toBe("blocked")
  })

  it("should never let two instances together past the request limit (PostgreSQL counters)", async () => {
    const key = `req:${Date.now()}`
    const verdicts = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? ra : rb).runPromise(LimitStore.use((l) => l.hit(key, 25, 60)))),
    )
    expect(verdicts.filter((v) => v.allowed).length).toBe(25)
    const peek = await rb.runPromise(LimitStore.use((l) => l.peek(key, 25, 60)))
    expect(peek.allowed).toBe(false)
  })

  it("should never let two instances together past the request limit (Redis counters)", async () => {
    const x = await openDatabase({ databaseUrl: database.url, redisUrl: REDIS_URL, now: clock.now })
    const y = await openDatabase({ databaseUrl: database.url, redisUrl: REDIS_URL, now: clock.now })
    const rx = ManagedRuntime.make(x.layer)
    const ry = ManagedRuntime.make(y.layer)
    try {
      const key = `test:${Date.now()}:${Math.random()}`
      const verdicts = await Promise.all(
        Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? rx : ry).runPromise(LimitStore.use((l) => l.hit(key, 25, 60)))),
      )
      expect(verdicts.filter((v) => v.allowed).length).toBe(25)
      expect((await ry.runPromise(LimitStore.use((l) => l.peek(key, 25, 60)))).remaining).toBe(0)
      const fresh = await rx.runPromise(LimitStore.use((l) => l.peek(`${key}:other`, 25, 60)))
      expect(fresh).toMatchObject({ allowed: true, remaining: 25 })
    } finally {
      await rx.dispose()
      await ry.dispose()
      await x.close()
      await y.close()
    }
  })

  it("should not apply a request twice when its idempotency key was taken over at another instance while its first holder still ran", async () => {
    const articleId = "acc_conc_art0"
    const key = `idem:${Date.now()}`
    const times = (nowMs: number) => ({ nowMs, leaseUntilMs: nowMs + 5 * 60_000, expiresAtMs: nowMs + 24 * 3_600_000 })
    const t0 = clock.now()
    // A holds the key and is slow; its lease ends; the same request retried at B takes the key over
    const tokenOf = (reservation: Reservation) => (reservation.kind === "reserved" ? reservation.token : expect.fail(`not reserved: ${reservation.kind}`))
    const tokenA = tokenOf(await ra.runPromise(IdempotencyStore.use((s) => s.reserve("acc_conc", key, "f1", times(t0)))))
    const tokenB = tokenOf(await rb.runPromise(IdempotencyStore.use((s) => s.reserve("acc_conc", key, "f1", times(t0 + 5 * 60_000)))))
    const before = (await ra.runPromise(ArticleRepository.use((r) => r.get("acc_conc", articleId)))).revision
    const edit = (title: string, token: string) =>
      ArticleWriter.use((w) => w.change("acc_conc", articleId, bigBudget, (c) => Effect.succeed({ ...changeOf(c, title), idempotency: { key, fingerprint: "f1", token } })))
    // both make the request's change: A's lands first, B's must not land as a second one
    const first = await ra.runPromiseExit(edit("first holder", tokenA))
    expect(Exit.isSuccess(first)).toBe(true)
    const second = await rb.runPromiseExit(edit("second holder", tokenB))
    expect(Exit.isFailure(second) && (Option.getOrUndefined(Cause.findErrorOption(second.cause)) as { _tag: string })._tag).toBe("EditConflict")
    const after = await ra.runPromise(ArticleRepository.use((r) => r.get("acc_conc", articleId)))
    expect(after).toMatchObject({ title: "first holder", revision: before + 1 })
    // the key names the one change made
    expect(await rb.runPromise(IdempotencyStore.use((s) => s.reserve("acc_conc", key, "f1", times(t0 + 10 * 60_000))))).toEqual({
      kind: "applied",
      fingerprint: "f1",
      revision: { articleId, number: before + 1 },
    })
  })
})
