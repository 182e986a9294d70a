import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { analyzeArticleHtml, analyzeSmallArticleHtml, NOT_SMALL } from "../../src/html/index.ts"
import { analyzeHtml } from "../../src/html/sanitizeArticleHtml.ts"

const within = { chars: 4096, nodes: 2048 }
const small = (html: string) => Effect.runSyncExit(analyzeSmallArticleHtml(html, within))
const full = (html: string) => Effect.runSyncExit(analyzeArticleHtml(html))

describe("analyzeSmallArticleHtml", () => {
  it("should answer exactly what analyzeArticleHtml answers for a body within its bounds", () => {
    const bodies = [
      "",
      "<p>plain</p>",
      '<p>Hi <a href="https://x.test" data-service-protected="backlink" onclick="y">x</a><script>1</script></p>',
      "<p><b>open formatting<p>reopened",
      "<div>".repeat(300), // too deep: the same refusal
      "<p>x</p>".repeat(500), // 1 000 elements
      "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\"></noscript>", // more than one round
    ]
    for (const body of bodies) {
      const a = small(body)
      const b = full(body)
      expect(JSON.stringify(a)).toBe(JSON.stringify(b))
    }
  })

  it("should stop at its character bound: a body one character longer is not small", () => {
    const body = "x".repeat(within.chars)
    expect(small(body)).toStrictEqual(full(body))
    expect(small(`${body}y`)).toStrictEqual(Exit.succeed(NOT_SMALL))
  })

  it("should stop at its parse budget: markup that builds more elements and attributes than it is not small", () => {
    // Elements with one attribute each count two; the fragment's own root and context count 4.
    const tight = { chars: 4096, nodes: 200 }
    const brs = (n: number) => '<br class="c">'.repeat(n)
    expect(Effect.runSyncExit(analyzeSmallArticleHtml(brs(98), tight))).toStrictEqual(full(brs(98)))
    expect(Effect.runSyncExit(analyzeSmallArticleHtml(brs(99), tight))).toStrictEqual(Exit.succeed(NOT_SMALL))
    // Few bytes that the parser turns into many elements (formatting reopened in each paragraph):
    // short, yet past the budget, so not small, while the full analysis accepts it.
    const reopening = `<p>${"<b><i><u><s><em><strong><small><big><tt><font><nobr><code>".repeat(3)}${"<p>x".repeat(200)}`
    expect(reopening.length).toBeLessThan(within.chars)
    expect(small(reopening)).toStrictEqual(Exit.succeed(NOT_SMALL))
    expect(Exit.isSuccess(full(reopening))).toBe(true)
  })

  it("should let a later round's input be twice the bound: a body at the bound whose output is longer stays small", () => {
    // 512 paragraphs of one letter, 4 096 characters: the closing tags make the output 8 192.
    const paragraphs = "<p>x".repeat(within.chars / 4)
    expect(paragraphs.length).toBe(within.chars)
    expect(Effect.runSync(analyzeArticleHtml(paragraphs)).html.length).toBe(2 * within.chars)
    expect(small(paragraphs)).toStrictEqual(full(paragraphs))
  })

  it("should hold later rounds to twice the bound (a round's output longer than that is not small)", () => {
    // One reopened element with a long attribute, copied into each paragraph: small input, long output.
    const growing = `<p><b title="${"t".repeat(1000)}">${"<p>x".repeat(50)}`
    expect(growing.length).toBeLessThan(within.chars)
    expect(Effect.runSync(analyzeArticleHtml(growing)).html.length).toBeGreaterThan(2 * within.chars)
    // Its first round is within the bounds; the output it settles on is not re-parsed here.
    const out = small(growing)
    const settled = Effect.runSync(analyzeArticleHtml(growing)).html === growing
    expect(settled).toBe(false)
    expect(out).toStrictEqual(Exit.succeed(NOT_SMALL))
  })

  it("should stop before writing a round whose text and attributes alone pass the next round's bound", () => {
    // One 16 K attribute reopened in each paragraph: 32 K characters and within the parse budget
    // (three nodes a paragraph), yet about 11 MB to serialise; the full analysis refuses it (413).
    const bound = { chars: 32 * 1024, nodes: 2048 }
    const quadratic = `<p><b title="${"t".repeat(16 * 1024)}">${"<p>x".repeat(600)}`
    expect(quadratic.length).toBeLessThanOrEqual(bound.chars)
    const refused = Effect.runSyncExit(analyzeArticleHtml(quadratic))
    expect(Exit.isFailure(refused) && JSON.stringify(refused).includes("PayloadTooLarge")).toBe(true)
    // Not small: sent on to the full analysis rather than serialised here.
    expect(Effect.runSyncExit(analyzeSmallArticleHtml(quadratic, bound))).toStrictEqual(Exit.succeed(NOT_SMALL))
    // Stopped at the first round, before its serialiser (one round only: without the stop, that
    // round would write the 11 MB and refuse it).
    expect(analyzeHtml(quadratic, { within: bound, maxRounds: 1 })).toBe(NOT_SMALL)
    // Just under the stop: text and attributes of at most twice the bound are written and answered.
    const longText = `<p title="${"t".repeat(16 * 1024)}">${"w ".repeat(8 * 1024 - 10)}</p>`
    expect(longText.length).toBeLessThanOrEqual(bound.chars)
    expect(JSON.stringify(Effect.runSyncExit(analyzeSmallArticleHtml(longText, bound)))).toBe(JSON.stringify(full(longText)))
  })
})
