import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import {
  analyzeArticleHtml,
  applyEditPolicy,
  checkProtectedBlocks,
  compareProtectedBlocks,
  extractProtectedBlocks,
} from "../../src/html/index.ts"
import type { Element } from "hast"
import { serializeNodes } from "../../src/html/serializeHtml.ts"
import { elementsOf, failureOf, failureTag } from "./helpers.ts"

const news = '<a href="https://news.test/p" rel="nofollow" data-service-protected="backlink">News site</a>'
const blog = '<a href="https://blog.test/" data-service-protected="">Blog</a>'
const current = `<p>Read ${news} and ${blog} today.</p><p>Plain <a href="https://plain.test">link</a>.</p>`

const verdict = (currentHtml: string, nextHtml: string) =>
  Effect.runSync(applyEditPolicy(extractProtectedBlocks(currentHtml), nextHtml)).violations

describe("extractProtectedBlocks", () => {
  it("should return the protected elements in document order, canonical", () => {
    expect(extractProtectedBlocks(current)).toStrictEqual([
      {
        canonical: '<a data-service-protected="backlink" href="https://news.test/p" rel="nofollow">News site</a>',
        tag: "a",
        type: "backlink",
        href: "https://news.test/p",
        text: "News site",
        hidden: false,
      },
      { canonical: '<a data-service-protected="" href="https://blog.test/">Blog</a>', tag: "a", type: "", href: "https://blog.test/", text: "Blog", hidden: false },
    ])
  })

  it("should return nothing for a body without protected elements", () => {
    expect(extractProtectedBlocks('<p><a href="https://x.test">x</a></p>')).toEqual([])
  })

  it("should find the attribute whatever its case in the source", () => {
    expect(extractProtectedBlocks('<A HREF="https://x.test" DATA-SERVICE-PROTECTED>x</A>')).toHaveLength(1)
  })

  it("should treat nested protected elements as part of the outermost block", () => {
    const blocks = extractProtectedBlocks(`<div data-service-protected="box"><p>Sponsored</p>${news}</div>`)
    expect(blocks).toHaveLength(1)
    expect(blocks[0]?.tag).toBe("div")
    expect(blocks[0]?.href).toBe("https://news.test/p")
    expect(blocks[0]?.text).toBe("SponsoredNews site")
  })

  it("should give a block without any href a null href", () => {
    expect(extractProtectedBlocks('<span data-service-protected="">note</span>')[0]?.href).toBeNull()
  })

  it("should read blocks as the sanitiser keeps them", () => {
    const dirty = '<a href="https://x.test" onclick="e()" data-service-protected="">x</a>'
    expect(extractProtectedBlocks(dirty)).toEqual(extractProtectedBlocks('<a href="https://x.test" data-service-protected="">x</a>'))
  })
})

describe("extractProtectedBlocks on a body stored before today's input limits", () => {
  // Over 1 MiB and past the parse budget: refused as input, readable as a stored body.
  const stored = `<p>${news}</p>${"<p>w</p>".repeat(150_000)}`

  it("should read the blocks of a body the input limits refuse", () => {
    expect(failureTag(analyzeArticleHtml(stored))).toBe("PayloadTooLarge")
    expect(extractProtectedBlocks(stored).map((block) => block.href)).toEqual(["https://news.test/p"])
  })

  it("should still refuse a new body built from it", () => {
    expect(failureTag(applyEditPolicy(extractProtectedBlocks(stored), `${stored}<p>more</p>`))).toBe("PayloadTooLarge")
  })
})

describe("applyEditPolicy: accepted edits", () => {
  it("should accept the unchanged body", () => {
    expect(verdict(current, current)).toEqual([])
  })

  it("should accept moving and reordering protected blocks", () => {
    expect(verdict(current, `<h2>New intro</h2><ul><li>${blog}</li></ul><p>Later: ${news}</p>`)).toEqual([])
  })

  it("should accept attributes in another order and other quoting", () => {
    const reordered = `<a data-service-protected=backlink rel='nofollow' href="https://news.test/p">News site</a> ${blog}`
    expect(verdict(current, reordered)).toEqual([])
  })

  it("should accept whitespace-only differences in the block's text", () => {
    expect(verdict(current, `<a href="https://news.test/p" rel="nofollow" data-service-protected="backlink">News\n   site</a>${blog}`)).toEqual([])
  })

  it("should accept an edit whose only difference in a block is an attribute the sanitiser removes", () => {
    expect(verdict(current, `${news.replace("<a ", '<a onclick="x()" ')}${blog}`)).toEqual([])
  })

  it("should accept changing everything around the blocks", () => {
    expect(verdict(current, `<h1>Rewritten</h1><p>${news}</p><table><tbody><tr><td>${blog}</td></tr></tbody></table>`)).toEqual([])
  })

  it("should return the sanitised body, its blocks and word count", () => {
    const result = Effect.runSync(applyEditPolicy(extractProtectedBlocks(current), `<p>${news} ${blog}</p><script>x</script>`))
    expect(result.html).toBe(`<p>${news} ${blog}</p>`)
    expect(result.report.removed).toEqual([{ what: "script", count: 1 }])
    expect(result.blocks).toHaveLength(2)
    expect(result.wordCount).toBe(3)
    expect(result.violations).toEqual([])
  })
})

