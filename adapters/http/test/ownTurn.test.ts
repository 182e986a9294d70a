import { describe, expect, it } from "vitest"
import { inOwnTurn, LARGE_BODY_BYTES, parseInTurn } from "../src/ownTurn.ts"

describe("large bodies, one per turn of the event loop", () => {
  it("should run two parses queued together in two turns, in order, with other work between", async () => {
    const order: Array<string> = []
    const first = inOwnTurn(() => order.push("first"))
    const second = inOwnTurn(() => order.push("second"))
    // Work of the turn after the first parse's, scheduled before the first parse runs.
    setImmediate(() => setImmediate(() => order.push("other")))
    await first
    // Right after the first parse (its turn's microtasks): the second one waits for a later turn.
    expect(order).toEqual(["first"])
    await second
    expect(order).toEqual(["first", "other", "second"])
  })

  it("should go on after a parse that throws, and give its error to its caller alone", async () => {
    const failing = inOwnTurn(() => {
      throw new Error("bad JSON")
    })
    const next = inOwnTurn(() => "parsed")
    await expect(failing).rejects.toThrow("bad JSON")
    await expect(next).resolves.toBe("parsed")
  })

  it("should parse a small body at once and only a larger one in a turn of its own", async () => {
    const small = parseInTurn(LARGE_BODY_BYTES, () => "small")
    expect(small).toBe("small")
    const large = parseInTurn(LARGE_BODY_BYTES + 1, () => "large")
    expect(large).toBeInstanceOf(Promise)
    await expect(large).resolves.toBe("large")
  })
})
