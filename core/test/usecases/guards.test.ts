/** The guards every write passes, and the edit context each change is made in. */
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { checkRequestLimit, requireRevision, requireWriteScope, updateArticle } from "../../src/index.ts"
import { editBudgetFor, editsRemaining, originOf } from "../../src/usecases/editContext.ts"
import { caller, failureOf, makeWorld } from "./harness.ts"

describe("requireRevision", () => {
  it("should hold without a precondition, or when any revision named is the current one", () => {
    expect(Exit.isSuccess(Effect.runSyncExit(requireRevision(undefined, 3)))).toBe(true)
    expect(Exit.isSuccess(Effect.runSyncExit(requireRevision([1, 3], 3)))).toBe(true)
  })

  it("should fail with PreconditionFailed naming what was expected and what is current, an empty list included", () => {
    expect(Effect.runSync(Effect.flip(requireRevision([1, 2], 3)))).toMatchObject({ _tag: "PreconditionFailed", expected: [1, 2], current: 3 })
    expect(Effect.runSync(Effect.flip(requireRevision([], 3)))).toMatchObject({ _tag: "PreconditionFailed", expected: [], current: 3 })
  })

  it("should then fail when If-None-Match names the current revision or is *, and hold when it names others", () => {
    expect(Exit.isSuccess(Effect.runSyncExit(requireRevision(undefined, 3, [1, 2])))).toBe(true)
    expect(Exit.isSuccess(Effect.runSyncExit(requireRevision([3], 3, [])))).toBe(true)
    expect(Effect.runSync(Effect.flip(requireRevision(undefined, 3, [2, 3])))).toMatchObject({ _tag: "PreconditionFailed", expected: [], current: 3, noneMatch: [2, 3] })
    expect(Effect.runSync(Effect.flip(requireRevision([3], 3, "*")))).toMatchObject({ _tag: "PreconditionFailed", expected: [3], current: 3, noneMatch: "*" })
    // If-Match first (RFC 9110 13.2.2): its failure carries no noneMatch
    const ifMatch = Effect.runSync(Effect.flip(requireRevision([1], 3, "*")))
    expect([ifMatch.expected, ifMatch.noneMatch]).toEqual([[1], undefined])
  })
})

describe("requireWriteScope", () => {
  it("should let a write caller through", () => {
    expect(Exit.isSuccess(Effect.runSyncExit(requireWriteScope(caller())))).toBe(true)
  })

  it("should tell a read-only agent to connect again, and a read-only key to use a write key", () => {
    const agent = Effect.runSync(Effect.flip(requireWriteScope(caller({ scope: "read-only", actor: { type: "oauth_client", id: "c", name: "Agent" } }))))
    expect(agent).toMatchObject({ _tag: "InsufficientScope", detail: expect.stringMatching(/^This agent was allowed read-only access; .*“Read and edit”\.$/) })
    const key = Effect.runSync(Effect.flip(requireWriteScope(caller({ scope: "read-only" }))))
    expect(key).toMatchObject({ _tag: "InsufficientScope", detail: expect.stringMatching(/^This API key is read-only; create a write key .*\/connect/) })
  })
})

describe("the edit context", () => {
  it("should tag a change with the origin of the caller's channel", () => {
    expect((["api", "mcp", "web", "platform"] as const).map((channel) => originOf(caller({ channel })))).toEqual(["api", "mcp", "editor", "rewrite"])
  })

  it("should count the customer's edits against today's budget and the platform's against none", async () => {
    const w = await makeWorld({ dailyEdits: 2 })
    expect(await w.run(editBudgetFor(caller({ channel: "platform" })))).toBeNull()
    // NOW is midday UTC: half a day to the next midnight
    expect(await w.run(editBudgetFor(caller()))).toEqual({ day: "2026-11-22", limit: 2, retryAfterSeconds: 43_200 })
  })

  it("should answer the edits left today, never below 0", async () => {
    const w = await makeWorld({ dailyEdits: 2 })
    expect(await w.run(editsRemaining(caller()))).toBe(2)
    await w.run(updateArticle(caller(), "art_2", { title: "One" }, { dryRun: false }))
    expect(await w.run(editsRemaining(caller()))).toBe(1)
    await w.run(updateArticle(caller(), "art_2", { title: "Two" }, { dryRun: false }))
    expect(await w.run(editsRemaining(caller()))).toBe(0)
    // the counter may pass the limit (a platform job, a lower limit configured later): still 0
    w.state.editCounters.set("acc_a#2026-11-22", 5)
    expect(await w.run(editsRemaining(caller()))).toBe(0)
    expect(failureOf(await w.exit(updateArticle(caller(), "art_2", { title: "Three" }, { dryRun: false })))).toMatchObject({
      _tag: "DailyEditLimit",
      limit: 2,
      retryAfterSeconds: 43_200,
    })
  })
})

describe("checkRequestLimit", () => {
  it("should count each account apart in a minute's window, and never ask a refused caller to wait less than a second", async () => {
    const w = await makeWorld({ requestsPerMinute: 1 })
    expect(await w.run(checkRequestLimit("acc_a"))).toMatchObject({ allowed: true, limit: 1, remaining: 0, resetSeconds: 60 })
    expect(await w.run(checkRequestLimit("acc_b"))).toMatchObject({ allowed: true, remaining: 0 })
    w.clock.advance(59_500)
    expect(failureOf(await w.exit(checkRequestLimit("acc_a")))).toMatchObject({ _tag: "RateLimited", limit: 1, retryAfterSeconds: 1 })
    w.clock.advance(500)
    expect(await w.run(checkRequestLimit("acc_a"))).toMatchObject({ allowed: true, resetSeconds: 60 })
  })
})