describe("applyEditPolicy: refused edits", () => {
  it("should report a removed block", () => {
    expect(verdict(current, `<p>${news}</p>`)).toEqual([{ kind: "removed", href: "https://blog.test/", text: "Blog" }])
  })

  it("should report a block whose text changed", () => {
    expect(verdict(current, `${news.replace("News site", "News")}${blog}`)).toEqual([
      { kind: "changed", href: "https://news.test/p", text: "News site" },
    ])
  })

  it("should report a block whose rel changed", () => {
    expect(verdict(current, `${news.replace("nofollow", "sponsored")}${blog}`)).toEqual([
      { kind: "changed", href: "https://news.test/p", text: "News site" },
    ])
  })

  it("should report a block whose href changed, paired by its text", () => {
    expect(verdict(current, `${news.replace("news.test/p", "evil.test/p")}${blog}`)).toEqual([
      { kind: "changed", href: "https://news.test/p", text: "News site" },
    ])
  })

  it("should report a block that lost its data-service-protected attribute as removed", () => {
    expect(verdict(current, `${news.replace(' data-service-protected="backlink"', "")}${blog}`)).toEqual([
      { kind: "removed", href: "https://news.test/p", text: "News site" },
    ])
  })

  it("should report an added attribute as a change", () => {
    expect(verdict(current, `${news.replace("<a ", '<a title="t" ')}${blog}`)).toEqual([
      { kind: "changed", href: "https://news.test/p", text: "News site" },
    ])
  })

  it("should report a changed value of data-service-protected", () => {
    expect(verdict(current, `${news.replace('"backlink"', '"other"')}${blog}`)).toEqual([
      { kind: "changed", href: "https://news.test/p", text: "News site" },
    ])
  })

  it("should report a new protected element as forged", () => {
    expect(verdict(current, `${news}${blog}<a href="https://mine.test" data-service-protected="">Mine</a>`)).toEqual([
      { kind: "forged", href: "https://mine.test", text: "Mine" },
    ])
  })

  it("should report forging in a body that had no protected blocks", () => {
    expect(verdict("<p>x</p>", '<p><span data-service-protected="">s</span></p>')).toEqual([{ kind: "forged", href: null, text: "s" }])
  })

  it("should need two copies for two identical current blocks", () => {
    expect(verdict(`${news}${news}`, `<p>${news}</p>`)).toEqual([{ kind: "removed", href: "https://news.test/p", text: "News site" }])
    expect(verdict(`${news}${news}`, `${news}<p>${news}</p>`)).toEqual([])
  })

  it("should report a duplicated block as forged", () => {
    expect(verdict(news, `${news}${news}`)).toEqual([{ kind: "forged", href: "https://news.test/p", text: "News site" }])
  })

  it("should report a block made unsafe by the sanitiser as changed", () => {
    expect(verdict(news, news.replace("https://news.test/p", "javascript:alert(1)"))).toEqual([
      { kind: "changed", href: "https://news.test/p", text: "News site" },
    ])
  })

  it("should compare an outer block as a whole when an inner protected element changes", () => {
    const box = `<div data-service-protected="box">${news}</div>`
    expect(verdict(box, `<div data-service-protected="box">${news.replace("News site", "News")}</div>`)).toEqual([
      { kind: "changed", href: "https://news.test/p", text: "News site" },
    ])
  })

  it("should report an inner protected element moved out of its block as removed and forged", () => {
    const box = `<div data-service-protected="box"><p>Sponsored</p>${news}</div>`
    expect(verdict(box, `<div data-service-protected="box"><p>Sponsored</p></div>${news}`)).toEqual([
      { kind: "removed", href: "https://news.test/p", text: "SponsoredNews site" },
      { kind: "forged", href: null, text: "Sponsored" },
      { kind: "forged", href: "https://news.test/p", text: "News site" },
    ])
  })

  it("should list violations for current blocks in their order, then forged ones", () => {
    const next = `<a href="https://new.test" data-service-protected="">New</a>${blog.replace("Blog", "Blag")}`
    expect(verdict(current, next)).toEqual([
      { kind: "removed", href: "https://news.test/p", text: "News site" },
      { kind: "changed", href: "https://blog.test/", text: "Blog" },
      { kind: "forged", href: "https://new.test", text: "New" },
    ])
  })
})

