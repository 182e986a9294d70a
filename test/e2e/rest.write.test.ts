import { MAX_JSON_TOKENS } from "@content-site/http"
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { middayToday, runningClock } from "../support/clock.ts"
import { A1_BODY, json, KEYS, PROTECTED_BACKLINK, PROTECTED_INTERNAL, startTestServer, type TestServer } from "./helpers.ts"

let t: TestServer
/** The server's clock runs from 12:00:30 UTC today: no UTC day (whose edits are counted) ends between two compared edits. */
const clock = runningClock(middayToday())
beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PER_MINUTE: "100000" }, { now: clock.now })
})
afterAll(async () => {
  await t?.close()
})

const put = (id: string, body: unknown, init: { query?: string; headers?: Record<string, string>; key?: string } = {}) =>
  t.api(`/api/v1/articles/${id}${init.query ?? ""}`, {
    method: "PUT",
    headers: { "content-type": "application/json", ...init.headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...(init.key !== undefined ? { key: init.key } : {}),
  })

const problemOf = async (res: Response, status: number, code: string) => {
  expect(res.status).toBe(status)
  const body = await json(res)
  expect(body.code).toBe(code)
  expect(body.request_id).toBe(res.headers.get("x-request-id"))
  return body
}

const revisionsOf = async (id: string) => (await json(await t.api(`/api/v1/articles/${id}/revisions?per_page=100`))).data as Array<{ number: number; origin: string }>

describe("PUT /articles/{id}", () => {
  it("should change the title as a new api revision with ETag and Edit-Limit-Remaining", async () => {
    const before = Number((await put("art_a02", { title: "Warm-up" })).headers.get("edit-limit-remaining"))
    const res = await put("art_a02", { title: "  A new title  ", reason: "clearer" })
    expect(res.status).toBe(200)
    const body = await json(res)
    expect(body.article.title).toBe("A new title")
    expect(body.revision).toMatchObject({ origin: "api", reason: "clearer", actor: { type: "api_key", id: "key_a" } })
    expect(body.revision).not.toHaveProperty("body")
    expect(body.sanitized).toEqual({ changed: false, removed: [] })
    expect(res.headers.get("etag")).toBe(`"art_a02-r${body.article.revision}"`)
    expect(Number(res.headers.get("edit-limit-remaining"))).toBe(before - 1)
    const log = await json(await t.api("/api/v1/activity?per_page=100"))
    expect(log.data.find((e: { request_id: string }) => e.request_id === res.headers.get("x-request-id"))).toMatchObject({
      action: "PUT /api/v1/articles/{id}",
      status: 200,
      article_id: "art_a02",
    })
  })

  it("should sanitise the body and say what was removed", async () => {
    const res = await put("art_a03", { body: '<p onclick="x()">Hi <a href="javascript:alert(1)">x</a> <a href="HTTPS://ok.test">ok</a></p><script>alert(1)</script><iframe src="https://e.test"></iframe>' })
    expect(res.status).toBe(200)
    const body = await json(res)
    expect(body.sanitized.changed).toBe(true)
    const removed = body.sanitized.removed.map((r: { what: string }) => r.what).join(" ")
    expect(removed).toMatch(/script/)
    const stored = (await json(await t.api("/api/v1/articles/art_a03"))).body as string
    expect(stored).not.toMatch(/<script|<iframe|onclick|javascript:/i)
    expect(stored).toContain("HTTPS://ok.test")
  })

  it("should refuse keys that cannot be changed here, naming them (OWASP API3)", async () => {
    for (const key of ["url", "status", "target keyword", "target_keyword", "site_id", "backlinks", "id", "word count", "featured image", "published_at", "revision"]) {
      const body = await problemOf(await put("art_a04", { title: "ok", [key]: key === "backlinks" ? [] : "x" }), 400, "invalid_request")
      expect(body.detail).toContain(`'${key}'`)
      expect(body.errors.some((e: { path: string }) => e.path === key)).toBe(true)
    }
    expect((await json(await t.api("/api/v1/articles/art_a04"))).title).toBe("Article 4")
  })

  it("should refuse an edit without title and body, an empty title and a too long title", async () => {
    await problemOf(await put("art_a04", { reason: "nothing" }), 400, "invalid_request")
    await problemOf(await put("art_a04", {}), 400, "invalid_request")
    await problemOf(await put("art_a04", { title: "   " }), 400, "invalid_request")
    await problemOf(await put("art_a04", { title: "x".repeat(301) }), 400, "invalid_request")
    await problemOf(await put("art_a04", { title: 5 }), 400, "invalid_request")
    await problemOf(await put("art_a04", { body: "x", reason: "r".repeat(501) }), 400, "invalid_request")
  })

  it("should count a title's and a reason's characters as code points: 300 and 500 emoji fit, one more does not", async () => {
    const emoji = (n: number) => "\u{1F600}".repeat(n)
    const ok = await put("art_a12", { title: emoji(300), reason: emoji(500) })
    expect(ok.status).toBe(200)
    const body = await json(ok)
    expect(body.article.title).toBe(emoji(300))
    const revision = await json(await t.api(`/api/v1/articles/art_a12/revisions/${body.revision.number}`))
    expect(revision.reason).toBe(emoji(500))
    expect((await put("art_a12", { title: emoji(151) })).status).toBe(200)
    const long = await problemOf(await put("art_a12", { title: emoji(301) }), 400, "invalid_request")
    expect(long.errors.map((e: { path: string }) => e.path)).toEqual(["title"])
    const reason = await problemOf(await put("art_a12", { title: "t", reason: emoji(501) }), 400, "invalid_request")
    expect(reason.errors.map((e: { path: string }) => e.path)).toEqual(["reason"])
    const image = await postImage("art_a12", formWith({ image: new Blob([await png(20, 20)], { type: "image/png" }), alt: emoji(500) }))
    expect(image.status).toBe(200)
    expect((await json(image)).article["featured image"].alt).toBe(emoji(500))
    const alt = await problemOf(await postImage("art_a12", formWith({ image: new Blob([await png(20, 20)], { type: "image/png" }), alt: emoji(501) })), 400, "invalid_request")
    expect(alt.errors.map((e: { path: string }) => e.path)).toEqual(["alt"])
  })

  it("should refuse removing, changing or forging protected blocks with 422 listing each block", async () => {
    const removed = await problemOf(await put("art_a1", { body: `<p>Then ${PROTECTED_INTERNAL}.</p>` }), 422, "protected_link_changed")
    expect(removed.blocks).toEqual([expect.objectContaining({ kind: "removed", href: "https://partner.test/offer" })])

    const changedHref = A1_BODY.replace("https://partner.test/offer", "https://evil.test/")
    const changed = await problemOf(await put("art_a1", { body: changedHref }), 422, "protected_link_changed")
    expect(changed.blocks.map((b: { kind: string }) => b.kind)).toContain("changed")

    const forged = `${A1_BODY}<p><a href="https://spam.test" data-service-protected="backlink">spam</a></p>`
    const forgedBody = await problemOf(await put("art_a1", { body: forged }), 422, "protected_link_changed")
    expect(forgedBody.blocks).toEqual([expect.objectContaining({ kind: "forged", href: "https://spam.test" })])

    const both = await problemOf(await put("art_a1", { body: "<p>all gone</p>" }), 422, "protected_link_changed")
    expect(both.blocks.length).toBe(2)
    expect((await revisionsOf("art_a1")).length).toBe(1)
  })

  it("should allow moving a protected block", async () => {
    const moved = `<p>Then ${PROTECTED_INTERNAL}.</p><h2>Intro</h2><p>Read the ${PROTECTED_BACKLINK} first.</p>`
    const res = await put("art_a1", { body: moved })
    expect(res.status).toBe(200)
    expect((await json(res)).revision.number).toBe(2)
  })

  it("should create no revision and count no edit for an edit identical to the article", async () => {
    const current = await json(await t.api("/api/v1/articles/art_a05"))
    const first = await put("art_a05", { title: current.title })
    const body = await json(first)
    expect(body.revision).toBeNull()
    const again = await put("art_a05", { title: current.title, body: current.body })
    expect((await json(again)).revision).toBeNull()
    expect(again.headers.get("edit-limit-remaining")).toBe(first.headers.get("edit-limit-remaining"))
    expect((await revisionsOf("art_a05")).length).toBe(1)
  })

  it("should run everything but write nothing on ?dry_run=true", async () => {
    const before = await put("art_a06", { title: "probe" }, { query: "?dry_run=true" })
    const res = await put("art_a06", { title: "Dry title", body: "<p>dry</p><script>x</script>" }, { query: "?dry_run=true" })
    expect(res.status).toBe(200)
    const body = await json(res)
    expect(body).toMatchObject({ dry_run: true, revision: null })
    expect(body.article.title).toBe("Dry title")
    expect(body.sanitized.changed).toBe(true)
    expect(res.headers.get("edit-limit-remaining")).toBe(before.headers.get("edit-limit-remaining"))
    expect((await json(await t.api("/api/v1/articles/art_a06"))).title).toBe("Article 6")
    expect((await revisionsOf("art_a06")).length).toBe(1)
    // A dry run answers what the real call would: the same 422 with its blocks, nothing written.
    const revisionsBefore = (await revisionsOf("art_a1")).length
    const dry = await problemOf(await put("art_a1", { body: "<p>gone</p>" }, { query: "?dry_run=true" }), 422, "protected_link_changed")
    const real = await problemOf(await put("art_a1", { body: "<p>gone</p>" }), 422, "protected_link_changed")
    expect(dry.blocks).toHaveLength(2)
    expect(dry.blocks).toEqual(real.blocks)
    expect(dry.detail).toBe(real.detail)
    expect((await revisionsOf("art_a1")).length).toBe(revisionsBefore)
    await problemOf(await put("art_a06", { title: "x" }, { query: "?dry_run=maybe" }), 400, "invalid_request")
  })

  it("should honour If-Match: the current tag, any tag of a list and * apply; a stale, weak or foreign tag is 412; a malformed one 400", async () => {
    const etag = (await t.api("/api/v1/articles/art_a07")).headers.get("etag") as string
    expect(etag).toBe('"art_a07-r1"')
    const ok = await put("art_a07", { title: "If-Match one" }, { headers: { "If-Match": etag } })
    expect(ok.status).toBe(200)
    const stale = await problemOf(await put("art_a07", { title: "stale" }, { headers: { "If-Match": etag } }), 412, "precondition_failed")
    expect(stale.detail).toContain("revision 2")
    await problemOf(await put("art_a07", { title: "stale" }, { headers: { "If-Match": etag }, query: "?dry_run=true" }), 412, "precondition_failed")
    // RFC 9110 13.1.1: the condition holds when any listed tag matches, compared strongly
    expect((await put("art_a07", { title: "listed" }, { headers: { "If-Match": '"art_a07-r2", "art_a07-r1"' } })).status).toBe(200)
    expect((await put("art_a07", { title: "listed again" }, { headers: { "If-Match": '"art_a07-r1", "art_a07-r3"' } })).status).toBe(200)
    const both = await problemOf(await put("art_a07", { title: "both stale" }, { headers: { "If-Match": '"art_a07-r2", "art_a07-r1"' } }), 412, "precondition_failed")
    expect(both.detail).toMatch(/revision 4, not 2 or 1/)
    const weak = await problemOf(await put("art_a07", { title: "weak" }, { headers: { "If-Match": 'W/"art_a07-r4"' } }), 412, "precondition_failed")
    for (const header of ['"art_a08-r1"', '"art_a07-r99999999999999999999"', 'W/"art_a07-r4", "art_a08-r4"']) {
      const refused = await problemOf(await put("art_a07", { title: "foreign" }, { headers: { "If-Match": header } }), 412, "precondition_failed")
      expect(refused.detail, header).toBe(weak.detail)
    }
    expect(weak.detail).toMatch(/revision 4, and the precondition names no revision of this article/)
    expect(weak.detail).not.toMatch(/not 0/)
    expect((await put("art_a07", { title: "star" }, { headers: { "If-Match": "*" } })).status).toBe(200)
    await problemOf(await put("art_a07", { title: "bad" }, { headers: { "If-Match": "art_a07-r4" } }), 400, "invalid_request")
    await problemOf(await put("art_a07", { title: "bad" }, { headers: { "If-Match": '"art_a07-r5" "art_a07-r4"' } }), 400, "invalid_request")
    expect((await json(await t.api("/api/v1/articles/art_a07"))).title).toBe("star")
  })

  it("should refuse malformed JSON, wrong content types and empty bodies without a 500", async () => {
    await problemOf(await put("art_a08", "{not json"), 400, "invalid_request")
    await problemOf(await put("art_a08", "[1,2]"), 400, "invalid_request")
    await problemOf(await put("art_a08", ""), 400, "invalid_request")
    await problemOf(await put("art_a08", '{"title":"x"}', { headers: { "content-type": "text/plain" } }), 415, "unsupported_media_type")
    const charset = await problemOf(await put("art_a08", '{"title":"x"}', { headers: { "content-type": "application/json; charset=latin1" } }), 415, "unsupported_media_type")
    // the sentence names what is wrong: the charset, not the type it did send
    expect(charset.detail).toMatch(/UTF-8/)
    expect(charset.detail).toContain("latin1")
    await problemOf(
      await t.api("/api/v1/articles/art_a08", { method: "PUT", body: new Blob(['{"title":"x"}']) }),
      415,
      "unsupported_media_type",
    )
    await problemOf(await put("art_a08", Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]).toString("latin1")), 400, "invalid_request")
  })

  it("should read a media type in any case, as HTTP says it is (RFC 9110 8.3.1), on the JSON and the image endpoints", async () => {
    for (const type of ["Application/JSON", "APPLICATION/JSON; Charset=UTF-8", "application/json ; charset=utf-8"]) {
      expect((await put("art_a08", { title: "any case" }, { query: "?dry_run=true", headers: { "content-type": type } })).status, type).toBe(200)
    }
    // read as JSON (an http URL is refused as unsafe), not refused as another media type
    await problemOf(await postImage("art_a10", JSON.stringify({ url: "http://example.com/a.png" }), { type: "Application/Json" }), 422, "unsafe_url")
    // read as multipart (a broken one is a 400), not refused as another media type
    await problemOf(await postImage("art_a10", "--x\r\nbroken", { type: "Multipart/Form-Data; boundary=zzz" }), 400, "invalid_request")
  })

  it("should refuse huge bodies with 413 and deep nesting with 400 (OWASP API4)", async () => {
    await problemOf(await put("art_a08", JSON.stringify({ body: "x".repeat(4 * 1024 * 1024) })), 413, "payload_too_large")
    await problemOf(await put("art_a08", `{"title":${"[".repeat(5000)}${"]".repeat(5000)}}`), 400, "invalid_request")
    // more values than MAX_JSON_TOKENS: refused before JSON.parse (a million `{}` held the event loop half a second there)
    const wide = await problemOf(await put("art_a08", `{"title":[${"{},".repeat(MAX_JSON_TOKENS / 2)}0]}`), 400, "invalid_request")
    expect(wide.detail).toBe(`The JSON body holds more than ${MAX_JSON_TOKENS} values and keys.`)
    // at the limit it is parsed, and refused for the title it holds
    const within = await problemOf(await put("art_a08", `{"title":[${"{},".repeat(MAX_JSON_TOKENS / 2 - 2)}0]}`), 400, "invalid_request")
    expect(within.detail).toContain("title")
    const deepHtml = `${"<div>".repeat(300)}x${"</div>".repeat(300)}`
    await problemOf(await put("art_a08", { body: deepHtml }), 400, "invalid_request")
    await problemOf(await put("art_a08", { body: "y".repeat(1024 * 1024 + 10) }), 400, "invalid_request")
  })

  it("should keep revision numbers unique and gapless under concurrent edits", async () => {
    // Without If-Match, concurrent edits queue and each applies as its own revision (last writer
    // wins): with the default lock wait none of eight short edits may be refused.
    const titles = Array.from({ length: 8 }, (_, i) => `Concurrent ${i}`)
    const results = await Promise.all(titles.map((title) => put("art_a09", { title })))
    const bodies = await Promise.all(results.map((r) => json(r)))
    expect(results.map((r) => r.status)).toEqual(titles.map(() => 200))
    // Each edit got its own revision number, 2 to 9, and wrote its own title in it.
    const given = bodies.map((b) => b.revision.number as number)
    expect([...given].sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9])
    const revisions = (await json(await t.api("/api/v1/articles/art_a09/revisions?per_page=100"))).data as Array<{ number: number; title: string }>
    expect(revisions.map((r) => r.number)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1])
    for (const [i, body] of bodies.entries()) {
      expect(revisions.find((r) => r.number === body.revision.number)?.title).toBe(titles[i])
    }
    // The article is the last applied edit.
    const current = await json(await t.api("/api/v1/articles/art_a09"))
    expect(current.revision).toBe(9)
    expect(current.title).toBe(revisions[0]?.title)
  })
})

