import { describe, expect, it } from "vitest"
import { applyArticleChange, type ArticleChange, type ArticleRecord } from "../../src/index.ts"

const current: ArticleRecord = {
  id: "art_1", account_id: "acc_1", site_id: "site_1", title: "Old", url: "https://x.test/a", status: "published",
  published_at: "2026-11-01T00:00:00.000Z", target_keyword: "k", word_count: 1, featured_image: null,
  body: "<p>old</p>", updated_at: "2026-11-01T00:00:00.000Z", revision: 4,
}
const change: ArticleChange = {
  title: "New", body: "<p>new words</p>", word_count: 2, featured_image: { url: "https://cs.test/media/a.png", alt: "a" },
  updated_at: "2026-11-02T00:00:00.000Z",
  revision: { id: "rev_9", origin: "editor", reason: "why", actor: { type: "user", id: "acc_1", name: "A" }, restored_from: 2, created_at: "2026-11-02T00:00:00.000Z" },
  activity: null,
}

describe("applyArticleChange", () => {
  it("should number the revision one past the current one and move the article to it", () => {
    const { article, revision } = applyArticleChange(current, change)
    expect(revision.number).toBe(5)
    expect(article.revision).toBe(5)
  })
  it("should keep what a change cannot touch and record the new state in the revision", () => {
    const { article, revision } = applyArticleChange(current, change)
    expect([article.url, article.status, article.site_id, article.target_keyword, article.published_at]).toEqual([current.url, current.status, current.site_id, current.target_keyword, current.published_at])
    expect(revision).toMatchObject({ title: "New", body: "<p>new words</p>", origin: "editor", restored_from: 2, article_id: "art_1", account_id: "acc_1" })
    expect(article).toMatchObject({ title: "New", word_count: 2, updated_at: "2026-11-02T00:00:00.000Z" })
  })
})
