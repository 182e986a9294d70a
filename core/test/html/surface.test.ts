import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { fromHtml } from "hast-util-from-html"
import * as html from "../../src/html/index.ts"
import { ALLOWED_URL_SCHEMES, ATTRIBUTE_NAMES, SAFE_URL } from "../../src/html/articleSchema.ts"

describe("the html module", () => {
  it("should export exactly its public surface", () => {
    expect(Object.keys(html).sort()).toEqual([
      "ALLOWED_URL_SCHEMES",
      "DIFF_BUDGET",
      "GRANULARITY_NOTES",
      "MAX_NESTING_DEPTH",
      "MAX_PARSED_NODES",
      "MAX_REPORTED_KINDS",
      "NOT_SMALL",
      "PROTECTED_BLOCKS_MEMO_CHARS",
      "SAFE_URL",
      "analyzeArticleHtml",
      "analyzeSmallArticleHtml",
      "applyEditPolicy",
      "articleSchema",
      "bodyLines",
      "bodyUnits",
      "checkProtectedBlocks",
      "compareBodies",
      "compareProtectedBlocks",
      "countWords",
      "diffBodies",
      "diffLines",
      "diffWords",
      "extractProtectedBlocks",
      "knownProtectedBlocks",
      "lineText",
      "makeDiffBudget",
      "mergeArticle",
      "protectedBlocksMemoUse",
      "readStoredBody",
      "rememberProtectedBlocks",
      "sanitizeArticleHtml",
      "sanitizeEachPart",
      "settleMerge",
    ])
  })

  it("should answer remembered blocks exactly as freshly extracted ones", () => {
    const bodies = [
      '<p><a href="https://m.test/1" data-service-protected="backlink">m</a></p>',
      '<h2>T</h2><p>a <a href="https://m.test/2" data-service-protected="backlink" rel="noopener">two</a> b</p><ul><li><a href="/g" data-service-protected="internal">guide</a></li></ul>',
      '<div data-service-protected="box"><p>kept <em>as</em> is</p></div><p><A HREF="https://m.test/3" DATA-SERVICE-PROTECTED="backlink">upper</A></p>',
    ]
    for (const body of bodies) {
      // The parse an edit makes of its new body: the sanitised html and the blocks read from it.
      const analysed = Effect.runSync(html.analyzeArticleHtml(body))
      expect(analysed.blocks.length).toBeGreaterThan(0)
      // A fresh extraction of that html, before anything is remembered for it.
      const fresh = html.extractProtectedBlocks(analysed.html)
      expect(analysed.blocks).toEqual(fresh)
      // What the edit remembers is what the next edit's extraction answers, and it equals the fresh one.
      html.rememberProtectedBlocks(analysed.html, analysed.blocks)
      const remembered = html.extractProtectedBlocks(analysed.html)
      expect(remembered).toBe(analysed.blocks)
      expect(remembered).toEqual(fresh)
    }
    // Remembering is keyed by the body: another body is still read from its own html.
    const other = '<p><a href="https://m.test/other" data-service-protected="backlink">other</a></p>'
    expect(html.extractProtectedBlocks(other)).toEqual(Effect.runSync(html.analyzeArticleHtml(other)).blocks)
    expect(html.extractProtectedBlocks(other)).not.toEqual(html.extractProtectedBlocks(Effect.runSync(html.analyzeArticleHtml(bodies[0]!)).html))
    // A body without the marker has no blocks, whatever was remembered for it.
    html.rememberProtectedBlocks("<p>plain</p>", Effect.runSync(html.analyzeArticleHtml(bodies[0]!)).blocks)
    expect(html.extractProtectedBlocks("<p>plain</p>")).toEqual([])
  })

  it("should limit nesting to 256 elements", () => {
    expect(html.MAX_NESTING_DEPTH).toBe(256)
  })

  it("should name every allowed attribute as the parser does", () => {
    for (const [attribute, property] of ATTRIBUTE_NAMES) {
      const root = fromHtml(`<span ${attribute}="v"></span>`, { fragment: true })
      const span = root.children[0]
      expect(span?.type === "element" ? Object.keys(span.properties) : []).toEqual([property])
    }
  })

  it("should allow exactly the documented URL schemes", () => {
    for (const scheme of ALLOWED_URL_SCHEMES) {
      expect(SAFE_URL.test(`${scheme}:x`)).toBe(true)
      expect(SAFE_URL.test(`${scheme.toUpperCase()}:x`)).toBe(true)
      expect(SAFE_URL.test(` \t${scheme.split("").join("\n")}:x`)).toBe(true)
    }
    for (const url of ["javascript:x", "data:x", "ftp:x", "httpx:x", "xhttp:x", "blob:x", "java\u0001script:x"]) {
      expect(SAFE_URL.test(url)).toBe(false)
    }
    for (const url of ["", "/a", "a", "#x", "?q", "./a:b", "1a:b", "a/b:c", "//host/x"]) {
      expect(SAFE_URL.test(url)).toBe(true)
    }
  })

  it("should allow every element the contract names", () => {
    const required = "h1 h2 h3 h4 h5 h6 p br hr ul ol li dl dt dd a img table thead tbody tfoot tr th td caption blockquote code pre kbd samp figure figcaption em strong b i u s sub sup mark small abbr cite q span div section article aside header footer details summary time del ins"
    for (const tag of required.split(" ")) expect(html.articleSchema.tagNames).toContain(tag)
  })

  it("should drop with their content the elements the contract removes", () => {
    const removed = "script iframe object embed style form svg math template noscript base meta link frame frameset applet"
    for (const tag of removed.split(" ")) {
      expect(html.articleSchema.tagNames).not.toContain(tag)
      expect(html.articleSchema.strip).toContain(tag)
    }
  })

  it("should bound the remembered blocks in characters as well as in entries", () => {
    const link = '<a href="https://m.test/x" data-service-protected="backlink">m</a>'
    const block = html.extractProtectedBlocks(`<p>${link}</p>`)
    // 40 bodies of 512 Ki characters: 20 Mi characters, more than the memo may hold
    const size = 512 * 1024
    for (let i = 0; i < 40; i++) html.rememberProtectedBlocks(`<p>${link}</p><p>${String(i).padEnd(size, "x")}</p>`, block)
    const use = html.protectedBlocksMemoUse()
    expect(use.chars).toBeLessThanOrEqual(html.PROTECTED_BLOCKS_MEMO_CHARS)
    expect(use.entries).toBeLessThan(40)
    // the newest is still known, the oldest was dropped first
    expect(html.knownProtectedBlocks(`<p>${link}</p><p>${String(39).padEnd(size, "x")}</p>`)).toBe(block)
    expect(html.knownProtectedBlocks(`<p>${link}</p><p>${String(0).padEnd(size, "x")}</p>`)).toBeUndefined()
    // a body larger than the whole budget is not remembered at all
    html.rememberProtectedBlocks(`<p>${link}</p>${"y".repeat(html.PROTECTED_BLOCKS_MEMO_CHARS)}`, block)
    expect(html.protectedBlocksMemoUse().chars).toBeLessThanOrEqual(html.PROTECTED_BLOCKS_MEMO_CHARS)
  })
})
