import { describe, expect, it } from "vitest"
import { claimIdempotencyKey, recordIdempotentAnswer } from "../../src/index.ts"
import { caller, failureTag, makeWorld } from "./harness.ts"

const readOnly = () => caller({ actor: { type: "api_key", id: "key_ro", name: "ro" }, scope: "read-only" })

describe("claimIdempotencyKey", () => {
  it("should refuse a read-only caller before looking the key up, even one a write key answered", async () => {
    const w = await makeWorld()
    const writer = caller()
    expect(await w.run(claimIdempotencyKey(writer, "k-1", "fp"))).toEqual({ kind: "run" })
    await w.run(recordIdempotentAnswer(writer, "k-1", "fp", { status: 200, headers: {}, body: '{"secret":"answer"}' }))
    expect(failureTag(await w.exit(claimIdempotencyKey(readOnly(), "k-1", "fp")))).toBe("InsufficientScope")
    // nor does it take a free key, which a write would then find answered with its 403
    expect(failureTag(await w.exit(claimIdempotencyKey(readOnly(), "k-2", "fp")))).toBe("InsufficientScope")
    expect(await w.run(claimIdempotencyKey(writer, "k-2", "fp"))).toEqual({ kind: "run" })
  })
})
