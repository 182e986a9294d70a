import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { jsonBoundPassed, jsonDepthExceeds, jsonTokensExceed, MAX_JSON_DEPTH, MAX_JSON_TOKENS } from "../src/jsonDepth.ts"

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

describe("jsonTokensExceed", () => {
  // a count of every character outside strings, one at a time: the reference
  const byCharacter = (text: string, max: number): boolean => {
    let tokens = 0
    let inString = false
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!
      if (inString) {
        if (c === "\\") i++
        else if (c === '"') inString = false
      } else if (c === '"') inString = true
      else if ("{[,:".includes(c) && ++tokens > max) return true
    }
    return false
  }

  it("should answer what a count of every character answers, on any text of JSON's punctuation", () => {
    const text = fc.string({ unit: fc.constantFrom("[", "]", "{", "}", '"', "\\", "a", ",", ":"), maxLength: 40 })
    fc.assert(fc.property(text, fc.integer({ min: 0, max: 6 }), (t, max) => jsonTokensExceed(t, max) === byCharacter(t, max)), { numRuns: 5000 })
  })

  it("should count the values and keys outside strings up to MAX_JSON_TOKENS, and a full MCP batch of edits stays under it", () => {
    const wide = (n: number) => `[${"{},".repeat(n - 1)}0]`
    // n - 1 objects and n - 1 commas, and the array
    expect(jsonTokensExceed(wide(MAX_JSON_TOKENS / 2), MAX_JSON_TOKENS)).toBe(false)
    expect(jsonTokensExceed(wide(MAX_JSON_TOKENS / 2 + 1), MAX_JSON_TOKENS)).toBe(true)
    expect(jsonTokensExceed(JSON.stringify({ body: "{,:[".repeat(100_000) }), MAX_JSON_TOKENS)).toBe(false)
    const edit = (i: number) => ({ find: `old ${i}, "x": [y]`, replace: `new ${i}` })
    const call = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "edit_article", arguments: { article_id: "art_1", if_revision: 3, reason: "why", idempotency_key: `k${id}`, edits: Array.from({ length: 100 }, (_, i) => edit(i)) } },
    })
    expect(jsonTokensExceed(JSON.stringify(Array.from({ length: 100 }, (_, i) => call(i))), MAX_JSON_TOKENS)).toBe(false)
  })
})

describe("jsonBoundPassed", () => {
  it("should name the bound the text passes first, in one scan, and none within both", () => {
    expect(jsonBoundPassed(`[[[[1,2,3]]]]`, 3, 100)).toBe("depth")
    expect(jsonBoundPassed(`[1,2,3,4,5,[[[[1]]]]]`, 3, 4)).toBe("tokens")
    expect(jsonBoundPassed(`[[[[1]]]],1,2,3,4,5`, 3, 4)).toBe("depth")
    expect(jsonBoundPassed(`{"a":[1,2],"b":"[[[[,,,,"}`, 2, 6)).toBeUndefined()
  })
})
