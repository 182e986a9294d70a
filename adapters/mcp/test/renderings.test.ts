import { describe, expect, it } from "vitest"
import { toolNamed } from "../src/tools.ts"

const render = (name: string, result: unknown): string => {
  const tool = toolNamed(name)
  if (tool === undefined) throw new Error(`no tool ${name}`)
  return tool.render(result)
}

describe("tool text renderings", () => {
  it("should say in diff_revisions' text when the comparison was coarser than word by word (its word counts mean less)", () => {
    const note = "The bodies differ too much to align line by line within one comparison's budget of work: every line between is shown removed and added whole."
    const text = render("diff_revisions", {
      from: 1,
      to: 2,
      title: null,
      "featured image": null,
      body: { unified: "--- revision 1\n+++ revision 2\n@@ -1 +1 @@\n-<p>a b</p>\n+<p>c d</p>", added_words: 2, removed_words: 2, granularity: "whole", note },
    })
    expect(text).toContain(note)
    const fine = render("diff_revisions", { from: 1, to: 2, title: null, "featured image": null, body: { unified: "", added_words: 0, removed_words: 0, granularity: "word", note: null } })
    expect(fine).not.toContain("null")
  })
})

describe("get_revision's text", () => {
  const revision = (image: { url: string; alt: string } | null) => ({
    id: "rev_1",
    article_id: "art_1",
    number: 1,
    origin: "editor",
    title: "Old title",
    body: "<p>Old body</p>",
    "featured image": image,
    reason: null,
    actor: { type: "user", id: "u1", name: "Alice" },
    restored_from: null,
    created_at: "2026-11-02T10:00:00.000Z",
  })

  it("should show the featured image the revision had, as its description promises (restore_revision brings it back)", () => {
    expect(render("get_revision", revision({ url: "https://alpha.example/old.jpg", alt: "A garden" }))).toContain("https://alpha.example/old.jpg")
    expect(render("get_revision", revision(null))).toMatch(/featured image: \(none\)/i)
  })
})

describe("list and summary texts an agent reads", () => {
  const pagination = (page: number, total: number) => ({ page, per_page: 20, total, total_pages: Math.ceil(total / 20) })

  it("should say a page past the end is past the last page, not 'page 9 of 1'", () => {
    const past = render("list_backlinks", { data: [], pagination: pagination(9, 3) })
    expect(past).toContain("Page 9 is past the last page, 1 (3 in total, 20 per page).")
    expect(past).not.toContain("of 1")
    expect(render("list_backlinks", { data: [], pagination: pagination(1, 0) })).toContain("Page 1 of 1 (0 in total")
  })

  it("should say in search_articles' text too that a page past the end is past the last page, not 'page 9 of 1'", () => {
    const past = render("search_articles", { data: [], pagination: pagination(9, 3) })
    expect(past).toContain("Page 9 is past the last page, 1 (3 in total, 20 per page).")
    expect(past).not.toContain("of 1")
    expect(render("search_articles", { data: [], pagination: pagination(1, 0) })).toContain("Page 1 of 1 (0 in total")
  })

  it("should end get_stats' empty parts with a full stop, not a colon followed by nothing", () => {
    const text = render("get_stats", {
      site_id: "site_1",
      period: { key: "2026-10", from: "2026-10-01", to: "2026-10-31" },
      articles: { count: 0, "word count": 0, items: [] },
      backlinks: { count: 0, industry: 0, local: 0, items: [] },
    })
    expect(text).toContain("0 published articles, 0 words.")
    expect(text).toContain("0 backlinks (0 industry, 0 local).")
    expect(text).not.toMatch(/:$/m)
  })
})