describe("compareProtectedBlocks and checkProtectedBlocks", () => {
  it("should find nothing when both lists are empty", () => {
    expect(compareProtectedBlocks([], [])).toEqual([])
  })

  it("should succeed when nothing is violated", () => {
    const blocks = extractProtectedBlocks(current)
    expect(failureTag(checkProtectedBlocks(blocks, blocks))).toBe("success")
  })

  it("should fail with ProtectedLinkChanged listing the blocks", () => {
    const error = failureOf(checkProtectedBlocks(extractProtectedBlocks(current), []))
    expect(error._tag).toBe("ProtectedLinkChanged")
    expect(error.blocks.map((block) => block.kind)).toEqual(["removed", "removed"])
  })
})

describe("applyEditPolicy: a protected link moved where it is hidden or struck", () => {
  const hidden = [{ kind: "hidden", href: "https://news.test/p", text: "News site" }]

  it("should report a block wrapped in del, s, aria-hidden=true or a details outside its summary as hidden", () => {
    for (const wrapped of [
      `<p><del>${news}</del></p>`,
      `<p><s>${news}</s></p>`,
      `<p><span aria-hidden="true">${news}</span></p>`,
      `<div aria-hidden=" TRUE "><p>${news}</p></div>`,
      `<details><summary>More</summary><p>${news}</p></details>`,
      `<details open><summary>More</summary>${news}</details>`,
      `<details><summary>One</summary><summary>${news}</summary></details>`,
      `<details><summary>More</summary><details><summary>${news}</summary></details></details>`,
    ]) {
      expect(verdict(current, `${wrapped}${blog}`), wrapped).toEqual(hidden)
    }
  })

  it("should report a block under an element carrying hidden as hidden (the sanitiser drops the attribute before)", () => {
    const link = elementsOf(news)[0]!
    const span: Element = { type: "element", tagName: "span", properties: { hidden: true }, children: [link] }
    expect(serializeNodes([span], { collectProtected: true }).protectedHidden).toEqual([true])
    expect(serializeNodes([link], { collectProtected: true }).protectedHidden).toEqual([false])
    const blocks = extractProtectedBlocks(news)
    expect(compareProtectedBlocks(blocks, [{ ...blocks[0]!, hidden: true }])).toEqual(hidden)
    // What a body sent in can say: [hidden] is not kept, so the link stays in sight and passes.
    const result = Effect.runSync(analyzeArticleHtml(`<p><span hidden>${news}</span></p>${blog}`))
    expect(result.html).not.toContain("hidden")
    expect(result.report.removed).toContainEqual({ what: "hidden attribute", count: 1 })
    expect(verdict(current, `<p><span hidden>${news}</span></p>${blog}`)).toEqual([])
  })

  it("should accept a block in the summary of a details, and near a del or s rather than inside", () => {
    expect(verdict(current, `<details><summary>${news}</summary><p>more</p></details>${blog}`)).toEqual([])
    expect(verdict(current, `<p><del>old</del> ${news} <s>gone</s></p>${blog}`)).toEqual([])
    expect(verdict(current, `<p aria-hidden="false">${news}</p>${blog}`)).toEqual([])
  })

  it("should accept a block that was hidden already, kept so or shown again", () => {
    const struck = `<p><del>${news}</del></p>`
    expect(verdict(struck, struck)).toEqual([])
    expect(verdict(struck, `<p>${news}</p>`)).toEqual([])
  })

  it("should refuse the hidden copy when a block is kept in sight and hidden too", () => {
    expect(verdict(news, `${news}<del>${news}</del>`)).toEqual([{ kind: "forged", href: "https://news.test/p", text: "News site" }])
    expect(verdict(`${news}${news}`, `${news}<del>${news}</del>`)).toEqual(hidden)
  })

  it("should answer 422 hidden through checkProtectedBlocks", () => {
    const check = checkProtectedBlocks(extractProtectedBlocks(current), extractProtectedBlocks(`<s>${news}</s>${blog}`))
    expect(failureTag(check)).toBe("ProtectedLinkChanged")
    expect(failureOf(check)).toMatchObject({ blocks: hidden })
  })
})

