import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { applyTextEdits, findAtMostTwice, occurrences } from "../../src/index.ts"
import { unstorableEditTexts } from "../../src/policy/textEdits.ts"

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

  it("should find an empty find at 0 and 1 of a text, at 0 of the empty text, for nothing compared", () => {
    expect(findAtMostTwice("abc", "")).toEqual({ at: [0, 1], comparisons: 0 })
    expect(findAtMostTwice("", "")).toEqual({ at: [0], comparisons: 0 })
    expect(findAtMostTwice("", "a")).toEqual({ at: [], comparisons: 0 })
  })

  it("should count every comparison, the failure table's and the scan's", () => {
    // "ab" in "xab": the table compares b with a (1), the scan x with a, a with a, b with b (3).
    expect(findAtMostTwice("xab", "ab")).toEqual({ at: [1], comparisons: 4 })
    expect(findAtMostTwice("aab", "ab")).toEqual({ at: [1], comparisons: 5 })
  })

  it("should not read past the find or the text (an occurrence at the very end, a find one longer than the text)", () => {
    expect(findAtMostTwice("ab", "ab")).toEqual({ at: [0], comparisons: 3 })
    expect(findAtMostTwice("ab", "abc").at).toEqual([])
    expect(findAtMostTwice("xxab", "ab").at).toEqual([2])
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

  it("should say a find is not found, with count 0, and still check the later edits against the applied ones", () => {
    const out = applyTextEdits("one two", [{ find: "three", replace: "3" }, { find: "one", replace: "1" }, { find: "1 two", replace: "x" }, { find: "two", replace: "2" }])
    expect(out).toEqual({
      mismatches: [
        { path: "edits/0/find", message: expect.stringMatching(/^Not found in the body/), count: 0 },
        { path: "edits/3/find", message: expect.stringMatching(/^Not found in the body/), count: 0 },
      ],
    })
  })

  it("should apply the edits in order, each on the result of the one before", () => {
    expect(applyTextEdits("one two", [{ find: "one", replace: "1" }, { find: "1 two", replace: "both" }])).toEqual({ text: "both" })
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

  it("should add up exactly what each edit's search compared", () => {
    const work = { comparisons: 7 }
    expect(applyTextEdits("xab yz", [{ find: "ab", replace: "c" }, { find: "xc", replace: "y" }], work)).toEqual({ text: "y yz" })
    const first = findAtMostTwice("xab yz", "ab").comparisons
    const second = findAtMostTwice("xc yz", "xc").comparisons
    expect(work.comparisons).toBe(7 + first + second)
  })
})

describe("unstorableEditTexts", () => {
  it("should name every find and replace that a body could not store, and nothing else", () => {
    expect(unstorableEditTexts([{ find: "ok", replace: "ok" }, { find: "a\u0000", replace: "fine" }, { find: "x", replace: "\ud800" }, { find: "\udc00", replace: "\u0000" }])).toEqual([
      { path: "edits/1/find", message: expect.any(String) },
      { path: "edits/2/replace", message: expect.any(String) },
      { path: "edits/3/find", message: expect.any(String) },
      { path: "edits/3/replace", message: expect.any(String) },
    ])
    expect(unstorableEditTexts([{ find: "😀", replace: "é" }])).toEqual([])
  })
})
