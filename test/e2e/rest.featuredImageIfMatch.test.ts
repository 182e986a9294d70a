/** The featured image honours If-Match as every other article write does (RFC 9110 13.1.1): a stale one changes nothing. */
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { json, startTestServer, type TestServer } from "./helpers.ts"

let t: TestServer
beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PER_MINUTE: "100000" }, { storage: "memory" })
})
afterAll(async () => {
  await t?.close()
})

const upload = async (id: string, headers: Record<string, string> = {}) => {
  const form = new FormData()
  const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: { r: 9, g: 90, b: 9 } } }).png().toBuffer()
  form.append("image", new Blob([png], { type: "image/png" }), "pic.png")
  return t.api(`/api/v1/articles/${id}/featured-image`, { method: "POST", body: form, headers })
}

describe("POST /articles/{id}/featured-image with If-Match", () => {
  it("should refuse a stale If-Match with 412 precondition_failed and write nothing", async () => {
    const before = await t.api("/api/v1/articles/art_a05")
    const etag = before.headers.get("etag")!
    const article = await json(before)
    expect((await upload("art_a05", { "if-match": etag })).status).toBe(200)

    const stale = await upload("art_a05", { "if-match": etag })
    expect(stale.status).toBe(412)
    const problem = await json(stale)
    expect(problem.code).toBe("precondition_failed")
    expect(stale.headers.get("edit-limit-remaining")).toMatch(/^\d+$/)

    const after = await json(await t.api("/api/v1/articles/art_a05"))
    expect(after.revision).toBe(article.revision + 1)
    const revisions = await json(await t.api("/api/v1/articles/art_a05/revisions"))
    expect(revisions.data.map((r: { number: number }) => r.number)).toEqual([article.revision + 1, article.revision])
  })

  it("should refuse an If-Match that is not an entity tag with 400", async () => {
    const res = await upload("art_a06", { "if-match": "garbage" })
    expect(res.status).toBe(400)
    expect((await json(res)).code).toBe("invalid_request")
  })
})
