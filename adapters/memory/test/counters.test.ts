/** The memory adapter's counters stay bounded: ended windows and past days are dropped once there are many. */
import { ArticleWriter, DataImporter, LimitStore } from "@content-site/core"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { changeOf, worldPlan } from "../../../test/persistence/fixtures/world.ts"
import { MEMORY_COUNTERS_SWEEP_ABOVE, makeMemoryState, memoryArticleWriter, memoryDataImporter, memoryLimitStore } from "../src/index.ts"

describe("memory request counters", () => {
  it("should drop counters of ended windows once there are many, and keep counting the current ones exactly", () => {
    const state = makeMemoryState()
    let t = 1_700_000_000_000
    const layer = memoryLimitStore(state, () => t)
    const hit = (key: string, limit = 3) => Effect.runSync(Effect.provide(LimitStore.use((l) => l.hit(key, limit, 60)), layer))
    // one hit each from many addresses in one minute
    for (let i = 0; i < MEMORY_COUNTERS_SWEEP_ABOVE; i++) hit(`authfail:10.0.${i >> 8}.${i & 255}`)
    expect(hit("account:a").remaining).toBe(2)
    expect(state.limitWindows.size).toBe(MEMORY_COUNTERS_SWEEP_ABOVE + 1)
    // a minute later their windows have ended: the next new key sweeps them; the current key's new window counts afresh
    t += 60_000
    expect(hit("authfail:192.0.2.1").remaining).toBe(2)
    expect(state.limitWindows.size).toBe(1)
    expect(hit("account:a").remaining).toBe(2)
    expect(hit("account:a").remaining).toBe(1)
    expect(state.limitWindows.size).toBe(2)
  })

  it("should not drop anything while every counter's window is still running", () => {
    const state = makeMemoryState()
    const t = 1_700_000_000_000
    const layer = memoryLimitStore(state, () => t)
    const hit = (key: string) => Effect.runSync(Effect.provide(LimitStore.use((l) => l.hit(key, 5, 3600)), layer))
    for (let i = 0; i <= MEMORY_COUNTERS_SWEEP_ABOVE; i++) hit(`k${i}`)
    expect(state.limitWindows.size).toBe(MEMORY_COUNTERS_SWEEP_ABOVE + 1)
    expect(hit("k0").remaining).toBe(3)
  })
})

describe("memory edit counters", () => {
  it("should drop counters of past days once there are many, keeping today's", () => {
    const state = makeMemoryState()
    const layer = Layer.mergeAll(memoryArticleWriter(state), memoryDataImporter(state))
    const run = <A, E>(effect: Effect.Effect<A, E, ArticleWriter | DataImporter>) => Effect.runPromise(Effect.provide(effect, layer))
    const edit = (day: string) =>
      run(
        Effect.gen(function* () {
          const [article] = [...state.articles.values()]
          return yield* (yield* ArticleWriter).change("acc_m", article!.id, { day, limit: 100, retryAfterSeconds: 60 }, (c) => Effect.succeed(changeOf(c, `t ${day} ${Math.random()}`)))
        }),
      )
    return (async () => {
      await run(DataImporter.use((i) => i.apply(worldPlan("acc_m", 1))))
      for (let i = 0; i < MEMORY_COUNTERS_SWEEP_ABOVE; i++) state.editCounters.set(`acc_old${i}#2026-10-01`, 1)
      state.editCounters.set("acc_other#2026-11-22", 4)
      // an account's first edit of the day, with many counters about: the past days' go, today's stay
      await edit("2026-11-22")
      expect(new Map(state.editCounters)).toEqual(new Map([["acc_other#2026-11-22", 4], ["acc_m#2026-11-22", 1]]))
      await edit("2026-11-22")
      expect(state.editCounters.get("acc_m#2026-11-22")).toBe(2)
    })()
  })
})
