import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { isWithinBodyLimit, MAX_BODY_BYTES, utf8Length } from "../../src/schema/writes.ts"

const encoded = (s: string): number => new TextEncoder().encode(s).byteLength

describe("utf8Length and the body limit", () => {
  it("should count what TextEncoder writes, lone surrogates included", () => {
    for (const s of ["", "a", "é", "€", "😀", "\uD800", "\uDC00", "\uDC00\uD800", "a\uD83D", "\uD83Dx", "😀\uD83D"]) expect(utf8Length(s), JSON.stringify(s)).toBe(encoded(s))
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 60 }), fc.string({ unit: fc.constantFrom("a", "é", "€", "\uD83D", "\uDE00", "😀"), maxLength: 60 }), (a, b) => {
        expect(utf8Length(a + b)).toBe(encoded(a + b))
      }),
    )
  })

  it("should say a body is within the limit exactly when TextEncoder writes at most 1 MiB of it", () => {
    // Strings near the limit, of one-, two-, three- and four-byte characters and lone surrogates.
    const unit = fc.constantFrom("a", "é", "€", "😀", "\uD83D", "\uDE00")
    fc.assert(
      fc.property(fc.integer({ min: MAX_BODY_BYTES - 8, max: MAX_BODY_BYTES }), fc.string({ unit, maxLength: 8 }), (n, tail) => {
        const s = "a".repeat(n - tail.length) + tail
        expect(isWithinBodyLimit(s)).toBe(encoded(s) <= MAX_BODY_BYTES)
      }),
      { numRuns: 200 },
    )
  })

  it("should hold the body limit in UTF-8 bytes at its edges", () => {
    // the longest string the length alone lets through (a third of the limit, rounded down) in
    // three-byte characters, and one more, which must be counted and is over
    const third = Math.floor(MAX_BODY_BYTES / 3)
    expect(isWithinBodyLimit("€".repeat(third))).toBe(true)
    expect(isWithinBodyLimit("€".repeat(third + 1))).toBe(false)
    expect(isWithinBodyLimit("a".repeat(MAX_BODY_BYTES))).toBe(true)
    expect(isWithinBodyLimit("a".repeat(MAX_BODY_BYTES + 1))).toBe(false)
    // over 1 MiB in bytes while under 1 Mi code units
    expect(isWithinBodyLimit(`${"a".repeat(MAX_BODY_BYTES - 2)}é`)).toBe(true)
    expect(isWithinBodyLimit(`${"a".repeat(MAX_BODY_BYTES - 1)}é`)).toBe(false)
    expect(isWithinBodyLimit(`${"a".repeat(MAX_BODY_BYTES - 4)}😀`)).toBe(true)
    expect(isWithinBodyLimit(`${"a".repeat(MAX_BODY_BYTES - 3)}😀`)).toBe(false)
  })
})
