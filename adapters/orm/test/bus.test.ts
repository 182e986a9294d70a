/** The in-process event bus: a subscriber that fails does not keep the event from the others, and its failure is in the service's log. */
import { describe, expect, it } from "vitest"
import { inProcessEventBus } from "../src/bus.ts"

describe("inProcessEventBus", () => {
  it("should give every other subscriber the event when one throws, and report that one's failure to the log", async () => {
    const errors: Array<{ fields: Record<string, unknown>; message: string }> = []
    const bus = inProcessEventBus({ info: () => {}, warn: () => {}, error: (fields, message) => void errors.push({ fields: fields as Record<string, unknown>, message }) })
    const got: Array<string> = []
    const failing = () => {
      throw new Error("a cache that cannot take it")
    }
    bus.subscribe({ event: failing, reset: () => {} })
    bus.subscribe({ event: (payload) => void got.push(payload), reset: () => {} })
    await bus.publish("key:k1")
    expect(got).toEqual(["key:k1"])
    expect(errors).toHaveLength(1)
    expect(errors[0]!.message).toBe("events: a cache's subscriber failed on an event; the others still got it")
    expect(String(errors[0]!.fields["err"])).toContain("a cache that cannot take it")
  })
})
