/** Completion of an MCP argument: the caller's own ids and titles, the id matches first in id order, and whether there are more. */
import { describe, expect, it } from "vitest"
import { COMPLETION_PREFIX_UNITS, COMPLETION_VALUES, completeArgument, importData } from "../../src/index.ts"
import { caller, makeWorld, oneSiteOfArticles } from "./harness.ts"

/** An account of `n` articles (`art_c00`, `art_c01`, ...) on one site, titled in the reverse order of their ids. */
const manyArticles = (n: number) => oneSiteOfArticles("c", n, (i) => ({ title: `Title ${String(n - i).padStart(2, "0")}`, body: "<p>x</p>" }))

describe("completeArgument", () => {
  it("should answer at most COMPLETION_VALUES ids, in id order, and say when there are more", async () => {
    const w = await makeWorld()
    await w.run(importData(manyArticles(COMPLETION_VALUES + 5)))
    const c = caller({ accountId: "acc_c" })
    const cut = await w.run(completeArgument(c, "article_id", "art_c"))
    expect(cut.values).toEqual(Array.from({ length: COMPLETION_VALUES }, (_, i) => `art_c${String(i).padStart(2, "0")}`))
    expect(cut.hasMore).toBe(true)
    // exactly as many as fit: none left over
    const all = await w.run(completeArgument(c, "article_id", "art_c0"))
    expect([all.values.length, all.hasMore]).toEqual([10, false])
    // titles after ids, by title
    const byTitle = await w.run(completeArgument(c, "article_id", "title 0"))
    expect(byTitle.values.slice(0, 2)).toEqual(["art_c24", "art_c23"])
    // another account's articles are never offered
    expect(await w.run(completeArgument(caller(), "article_id", "art_c"))).toEqual({ values: [], hasMore: false })
  })

  it("should read the first 200 units of a value without cutting a pair, and complete what no text starts with to nothing", async () => {
    const w = await makeWorld()
    const title = `${"t".repeat(COMPLETION_PREFIX_UNITS - 1)}\u{1F600} and more`
    await w.run(importData(oneSiteOfArticles("c", 1, () => ({ title, body: "<p>x</p>" }))))
    const c = caller({ accountId: "acc_c" })
    expect(await w.run(completeArgument(c, "article_id", title))).toEqual({ values: ["art_c00"], hasMore: false })
    expect(await w.run(completeArgument(c, "article_id", `${title}${"x".repeat(500)}`))).toEqual({ values: ["art_c00"], hasMore: false })
    for (const value of ["art_\u0000", "\u0000", "art_\uD800", "\uDC00"]) {
      expect([value, await w.run(completeArgument(c, "article_id", value))]).toEqual([value, { values: [], hasMore: false }])
      expect([value, await w.run(completeArgument(caller(), "site_id", value))]).toEqual([value, { values: [], hasMore: false }])
    }
  })

  it("should complete site ids and names, the account's own only", async () => {
    const w = await makeWorld()
    expect(await w.run(completeArgument(caller(), "site_id", "gar"))).toEqual({ values: ["site_a"], hasMore: false })
    expect(await w.run(completeArgument(caller(), "site_id", "site_b"))).toEqual({ values: [], hasMore: false })
  })
})
