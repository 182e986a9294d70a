/**
 * The request limit shared by instances, at the default 60 a minute, with two instances on one
 * PostgreSQL database in this process (fast, unlike the multi-process tests in test/persistence):
 * the lease statement's grant is what keeps them together under the limit, and an off-by-one in
 * it shows only when a second instance leases after the first has reached the limit.
 */
import { LimitStore } from "@content-site/core"
import { ManagedRuntime, type Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openDatabase, type OrmDatabase } from "../src/index.ts"
import { middayToday, testClock } from "../../../test/support/clock.ts"
import { createTestDatabase } from "../../../test/support/databases.ts"

describe("the shared request limit on two instances", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  const instances: Array<{ db: OrmDatabase; runtime: ManagedRuntime.ManagedRuntime<Layer.Success<OrmDatabase["layer"]>, never> }> = []

  beforeAll(async () => {
    database = await createTestDatabase()
    // One clock standing at midday for both: every hit falls in one minute's window.
    const clock = testClock(middayToday())
    for (let i = 0; i < 2; i++) {
      const db = await openDatabase({ databaseUrl: database.url, poolMax: 2, now: clock.now })
      instances.push({ db, runtime: ManagedRuntime.make(db.layer) })
    }
  })
  afterAll(async () => {
    for (const { runtime, db } of instances) {
      await runtime.dispose()
      await db.close()
    }
    await database?.drop()
  })

  const hit = (instance: number, key: string) => instances[instance]!.runtime.runPromise(LimitStore.use((l) => l.hit(key, 60, 60)))

  it("should refuse the second instance's first hit once the first has let 60 through", async () => {
    const allowed = []
    for (let i = 0; i < 60; i++) allowed.push((await hit(0, "req:acc_one")).allowed)
    expect(allowed.filter(Boolean)).toHaveLength(60)
    expect(await hit(1, "req:acc_one")).toMatchObject({ allowed: false, remaining: 0 })
    expect(await hit(0, "req:acc_one")).toMatchObject({ allowed: false, remaining: 0 })
  })

  it("should let exactly 60 through in all when the two instances take turns", async () => {
    const verdicts = []
    for (let i = 0; i < 70; i++) verdicts.push(await hit(i % 2, "req:acc_two"))
    expect(verdicts.filter((v) => v.allowed)).toHaveLength(60)
    expect(verdicts.slice(-10).every((v) => !v.allowed)).toBe(true)
  })
})
