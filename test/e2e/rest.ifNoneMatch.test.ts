/**
 * If-None-Match on the article writes (RFC 9110 13.1.2, 13.2): `*` or a list naming the article's
 * current ETag (compared weakly) is a 412 `precondition_failed` that writes and counts nothing,
 * evaluated after If-Match; a list naming other tags lets the write proceed; a malformed one is a
 * 400 as a malformed If-Match is.
 */
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

const send = (method: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  t.api(`/api/v1${path}`, {
    method,
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })

const upload = async (id: string, headers: Record<string, string> = {}) => {
  const form = new FormData()
  const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: { r: 9, g: 90, b: 9 } } }).png().toBuffer()
  form.append("image", new Blob([png], { type: "image/png" }), "pic.png")
  return t.api(`/api/v1/articles/${id}/featured-image`, { method: "POST", body: form, headers })
}

const problemOf = async (res: Response, status: number, code: string) => {
  expect(res.status).toBe(status)
  const body = await json(res)
  expect(body.code).toBe(code)
  return body
}

const etagOf = async (id: string) => (await t.api(`/api/v1/articles/${id}`)).headers.get("etag") as string
const revisionOf = async (id: string) => (await json(await t.api(`/api/v1/articles/${id}`))).revision as number

describe("If-None-Match on PUT, PATCH, the featured image and the restore", () => {
  it("should answer 412 for * or a list naming the current ETag (weakly), writing and counting nothing, and log the refusal", async () => {
    const etag = await etagOf("art_a02")
    const before = await revisionOf("art_a02")
    const weak = `W/${etag}`
    const writes: Array<[string, (h: Record<string, string>) => Promise<Response>]> = [
      ["PUT", (h) => send("PUT", "/articles/art_a02", { title: "INM put" }, h)],
      ["PUT dry run", (h) => send("PUT", "/articles/art_a02?dry_run=true", { title: "INM put" }, h)],
      ["PATCH", (h) => send("PATCH", "/articles/art_a02", { title: "INM patch" }, h)],
      ["PATCH dry run", (h) => send("PATCH", "/articles/art_a02?dry_run=true", { title: "INM patch" }, h)],
      ["featured image", (h) => upload("art_a02", h)],
    ]
    for (const [name, write] of writes) {
      for (const header of ["*", etag, weak, `"art_a02-r99", ${etag}`]) {
        const res = await write({ "If-None-Match": header })
        const problem = await problemOf(res, 412, "precondition_failed")
        expect(problem.detail, `${name} ${header}`).toMatch(/If-None-Match/)
        const left = res.headers.get("edit-limit-remaining")
        expect(left, name).toMatch(/^\d+$/)
        const log = await json(await t.api("/api/v1/activity?per_page=100"))
        expect(log.data.find((e: { request_id: string }) => e.request_id === res.headers.get("x-request-id"))).toMatchObject({
          status: 412,
          error_code: "precondition_failed",
          article_id: "art_a02",
        })
      }
    }
    expect(await revisionOf("art_a02")).toBe(before)
    // nothing was counted: a dry run of a real change says the same edits are left as before the refusals
    const first = await send("PUT", "/articles/art_a02?dry_run=true", { title: "count" })
    const refused = await send("PUT", "/articles/art_a02", { title: "count" }, { "If-None-Match": "*" })
    expect(refused.headers.get("edit-limit-remaining")).toBe(first.headers.get("edit-limit-remaining"))
  })

  it("should let the write proceed when the list names other tags only", async () => {
    const before = await revisionOf("art_a03")
    const other = `"art_a03-r${before + 7}", W/"art_a04-r${before}", "elsewhere"`
    expect((await send("PUT", "/articles/art_a03", { title: "INM other put" }, { "If-None-Match": other })).status).toBe(200)
    expect((await send("PATCH", "/articles/art_a03", { title: "INM other patch" }, { "If-None-Match": other })).status).toBe(200)
    expect((await upload("art_a03", { "If-None-Match": other })).status).toBe(200)
    expect((await send("POST", `/articles/art_a03/revisions/${before}/restore`, undefined, { "If-None-Match": other })).status).toBe(200)
    expect(await revisionOf("art_a03")).toBe(before + 4)
  })

  it("should refuse a restore at a revision If-None-Match names", async () => {
    const before = await revisionOf("art_a04")
    expect((await send("PUT", "/articles/art_a04", { title: "INM restore" })).status).toBe(200)
    const etag = await etagOf("art_a04")
    for (const header of ["*", etag, `W/${etag}`]) {
      const res = await send("POST", `/articles/art_a04/revisions/${before}/restore`, { reason: "back" }, { "If-None-Match": header })
      await problemOf(res, 412, "precondition_failed")
    }
    expect(await revisionOf("art_a04")).toBe(before + 1)
  })

  it("should evaluate If-Match first, then If-None-Match", async () => {
    const etag = await etagOf("art_a05")
    const stale = await problemOf(await send("PUT", "/articles/art_a05", { title: "both" }, { "If-Match": '"art_a05-r99"', "If-None-Match": '"art_a05-r99"' }), 412, "precondition_failed")
    expect(stale.detail).not.toMatch(/If-None-Match/)
    const named = await problemOf(await send("PUT", "/articles/art_a05", { title: "both" }, { "If-Match": etag, "If-None-Match": etag }), 412, "precondition_failed")
    expect(named.detail).toMatch(/If-None-Match/)
    expect((await send("PUT", "/articles/art_a05", { title: "both ok" }, { "If-Match": etag, "If-None-Match": '"art_a05-r99"' })).status).toBe(200)
  })

  it("should refuse a malformed If-None-Match with 400 invalid_request on every write", async () => {
    const before = await revisionOf("art_a06")
    for (const header of ["art_a06-r1", '"art_a06-r1" "art_a06-r2"', '"art_a06-r1", *']) {
      for (const res of [
        await send("PUT", "/articles/art_a06", { title: "bad" }, { "If-None-Match": header }),
        await send("PATCH", "/articles/art_a06", { title: "bad" }, { "If-None-Match": header }),
        await upload("art_a06", { "If-None-Match": header }),
        await send("POST", "/articles/art_a06/revisions/1/restore", undefined, { "If-None-Match": header }),
      ]) {
        const problem = await problemOf(res, 400, "invalid_request")
        expect(problem.errors, header).toEqual([expect.objectContaining({ path: "If-None-Match" })])
      }
    }
    expect(await revisionOf("art_a06")).toBe(before)
  })

  it("should keep Idempotency-Key semantics: the same request replays its 412, another If-None-Match with the key is a reused key", async () => {
    const key = `inm-${Date.now()}`
    const first = await send("PUT", "/articles/art_a07", { title: "keyed" }, { "Idempotency-Key": key, "If-None-Match": "*" })
    await problemOf(first, 412, "precondition_failed")
    const again = await send("PUT", "/articles/art_a07", { title: "keyed" }, { "Idempotency-Key": key, "If-None-Match": "*" })
    await problemOf(again, 412, "precondition_failed")
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    await problemOf(await send("PUT", "/articles/art_a07", { title: "keyed" }, { "Idempotency-Key": key }), 422, "idempotency_key_reused")
  })
})
