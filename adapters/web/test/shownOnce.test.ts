import type { WebSession } from "@content-site/http"
import { memoryRuntime } from "../../../test/support/memoryRuntime.ts"
import type { ParameterizedContext } from "koa"
import { describe, expect, it } from "vitest"
import { holdShownOnce, takeShownOnce } from "../src/shownOnce.ts"

describe("secrets shown once", () => {
  it("should hand a secret out once when two requests (at two instances) take it at the same moment", async () => {
    const { runtime, clock, deps } = memoryRuntime()
    try {
      const cookie = "c".repeat(43)
      const ctx = { cookies: { get: () => cookie } } as unknown as ParameterizedContext
      const session: WebSession = { key: "session-key", accountId: "acc_s", csrf: "csrf", createdAt: clock.now(), flash: null }
      const id = await holdShownOnce(ctx, deps, session, { key: "cs_secret" })
      const taken = await Promise.all([takeShownOnce(ctx, deps, session, id), takeShownOnce(ctx, deps, session, id)])
      expect(taken.filter((t) => t !== null)).toEqual([{ key: "cs_secret" }])
      expect(await takeShownOnce(ctx, deps, session, id)).toBeNull()
    } finally {
      await runtime.dispose()
    }
  })
})