describe("compareProtectedBlocks: work", () => {
  const block = (i: number, prefix: string, hidden = false) => ({
    canonical: `<a data-service-protected="" href="https://${prefix}${i}.test/">${prefix}${i}</a>`,
    tag: "a",
    type: "",
    href: `https://${prefix}${i}.test/`,
    text: `${prefix}${i}`,
    hidden,
  })

  it("should count a step per current block, per new block, per pending block and per entry read from a queue", () => {
    const steps = (current: ReadonlyArray<ReturnType<typeof block>>, next: ReadonlyArray<ReturnType<typeof block>>) => {
      const work = { steps: 0 }
      const violations = compareProtectedBlocks(current, next, work)
      return { kinds: violations.map((v) => v.kind), steps: work.steps }
    }
    // moved: 2 current + 2 entries read + 2 new
    expect(steps([block(0, "k"), block(1, "k")], [block(1, "k"), block(0, "k")])).toEqual({ kinds: [], steps: 6 })
    // replaced: 1 current + 1 pending + 1 new, no queue holds a key asked for
    expect(steps([block(0, "a")], [block(0, "b")])).toEqual({ kinds: ["removed", "forged"], steps: 3 })
    // one copy for two: 2 current + 1 read + 1 pending + 1 read by href + 1 read by text (both find it used) + 1 new;
    // an empty queue costs nothing
    expect(steps([block(0, "k"), block(0, "k")], [block(0, "k")])).toEqual({ kinds: ["removed"], steps: 7 })
  })

  it("should take at most 4 x (current + new blocks) steps, however many are unmatched", () => {
    // Every current block removed, every new one forged: pairing each with a scan of the new ones was quadratic.
    const current = Array.from({ length: 1_000 }, (_, i) => block(i, "kept"))
    const next = Array.from({ length: 50_000 }, (_, i) => block(i, "forged"))
    const work = { steps: 0 }
    const violations = compareProtectedBlocks(current, next, work)
    expect(violations.filter((v) => v.kind === "removed")).toHaveLength(1_000)
    expect(violations.filter((v) => v.kind === "forged")).toHaveLength(50_000)
    expect(work.steps).toBeLessThanOrEqual(4 * (current.length + next.length))
  })

  it("should take at most 4 x (current + new blocks) steps with many identical copies, hidden or not", () => {
    const current = Array.from({ length: 1_000 }, () => block(0, "same"))
    const next = [...Array.from({ length: 20_000 }, () => block(0, "same", true)), ...Array.from({ length: 500 }, () => block(0, "same"))]
    const work = { steps: 0 }
    const violations = compareProtectedBlocks(current, next, work)
    expect(violations.filter((v) => v.kind === "hidden")).toHaveLength(500)
    expect(violations.filter((v) => v.kind === "forged")).toHaveLength(19_500)
    expect(work.steps).toBeLessThanOrEqual(4 * (current.length + next.length))
  })
})

describe("compareProtectedBlocks: blocks without an href", () => {
  const block = (tag: string, href: string | null, text: string, hidden = false) => ({
    canonical: `<${tag} data-service-protected="internal"${href === null ? "" : ` href="${href}"`}>${text}</${tag}>`,
    tag,
    type: "internal",
    href,
    text,
    hidden,
  })

  it("should never pair a block without an href with one whose href is the relative URL null", () => {
    const named = block("a", "null", "one")
    const bare = block("a", null, "two")
    expect(compareProtectedBlocks([named], [bare]).map((v) => [v.kind, v.href])).toEqual([
      ["removed", "null"],
      ["forged", null],
    ])
    expect(compareProtectedBlocks([bare], [named]).map((v) => [v.kind, v.href])).toEqual([
      ["removed", null],
      ["forged", "null"],
    ])
  })

  it("should call a hidden block whose href is kept with other text changed, not removed", () => {
    const was = block("a", "https://partner.test/", "old words", true)
    const now = block("a", "https://partner.test/", "new words")
    expect(compareProtectedBlocks([was], [now]).map((v) => [v.kind, v.text])).toEqual([["changed", "old words"]])
  })
})
