/**
 * A body stored before today's input limits (over 1 MiB once sanitised, or past the parse
 * budget) stays readable and editable: the limits hold a body sent in, never the one already
 * stored. Such bodies are written straight into the database here, as an import or a release
 * before the limits would have left them.
 */
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { json, PROTECTED_BACKLINK, startTestServer, type TestServer } from "./helpers.ts"

let t: TestServer
let db: pg.Client

/** 150 000 paragraphs, about 1.5 MB: over the 1 MiB limit and past the parse budget (131 072). */
const BIG = `<p>Start: ${PROTECTED_BACKLINK}.</p>${"<p>w</p>".repeat(150_000)}`

/** Makes `article`'s current body and revision 1 the big stored body, as if written long ago. */
const storeBig = async (article: string) => {
  await db.query("update articles set body = $1 where id = $2", [BIG, article])
  await db.query("update revisions set body = $1 where article_id = $2 and number = 1", [BIG, article])
}

const put = (article: string, body: Record<string, unknown>) =>
  t.api(`/api/v1/articles/${article}`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })

beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PER_MINUTE: "100000" })
  db = new pg.Client({ connectionString: t.databaseUrl })
  await db.connect()
  for (const article of ["art_a20", "art_a21", "art_a22", "art_a23"]) await storeBig(article)
})
afterAll(async () => {
  await db?.end()
  await t?.close()
})

describe("an article whose stored body is over today's input limits", () => {
  it("should be read with its protected links", async () => {
    const res = await t.api("/api/v1/articles/art_a20")
    expect(res.status).toBe(200)
    const article = await json(res)
    expect(article.body.length).toBe(BIG.length)
    expect(article.protected_links).toEqual([{ type: "backlink", href: expect.any(String), text: expect.any(String) }])
  })

  it("should take a title edit, and a smaller body that keeps its protected link", async () => {
    const titled = await put("art_a20", { title: "Renamed" })
    expect(titled.status).toBe(200)
    expect((await json(titled)).revision.number).toBe(2)
    const smaller = await put("art_a20", { body: `<p>Start: ${PROTECTED_BACKLINK}.</p><p>Short now.</p>` })
    expect(smaller.status).toBe(200)
    expect((await json(smaller)).article["word count"]).toBeGreaterThan(0)
  })

  it("should refuse a smaller body without the protected link as it refuses any other (422), dry run and real", async () => {
    for (const query of ["?dry_run=true", ""]) {
      const res = await t.api(`/api/v1/articles/art_a21${query}`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ body: "<p>Nothing kept.</p>" }),
      })
      expect(res.status).toBe(422)
      expect((await json(res)).code).toBe("protected_link_changed")
    }
  })

  it("should hold a PATCH whose result is still over 1 MiB to the limit (the 400 of a PUT with that body), not fail", async () => {
    const res = await t.api("/api/v1/articles/art_a22", {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ edits: [{ find: "<p>Start: ", replace: "<p>Begin: " }] }),
    })
    expect(res.status).toBe(400)
    const problem = await json(res)
    expect(problem.code).toBe("invalid_request")
    expect(problem.errors).toEqual([{ path: "body", message: expect.stringMatching(/larger than 1 MiB/) }])
  })

  it("should restore the big revision over a small one, and diff the two", async () => {
    const small = await put("art_a23", { body: `<p>Start: ${PROTECTED_BACKLINK}.</p><p>Small.</p>` })
    expect(small.status).toBe(200)
    const diff = await t.api("/api/v1/articles/art_a23/diff?from=1&to=2")
    expect(diff.status).toBe(200)
    expect((await json(diff)).body.removed_words).toBeGreaterThanOrEqual(150_000)
    const restored = await t.api("/api/v1/articles/art_a23/revisions/1/restore", { method: "POST" })
    expect(restored.status).toBe(200)
    const body = await json(restored)
    expect(body.revision.restored_from).toBe(1)
    expect(body.article.body.length).toBe(BIG.length)
  })

  it("should read the big revision with its body", async () => {
    const res = await t.api("/api/v1/articles/art_a23/revisions/1")
    expect(res.status).toBe(200)
    expect((await json(res)).body.length).toBe(BIG.length)
  })
})
