import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { jsonDepthExceeds, MAX_JSON_DEPTH } from "../src/jsonDepth.ts"

describe("jsonDepthExceeds", () => {
  // The scan it replaces, one character at a time: the reference.
  const byCharacter = (text: string, max: number): boolean => {
    let depth = 0
    let inString = false
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (inString) {
        if (c === 92) i++
        else if (c === 34) inString = false
      } else if (c === 34) inString = true
      else if (c === 123 || c === 91) {
        if (++depth > max) return true
      } else if (c === 125 || c === 93) depth--
    }
    return false
  }

  it("should answer what a scan of every character answers, on any text of JSON's punctuation", () => {
    const text = fc.string({ unit: fc.constantFrom("[", "]", "{", "}", '"', "\\", "a", ",", ":"), maxLength: 40 })
    fc.assert(fc.property(text, fc.integer({ min: 0, max: 4 }), (t, max) => jsonDepthExceeds(t, max) === byCharacter(t, max)), { numRuns: 5000 })
  })

  it("should pass brackets and escaped quotes inside strings, and count the ones outside", () => {
    const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`
    expect(jsonDepthExceeds(deep(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false)
    expect(jsonDepthExceeds(deep(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true)
    expect(jsonDepthExceeds(JSON.stringify({ body: `<p class="x">${"[{".repeat(100)}\\"</p>` }), MAX_JSON_DEPTH)).toBe(false)
    expect(jsonDepthExceeds(`{"a":"\\\\"${"[".repeat(40)}`, MAX_JSON_DEPTH)).toBe(true)
    expect(jsonDepthExceeds(`{"a":"\\"${"[".repeat(40)}`, MAX_JSON_DEPTH)).toBe(false)
  })
})
