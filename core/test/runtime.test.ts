import { describe, expect, it } from "vitest"

declare const __CS_EXPECT_RUNTIME__: string

// The runner names the runtime it launched (CS_EXPECT_RUNTIME); this proves the core's tests really
// execute there, so `npm run test:deno` cannot silently fall back to Node.
describe("runtime", () => {
  it("should run on the runtime the test runner asked for", () => {
    const expected = __CS_EXPECT_RUNTIME__
    const actual = "Deno" in globalThis ? "deno" : "node"
    expect(actual).toBe(expected)
  })
})
