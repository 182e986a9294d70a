import { HEADLINE_HTML_CHARACTERS, type ArticleRecord } from "@content-site/core"
import { describe, expect, it } from "vitest"
import { headlineWork, parseQuery, scoreArticle } from "../src/search.ts"

describe("scoreArticle's body headline", () => {
  it("should mark at most the searched text of HEADLINE_HTML_CHARACTERS characters of a 1 MiB body, however many words match", () => {
    // every word a match: marking the whole searched text (200 000 characters) cost a hit 5 times the bound
    const article = { title: "t", target_keyword: "", body: `<p>${"a ".repeat(500_000)}</p>` } as unknown as ArticleRecord
    const before = headlineWork.characters
    const scored = scoreArticle(article, parseQuery("a OR b"), true)
    expect(scored?.headline).toContain("\uFDD0a\uFDD1")
    expect(headlineWork.characters - before).toBeLessThanOrEqual(HEADLINE_HTML_CHARACTERS)
    expect(headlineWork.characters - before).toBeGreaterThan(0)
  })
})