const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 30, b: 30 } } }).png().toBuffer()

const postImage = (id: string, form: FormData | string, init: { type?: string; key?: string } = {}) =>
  t.api(`/api/v1/articles/${id}/featured-image`, {
    method: "POST",
    body: form,
    ...(typeof form === "string" ? { headers: { "content-type": init.type ?? "application/json" } } : {}),
    ...(init.key !== undefined ? { key: init.key } : {}),
  })

const formWith = (parts: Record<string, Blob | string>, filename = "pic.png") => {
  const form = new FormData()
  for (const [k, v] of Object.entries(parts)) {
    if (typeof v === "string") form.append(k, v)
    else form.append(k, v, filename)
  }
  return form
}

describe("POST /articles/{id}/featured-image", () => {
  it("should store an uploaded image, serve it under /media and make a revision", async () => {
    const res = await postImage("art_a10", formWith({ image: new Blob([await png(40, 30)], { type: "image/png" }), alt: "A red square" }))
    expect(res.status).toBe(200)
    const body = await json(res)
    expect(body.article["featured image"].alt).toBe("A red square")
    expect(body.article["featured image"].url.startsWith(`${t.url}/media/`)).toBe(true)
    expect(body.revision).toMatchObject({ number: 2, origin: "api" })
    expect(res.headers.get("edit-limit-remaining")).toMatch(/^\d+$/)
    const media = await fetch(body.article["featured image"].url)
    expect(media.status).toBe(200)
    expect(media.headers.get("content-type")).toMatch(/^image\//)
    expect(media.headers.get("x-content-type-options")).toBe("nosniff")
  })

  it("should refuse SVG, non-images, oversized files, huge dimensions and malformed forms", async () => {
    const svg = new Blob(['<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'], { type: "image/svg+xml" })
    await problemOf(await postImage("art_a10", formWith({ image: svg }, "x.svg")), 415, "unsupported_image")
    await problemOf(await postImage("art_a10", formWith({ image: new Blob(["hello"], { type: "image/png" }) })), 415, "unsupported_image")
    await problemOf(await postImage("art_a10", formWith({ image: new Blob([new Uint8Array(10 * 1024 * 1024 + 100)]) })), 413, "payload_too_large")
    await problemOf(await postImage("art_a10", formWith({ image: new Blob([await png(8001, 2)]) })), 413, "payload_too_large")
    await problemOf(await postImage("art_a10", formWith({ alt: "no file" })), 400, "invalid_request")
    await problemOf(await postImage("art_a10", formWith({ photo: new Blob([await png(4, 4)]) })), 400, "invalid_request")
    const extra = await problemOf(await postImage("art_a10", formWith({ image: new Blob([await png(4, 4)]), status: "draft" })), 400, "invalid_request")
    expect(extra.detail).toContain("'status'")
    // The image sent as a text field: told to send it as a file, never that 'image' cannot be set.
    const text = await problemOf(await postImage("art_a10", formWith({ image: "https://example.test/photo.jpg" })), 400, "invalid_request")
    expect(text.errors).toEqual([{ path: "image", message: "Expected a file, got a text field" }])
    expect(text.detail).not.toContain("cannot be set here")
    await problemOf(await postImage("art_a10", "hello", { type: "text/plain" }), 415, "unsupported_media_type")
    await problemOf(await postImage("art_a10", JSON.stringify({ url: "https://example.com/a.png", site_id: "x" })), 400, "invalid_request")
    await problemOf(await postImage("art_a10", "--x\r\nbroken", { type: "multipart/form-data; boundary=zzz" }), 400, "invalid_request")
    // A part without a field name: multer's own error, a 400 like its limits (never a 500).
    const unnamed = '--x\r\nContent-Disposition: form-data; filename="a.png"\r\n\r\nabc\r\n--x--\r\n'
    await problemOf(await postImage("art_a10", unnamed, { type: "multipart/form-data; boundary=x" }), 400, "invalid_request")
    await problemOf(
      await postImage("art_a10", formWith({ image: new Blob([await png(4, 4)]) }), { key: KEYS.aRead }),
      403,
      "insufficient_scope",
    )
    expect((await revisionsOf("art_a10")).length).toBe(2)
  })

  it("should refuse image URLs that are not https or point at non-public addresses (OWASP API7)", async () => {
    const urls = [
      "http://example.com/a.png",
      "ftp://example.com/a.png",
      "file:///etc/passwd",
      "https://127.0.0.1/a.png",
      "https://localhost/a.png",
      "https://[::1]/a.png",
      "https://2130706433/a.png",
      "https://0x7f000001/a.png",
      "https://0177.0.0.1/a.png",
      "https://127.1/a.png",
      "https://0.0.0.0/a.png",
      "https://10.0.0.1/a.png",
      "https://172.16.0.1/a.png",
      "https://192.168.1.1/a.png",
      "https://100.64.0.1/a.png",
      "https://169.254.169.254/latest/meta-data/",
      "https://[fe80::1]/a.png",
      "https://[fd00::1]/a.png",
      "https://[::ffff:127.0.0.1]/a.png",
      "https://[::ffff:7f00:1]/a.png",
      "https://224.0.0.1/a.png",
      "https://[ff02::1]/a.png",
    ]
    for (const url of urls) {
      const res = await postImage("art_a11", JSON.stringify({ url, alt: "x" }))
      const body = await json(res)
      expect({ url, status: res.status, code: body.code }).toEqual({ url, status: 422, code: "unsafe_url" })
    }
    expect((await revisionsOf("art_a11")).length).toBe(1)
  })
})
