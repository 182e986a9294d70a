import { describe, expect, it } from "vitest"
import { getArticle, getStats, listActivity, listArticles, listBacklinks, listSites, type NotFound } from "../../src/index.ts"
import { caller, failureOf, failureTag, makeWorld } from "./harness.ts"

describe("read use cases", () => {
  it("should list only the caller's own websites with their counts", async () => {
    const w = await makeWorld()
    const page = await w.run(listSites(caller(), {}))
    expect(page.data.map((s) => [s.id, s.article_count, s.backlink_count])).toEqual([["site_a", 3, 3]])
    expect(page.pagination).toEqual({ page: 1, per_page: 20, total: 1, total_pages: 1 })
  })

  it("should answer another account's site exactly like a missing one", async () => {
    const w = await makeWorld()
    const other = failureOf(await w.exit(listArticles(caller(), "site_b", {}))) as NotFound
    const missing = failureOf(await w.exit(listArticles(caller(), "site_zz", {}))) as NotFound
    expect([other._tag, missing._tag]).toEqual(["NotFound", "NotFound"])
    expect(other.resource).toBe(missing.resource)
    expect(failureTag(await w.exit(getArticle(caller(), "art_b")))).toBe("NotFound")
    expect(failureTag(await w.exit(listBacklinks(caller(), "site_b", {})))).toBe("NotFound")
    expect(failureTag(await w.exit(getStats(caller(), "site_b", {})))).toBe("NotFound")
  })

  it("should answer an own site with nothing in range with an empty page, not NotFound", async () => {
    const w = await makeWorld()
    const articles = await w.run(listArticles(caller(), "site_a", { from: "2001-01-01", to: "2001-01-31" }))
    expect(articles.data).toEqual([])
    expect(articles.pagination.total).toBe(0)
    const backlinks = await w.run(listBacklinks(caller(), "site_a", { from: "2001-01-01", to: "2001-01-31" }))
    expect(backlinks.data).toEqual([])
  })

  it("should refuse a range outside the years 0001 to 9999 UTC rather than list everything or ask the storage", async () => {
    const w = await makeWorld()
    // 9999-12-31T23:59:59-01:00 is in the year 10000 in UTC, whose ISO text has six digits
    const late = { from: "9999-12-31T23:59:59-01:00" }
    const early = { to: "0000-12-31" }
    for (const query of [late, early]) {
      const failures = [
        failureOf(await w.exit(listBacklinks(caller(), "site_a", query))),
        failureOf(await w.exit(listArticles(caller(), "site_a", query))),
        failureOf(await w.exit(listActivity(caller(), query))),
      ]
      for (const failure of failures) expect(failure).toMatchObject({ _tag: "InvalidRequest", errors: [{ path: Object.keys(query)[0] }] })
    }
    const all = await w.run(listBacklinks(caller(), "site_a", { from: "0001-01-01", to: "9999-12-31" }))
    expect(all.pagination.total).toBe(3)
    expect((await w.run(listBacklinks(caller(), "site_a", { from: "9999-12-31T23:59:59.999Z" }))).data).toEqual([])
  })

  it("should summarise a month of the first century as that month, with nothing in it", async () => {
    const w = await makeWorld()
    const stats = await w.run(getStats(caller(), "site_a", { period: "0026-11" }))
    expect(stats.period).toEqual({ key: "0026-11", from: "0026-11-01", to: "0026-11-30" })
    expect([stats.articles.count, stats.backlinks.count]).toEqual([0, 0])
  })

  it("should order articles by published_at descending with unpublished last, and never list bodies", async () => {
    const w = await makeWorld()
    const page = await w.run(listArticles(caller(), "site_a", {}))
    expect(page.data.map((a) => a.id)).toEqual(["art_1", "art_2", "art_3"])
    expect(page.data.every((a) => !("body" in a))).toBe(true)
  })

  it("should filter articles by an inclusive date range and by status", async () => {
    const w = await makeWorld()
    const nov = await w.run(listArticles(caller(), "site_a", { from: "2026-11-01", to: "2026-11-03" }))
    expect(nov.data.map((a) => a.id)).toEqual(["art_1"])
    const drafts = await w.run(listArticles(caller(), "site_a", { status: "draft" }))
    expect(drafts.data.map((a) => a.id)).toEqual(["art_3"])
  })

  it("should not take in an article published before a from given finer than the millisecond", async () => {
    const w = await makeWorld()
    // art_1 is published at 09:00:00.000; a from a tenth of a millisecond later lies after it
    const later = await w.run(listArticles(caller(), "site_a", { from: "2026-11-03T09:00:00.0001Z" }))
    expect(later.data.map((a) => a.id)).toEqual([])
    const at = await w.run(listArticles(caller(), "site_a", { from: "2026-11-03T09:00:00.000000Z", to: "2026-11-03T09:00:00.0009Z" }))
    expect(at.data.map((a) => a.id)).toEqual(["art_1"])
    // from and to within one millisecond, in order: a range with nothing stored in it, not a 400
    const between = await w.run(listArticles(caller(), "site_a", { from: "2026-11-03T09:00:00.0001Z", to: "2026-11-03T09:00:00.0009Z" }))
    expect(between.data).toEqual([])
    expect(failureOf(await w.exit(listArticles(caller(), "site_a", { from: "2026-11-03T09:00:00.0009Z", to: "2026-11-03T09:00:00.0001Z" })))).toMatchObject({
      _tag: "InvalidRequest",
      errors: [{ path: "from", message: "from is after to" }],
    })
    // a date-valued field: the day the from falls in still counts, however late in it
    const backlinks = await w.run(listBacklinks(caller(), "site_a", { from: "2026-11-04T23:59:59.9999Z" }))
    expect(backlinks.data.map((b) => b.id)).toEqual(["bl_1"])
  })

  it("should refuse a per_page above the configured maximum", async () => {
    const w = await makeWorld({ maxPerPage: 2 })
    expect(failureTag(await w.exit(listArticles(caller(), "site_a", { per_page: 3 })))).toBe("InvalidRequest")
    const page = await w.run(listArticles(caller(), "site_a", { per_page: 2, page: 2 }))
    expect(page.data.map((a) => a.id)).toEqual(["art_3"])
    expect(page.pagination).toEqual({ page: 2, per_page: 2, total: 3, total_pages: 2 })
  })

  it("should answer a page past the end with no items", async () => {
    const w = await makeWorld()
    const page = await w.run(listArticles(caller(), "site_a", { page: 9 }))
    expect(page.data).toEqual([])
    expect(page.pagination.total).toBe(3)
  })

  it("should list backlinks by date acquired, newest first, within inclusive dates", async () => {
    const w = await makeWorld()
    const all = await w.run(listBacklinks(caller(), "site_a", {}))
    expect(all.data.map((b) => b.id)).toEqual(["bl_1", "bl_2", "bl_3"])
    const nov = await w.run(listBacklinks(caller(), "site_a", { from: "2026-11-01", to: "2026-11-05" }))
    expect(nov.data.map((b) => b.id)).toEqual(["bl_1", "bl_2"])
  })

  it("should compute word counts from the body's text", async () => {
    const w = await makeWorld()
    const a = await w.run(getArticle(caller(), "art_2"))
    expect(a["word count"]).toBe(3)
    expect(a.revision).toBe(1)
  })

  it("should summarise this month's published articles and backlinks", async () => {
    const w = await makeWorld()
    const s = await w.run(getStats(caller(), "site_a", {}))
    expect(s.period).toEqual({ key: "this_month", from: "2026-11-01", to: "2026-11-30" })
    expect(s.articles.items.map((a) => a.id)).toEqual(["art_1"])
    expect(s.articles.count).toBe(1)
    expect(s.backlinks).toMatchObject({ count: 2, industry: 1, local: 1 })
    const oct = await w.run(getStats(caller(), "site_a", { period: "2026-10" }))
    expect(oct.articles.items.map((a) => a.id)).toEqual(["art_2"])
    expect(oct.articles["word count"]).toBe(3)
    expect(oct.backlinks.items.map((b) => b.id)).toEqual(["bl_3"])
  })
})
