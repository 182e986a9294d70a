/** A protocol call (resources, prompts, completion) that fails inside: reported to the service's event log, as a tool call's failure is. */
import { Effect } from "effect"
import { memoryRuntime } from "../../../test/support/memoryRuntime.ts"
import { afterEach, describe, expect, it, vi } from "vitest"
import { RateLimited, type LimitVerdict } from "@content-site/core"
import { protocolCalls, refusedForRequestLimit } from "../src/calls.ts"

afterEach(() => {
  vi.restoreAllMocks()
})

describe("protocolCalls", () => {
  it("should report an internal failure to the event log it was given (a JSON line), with its request id, not to stderr", async () => {
    const { runtime } = memoryRuntime()
    const stderr = vi.spyOn(console, "error").mockImplementation(() => {})
    const logged: Array<{ fields: object; msg: string }> = []
    const log = { info: () => {}, warn: () => {}, error: (fields: object, msg: string) => logged.push({ fields, msg }) }
    try {
      const call = protocolCalls(runtime, "https://cs.test", log)
      const context = { requestId: "req_call_1", principal: { accountId: "acc_a", actor: { type: "oauth_client" as const, id: "cli_1", name: "app" }, scope: "write" as const }, onVerdict: () => {} }
      await expect(call(context, "resources/read", {}, () => Effect.die(new Error("boom")))).rejects.toMatchObject({ data: { code: "internal" } })
      expect(logged).toEqual([{ fields: expect.objectContaining({ request_id: "req_call_1" }), msg: "MCP resources/read failed" }])
      expect(JSON.stringify(logged[0]?.fields)).toContain("boom")
      expect(stderr).not.toHaveBeenCalled()
    } finally {
      await runtime.dispose()
    }
  })

  it("should leave the verdict the call was counted with when the call is refused for a cap of work at once, not state that cap as the request limit spent", async () => {
    const { runtime } = memoryRuntime()
    try {
      const call = protocolCalls(runtime, "https://cs.test", { info: () => {}, warn: () => {}, error: () => {} })
      const verdicts: Array<LimitVerdict> = []
      const context = { requestId: "req_call_2", principal: { accountId: "acc_a", actor: { type: "oauth_client" as const, id: "cli_1", name: "app" }, scope: "write" as const }, onVerdict: (v: LimitVerdict) => void verdicts.push(v) }
      const atOnce = new RateLimited({ limit: 4, retryAfterSeconds: 1, counted: "searches of this account at once" })
      await expect(call(context, "resources/read", {}, () => Effect.fail(atOnce))).rejects.toMatchObject({ data: { code: "rate_limited" } })
      // one verdict, the request limit's: allowed, with the minute's budget (60), not 4 and none left
      expect(verdicts).toHaveLength(1)
      expect(verdicts[0]).toMatchObject({ allowed: true })
      expect(verdicts[0]!.limit).not.toBe(4)
      expect(refusedForRequestLimit(atOnce)).toBe(false)
      expect(refusedForRequestLimit(new RateLimited({ limit: 60, retryAfterSeconds: 30 }))).toBe(true)
    } finally {
      await runtime.dispose()
    }
  })
})
