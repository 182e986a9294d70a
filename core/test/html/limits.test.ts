/**
 * The sanitiser's limits and re-parse rounds, and the bounds of the protected-blocks memo: the
 * rules a mutation run found no test for (docs/testing.md, "Mutation score").
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import {
  analyzeArticleHtml,
  extractProtectedBlocks,
  knownProtectedBlocks,
  PROTECTED_BLOCKS_MEMO_CHARS,
  protectedBlocksMemoUse,
  readStoredBody,
  rememberProtectedBlocks,
  sanitizeArticleHtml,
} from "../../src/html/index.ts"
import { analyzeHtml } from "../../src/html/sanitizeArticleHtml.ts"
import { utf8Length } from "../../src/schema/writes.ts"
import { MAX_BODY_BYTES } from "../../src/schema/writes.ts"
import { clean, failureOf } from "./helpers.ts"

const bytes = (s: string): number => new TextEncoder().encode(s).length

describe("sanitizeArticleHtml: re-parse rounds", () => {
  // A link the parser moves out of a table into the link around it: nested links, which the next
  // parse splits. Three rounds: the input, its nested links, and the split links that stay.
  const threeRounds = '<a href="/1"><table><a href="/2">t'
  const settled = '<a href="/1"></a><a href="/2">t</a><table></table>'

  it("should run a third round when the second still changes the markup, and answer the settled form", () => {
    expect(clean(threeRounds)).toBe(settled)
    expect(clean(settled)).toBe(settled)
  })

  it("should report a change that no removal explains as changed, with nothing removed", () => {
    expect(Effect.runSync(sanitizeArticleHtml(threeRounds)).report).toStrictEqual({ changed: true, removed: [] })
    expect(Effect.runSync(sanitizeArticleHtml(settled)).report).toStrictEqual({ changed: false, removed: [] })
  })

  it("should read the protected blocks and words of the last round", () => {
    const result = Effect.runSync(analyzeArticleHtml('<a href="/1"><table><a href="/2" data-service-protected="internal">two words</a>'))
    expect(result.html).toBe('<a href="/1"></a><a href="/2" data-service-protected="internal">two words</a><table></table>')
    expect(result.blocks.map((b) => [b.tag, b.href, b.text])).toEqual([["a", "/2", "two words"]])
    expect(result.wordCount).toBe(2)
  })
})

describe("sanitizeArticleHtml: markup that does not settle", () => {
  // No input is known to need more than three rounds: fewer rounds allowed (a seam for tests)
  // make the three-round input one that does not settle in time.
  const unstable = '<a href="/1">one <table><a href="/2" data-service-protected="internal">two &lt; three</a><p>four</p>'

  it("should keep only the text, escaped, in document order, and say the markup was unstable", () => {
    const result = analyzeHtml(unstable, { maxRounds: 2 })
    expect(result).toStrictEqual({
      html: "one two &lt; threefour",
      report: { changed: true, removed: [{ what: "unstable markup", count: 1 }] },
      blocks: [],
      wordCount: 4,
    })
    expect(clean(unstable)).toBe('<a href="/1">one </a><a href="/2" data-service-protected="internal">two &lt; three</a><p>four</p><table></table>')
  })

})

describe("sanitizeArticleHtml: the 1 MiB limit counts UTF-8 bytes", () => {
  // `<p>` and `</p>` are 7 bytes; the rest is `unit` repeated and ASCII to make up the bytes.
  const bodyOf = (unit: string, total: number): string => {
    const n = Math.floor((total - 7) / bytes(unit))
    return `<p>${unit.repeat(n)}${"x".repeat(total - 7 - n * bytes(unit))}</p>`
  }

  it("should refuse a body over 1 MiB in bytes but under 1 Mi UTF-16 units", () => {
    const body = `<p>${"é".repeat(600_000)}</p>`
    expect(body.length).toBeLessThan(MAX_BODY_BYTES)
    expect(bytes(body)).toBeGreaterThan(MAX_BODY_BYTES)
    expect(failureOf(sanitizeArticleHtml(body))._tag).toBe("PayloadTooLarge")
  })

  it("should count UTF-8 bytes as TextEncoder writes them, at every edge of the encoding", () => {
    const edges = [
      "\u007f", "\u0080", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffff",
      "\ud800\udc00", "\udbff\udfff", "\ud83d\ude00", // pairs: the first and last of the planes above, one between
      "\ud800", "\udbff", "\udc00", "\udfff", // lone surrogates, written as U+FFFD
      "\ud800x", "\ud800é", "\udbff€", "€\udc00", "\ud7ff\udc00", "\ue000\udc00", "\udc00\udc00", "x\ud800", // a lone one beside others
    ]
    for (const s of edges) expect(utf8Length(s), JSON.stringify(s)).toBe(bytes(s))
    expect(utf8Length(edges.join(""))).toBe(bytes(edges.join("")))
  })

  for (const [name, unit] of [
    ["two-byte characters", "é"],
    ["three-byte characters", "€"],
    ["surrogate pairs (four bytes)", "😀"],
    ["lone high surrogates (three bytes, as U+FFFD)", "\ud800x"],
    ["lone low surrogates (three bytes, as U+FFFD)", "\udc00"],
  ] as const) {
    it(`should take exactly 1 MiB of ${name} and refuse one byte more`, () => {
      const exact = bodyOf(unit, MAX_BODY_BYTES)
      expect(bytes(exact)).toBe(MAX_BODY_BYTES)
      expect(Effect.runSync(sanitizeArticleHtml(exact)).html).toBe(exact)
      const over = exact.replace("</p>", "x</p>")
      expect(failureOf(sanitizeArticleHtml(over))._tag).toBe("PayloadTooLarge")
    })
  }
})

describe("sanitizeArticleHtml: URL attributes of del and ins", () => {
  for (const tag of ["del", "ins", "q", "blockquote"]) {
    it(`should remove a javascript: cite of ${tag}, keep a safe one, and say so`, () => {
      const result = Effect.runSync(sanitizeArticleHtml(`<${tag} cite="javascript:alert(1)">x</${tag}><${tag} cite="https://example.com/why">y</${tag}>`))
      expect(result.html).toBe(`<${tag}>x</${tag}><${tag} cite="https://example.com/why">y</${tag}>`)
      expect(result.report.removed).toEqual([{ what: "cite attribute", count: 1 }])
    })
  }
})

describe("the protected-blocks memo", () => {
  const body = (i: number, size = 0) => `<p data-service-protected="internal">memo ${i}</p>${"x".repeat(size)}`

  it("should hold at most 256 bodies, forgetting the oldest first", () => {
    for (let i = 0; i < 300; i++) rememberProtectedBlocks(body(i), [])
    expect(protectedBlocksMemoUse().entries).toBe(256)
    expect(knownProtectedBlocks(body(43))).toBeUndefined()
    expect(knownProtectedBlocks(body(44))).toEqual([])
    expect(knownProtectedBlocks(body(299))).toEqual([])
  })

  it("should hold at most PROTECTED_BLOCKS_MEMO_CHARS characters, and no body larger than that", () => {
    const third = Math.floor(PROTECTED_BLOCKS_MEMO_CHARS / 3)
    for (let i = 0; i < 4; i++) rememberProtectedBlocks(body(1000 + i, third), [])
    const use = protectedBlocksMemoUse()
    expect(use.chars).toBeLessThanOrEqual(PROTECTED_BLOCKS_MEMO_CHARS)
    expect(knownProtectedBlocks(body(1000, third))).toBeUndefined()
    expect(knownProtectedBlocks(body(1003, third))).toEqual([])
    rememberProtectedBlocks(body(2000, PROTECTED_BLOCKS_MEMO_CHARS), [])
    expect(knownProtectedBlocks(body(2000, PROTECTED_BLOCKS_MEMO_CHARS))).toBeUndefined()
    expect(protectedBlocksMemoUse()).toEqual(use)
  })

  it("should count a remembered body's characters once when it is remembered again", () => {
    const before = protectedBlocksMemoUse()
    const html = body(3000)
    const blocks = extractProtectedBlocks(html)
    const once = protectedBlocksMemoUse()
    expect(once.chars - before.chars).toBe(html.length + blocks.reduce((n, b) => n + b.canonical.length + b.text.length + b.type.length, 0))
    rememberProtectedBlocks(html, blocks)
    expect(protectedBlocksMemoUse()).toEqual(once)
  })

  it("should hold a body of exactly PROTECTED_BLOCKS_MEMO_CHARS characters, alone, and count a block's href with its other text", () => {
    const exact = body(4000, PROTECTED_BLOCKS_MEMO_CHARS - body(4000).length)
    expect(exact.length).toBe(PROTECTED_BLOCKS_MEMO_CHARS)
    rememberProtectedBlocks(exact, [])
    expect(knownProtectedBlocks(exact)).toEqual([])
    expect(protectedBlocksMemoUse()).toEqual({ entries: 1, chars: PROTECTED_BLOCKS_MEMO_CHARS })
    // any other body makes room by forgetting the full one: the memo then holds that body alone
    const html = `<p><a href="https://partner.test/memo" data-service-protected="backlink">memo ${crypto.randomUUID()}</a></p>`
    const [block, ...more] = extractProtectedBlocks(html)
    expect([block?.href, more]).toEqual(["https://partner.test/memo", []])
    const chars = html.length + block!.canonical.length + block!.text.length + "https://partner.test/memo".length + block!.type.length
    expect(protectedBlocksMemoUse()).toEqual({ entries: 1, chars })
  })

  it("should remember nothing for a body without protected blocks", () => {
    const before = protectedBlocksMemoUse()
    rememberProtectedBlocks("<p>plain</p>", [])
    expect(protectedBlocksMemoUse()).toEqual(before)
    expect(knownProtectedBlocks("<p>plain</p>")).toEqual([])
  })
})

describe("readStoredBody", () => {
  it("should read the protected blocks and words of a stored body larger than a new body may be", () => {
    const html = `<p data-service-protected="internal">two words</p><p>${"x ".repeat(600_000)}</p>`
    expect(html.length).toBeGreaterThan(MAX_BODY_BYTES)
    const stored = readStoredBody(html)
    expect(stored.blocks.map((b) => [b.tag, b.type, b.text])).toEqual([["p", "internal", "two words"]])
    expect(stored.wordCount).toBe(600_002)
  })
})

describe("extractProtectedBlocks without the marker", () => {
  it("should answer no blocks for a body without data-service-protected without parsing it, even one nested too deep", () => {
    expect(extractProtectedBlocks(`<p>${"<span>".repeat(300)}x</p>`)).toEqual([])
  })
})

describe("a stored body the sanitiser still refuses", () => {
  // Deeper than any stored body can be: reading it is a defect, never "no protected blocks".
  const tooDeep = `<p data-service-protected="internal">${"<span>".repeat(300)}x</p>`

  it("should make extractProtectedBlocks and readStoredBody throw rather than answer no blocks", () => {
    expect(() => extractProtectedBlocks(tooDeep)).toThrow(/extractProtectedBlocks: The body is HTML nested deeper than 256 elements/)
    expect(() => readStoredBody(tooDeep)).toThrow(/readStoredBody: The body is HTML nested deeper than 256 elements/)
  })
})
