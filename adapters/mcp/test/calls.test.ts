/** A protocol call (resources, prompts, completion) that fails inside: reported to the service's event log, as a tool call's failure is. */
import { Effect } from "effect"
import { memoryRuntime } from "../../../test/support/memoryRuntime.ts"
import { afterEach, describe, expect, it, vi } from "vitest"
import { protocolCalls } from "../src/calls.ts"

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
})
