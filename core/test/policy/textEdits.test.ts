import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { applyTextEdits, findAtMostTwice, occurrences } from "../../src/index.ts"

// Every occurrence by the obvious quadratic search, for comparison on small inputs.
const naive = (text: string, find: string): Array<number> => {
  const at: Array<number> = []
  for (let i = 0; i + find.length <= text.length; i++) if (text.startsWith(find, i)) at.push(i)
  return at
}

describe("findAtMostTwice", () => {
  it("should find overlapping occurrences and stop at the second", () => {
    expect(findAtMostTwice("aaa", "aa").at).toEqual([0, 1])
    expect(findAtMostTwice("aaaaaaaa", "aa").at).toEqual([0, 1])
    expect(findAtMostTwice("abcabd", "abd").at).toEqual([3])
    expect(findAtMostTwice("abc", "x").at).toEqual([])
    expect(findAtMostTwice("ab", "abc").at).toEqual([])
  })

  it("should answer the first two occurrences the obvious search finds", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("a", "b", "c"), maxLength: 40 }), fc.string({ unit: fc.constantFrom("a", "b"), minLength: 1, maxLength: 6 }), (text, find) => {
        expect(findAtMostTwice(text, find).at).toEqual(naive(text, find).slice(0, 2))
      }),
    )
  })

  it("should compare at most 2 x (text + find) characters on the review's worst input", () => {
    // A 1 M-character body of one letter and a 20 000-character find: indexOf one start after
    // another compared about 2 * 10^10 characters here.
    const text = "a".repeat(1_040_000)
    const find = "a".repeat(20_000)
    const result = findAtMostTwice(text, find)
    expect(result.at).toEqual([0, 1])
    expect(result.comparisons).toBeLessThanOrEqual(2 * (text.length + find.length))
    const missing = findAtMostTwice(text, "a".repeat(19_999) + "b")
    expect(missing.at).toEqual([])
    expect(missing.comparisons).toBeLessThanOrEqual(2 * (text.length + 20_000))
  })

  it("should compare at most 2 x (text + find) characters on any input", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("a", "b"), maxLength: 200 }), fc.string({ unit: fc.constantFrom("a", "b"), minLength: 1, maxLength: 30 }), (text, find) => {
        expect(findAtMostTwice(text, find).comparisons).toBeLessThanOrEqual(2 * (text.length + find.length))
      }),
    )
  })

  it("should count up to 2 only", () => {
    expect(occurrences("a a a a", "a")).toBe(2)
    expect(occurrences("abc", "b")).toBe(1)
    expect(occurrences("abc", "d")).toBe(0)
  })
})

describe("applyTextEdits", () => {
  it("should say a find is found at least 2 times, not an exact count", () => {
    const out = applyTextEdits("x x x x", [{ find: "x", replace: "y" }])
    expect(out).toEqual({ mismatches: [{ path: "edits/0/find", message: expect.stringMatching(/^Found at least 2 times/), count: 2 }] })
  })

  it("should replace at the one occurrence found", () => {
    expect(applyTextEdits("abcabd", [{ find: "abd", replace: "X" }])).toEqual({ text: "abcX" })
  })
})

describe("applyTextEdits: work", () => {
  it("should compare at most 2 x (text + find) characters an edit, added up over the edits", () => {
    const text = "a".repeat(100_000)
    const edits = Array.from({ length: 100 }, () => ({ find: "a".repeat(5_000), replace: "" }))
    const work = { comparisons: 0 }
    const out = applyTextEdits(text, edits, work)
    expect("mismatches" in out && out.mismatches).toHaveLength(100)
    expect(work.comparisons).toBeLessThanOrEqual(100 * 2 * (text.length + 5_000))
  })
})
