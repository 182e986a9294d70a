import fc from "fast-check"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { Id, isId } from "../../src/index.ts"

// `isId` checks path ids without the schema's parser; it must say exactly what `Id` says.
const alphabet = "abcXYZ019_.:-/ é\n\u0000%"
const near = fc.oneof(
  fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 140 }),
  fc.string({ unit: fc.constantFrom(..."aZ9_.:-"), minLength: 120, maxLength: 135 }),
  fc.string(),
)

describe("isId", () => {
  it("should agree with the Id schema on every string", () => {
    const is = Schema.is(Id)
    fc.assert(fc.property(near, (s) => isId(s) === is(s)), { numRuns: 2000 })
    for (const s of ["art_1", "a", "a".repeat(128), "a".repeat(129), "_a", "", "a b", "a/b", "art_1\n"]) expect(isId(s)).toBe(is(s))
  })
})
