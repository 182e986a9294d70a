/**
 * The hand-written SQL paths (sql.ts) on one pooled PostgreSQL connection: every port's named
 * statements share that connection, so two ports must never reuse a statement name for different
 * texts. The contract suite covers the behaviour; this covers the sharing.
 */
import { ActivityLog, ApiKeyRepository, ArticleRepository, DataImporter, LimitStore, SiteRepository, type ActivityRecord } from "@content-site/core"
import { Cause, Exit, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { worldPlan } from "../../../test/persistence/fixtures/world.ts"
import { middayToday, testClock } from "../../../test/support/clock.ts"
import { openTestStore, type TestStore } from "../../../test/support/testStore.ts"

const tagOf = <A, E>(exit: Exit.Exit<A, E>): string =>
  Exit.isSuccess(exit) ? "success" : ((Option.getOrUndefined(Cause.findErrorOption(exit.cause)) as { _tag?: string } | undefined)?._tag ?? "defect")

const entry = (i: number): ActivityRecord => ({
  id: `act_hot_${i}`,
  account_id: "acc_hot",
  at: "2026-11-22T10:00:00.000Z",
  channel: "api",
  actor: { type: "api_key", id: "key_hot", name: "hot" },
  action: "GET /api/v1/articles/{id}",
  site_id: null,
  article_id: "acc_hot_art0",
  status: 200,
  error_code: null,
  duration_ms: 1,
  request_id: `req_hot_${i}`,
  count: 1,
})

describe("hot-path SQL on one pooled PostgreSQL connection", () => {
  let orm: TestStore

  beforeAll(async () => {
    // a clock half a minute into its minute: both rounds' hits fall in one request window
    orm = await openTestStore({ poolMax: 1, now: testClock(middayToday()).now })
    const plan = worldPlan("acc_hot", 2)
    await orm.runtime.runPromise(
      DataImporter.use((i) =>
        i.apply({
          ...plan,
          apiKeys: [
            {
              id: "key_hot",
              account_id: "acc_hot",
              name: "hot",
              scope: "write",
              key_hash: "hash_hot",
              created_at: "2026-11-01T00:00:00.000Z",
              last_used_at: null,
              revoked_at: null,
            },
          ],
        }),
      ),
    )
  })
  afterAll(async () => {
    await orm?.close()
  })

  it("should answer every port's statements in turn, twice, on the same connection", async () => {
    for (let round = 0; round < 2; round++) {
      const peek = await orm.runtime.runPromise(LimitStore.use((l) => l.peek("ip:hot", 10, 60)))
      expect(peek.allowed).toBe(true)
      const key = await orm.runtime.runPromise(ApiKeyRepository.use((r) => r.findByHash("hash_hot")))
      expect(Option.getOrUndefined(key)).toMatchObject({ id: "key_hot", account_id: "acc_hot", last_used_at: null })
      const hit = await orm.runtime.runPromise(LimitStore.use((l) => l.hit("key:hot", 10, 60)))
      expect(hit).toMatchObject({ allowed: true, remaining: 10 - (round + 1) })
      const article = await orm.runtime.runPromise(ArticleRepository.use((r) => r.get("acc_hot", "acc_hot_art0")))
      expect(article).toMatchObject({ id: "acc_hot_art0", revision: 1, published_at: "2026-11-01T00:00:00.000Z" })
      await orm.runtime.runPromise(ActivityLog.use((l) => l.record(entry(round))))
      await orm.runtime.runPromise(ActivityLog.use((l) => l.record({ ...entry(round), id: `act_hot_again_${round}` })))
      const site = await orm.runtime.runPromise(SiteRepository.use((r) => r.get("acc_hot", "acc_hot_site")))
      expect(site).toMatchObject({ article_count: 2, backlink_count: 0, created_at: "2026-11-01T00:00:00.000Z" })
    }
    const log = await orm.runtime.runPromise(ActivityLog.use((l) => l.list("acc_hot", {}, { offset: 0, limit: 10 })))
    expect(log.total).toBe(2)
    expect(log.items[0]?.actor).toEqual({ type: "api_key", id: "key_hot", name: "hot" })
  })

  it("should answer NotFound for another account's article and site", async () => {
    expect(tagOf(await orm.runtime.runPromiseExit(ArticleRepository.use((r) => r.get("acc_other", "acc_hot_art0"))))).toBe("NotFound")
    expect(tagOf(await orm.runtime.runPromiseExit(SiteRepository.use((r) => r.get("acc_other", "acc_hot_site"))))).toBe("NotFound")
  })
})
