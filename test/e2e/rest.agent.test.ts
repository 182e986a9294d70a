/**
 * Agent-grade editing over real HTTP on PostgreSQL: protected_links, PATCH (find and replace),
 * the revision diff, restore, and Idempotency-Key on every write, across two instances of one
 * database. Every JSON answer is checked against the published OpenAPI document (helpers.ts).
 */
import { ArticleWriter, editBudget, makeChange } from "@content-site/core"
import { startServer, type StartedServer } from "../../apps/server/server.ts"
import { Effect } from "effect"
import pg from "pg"
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

const send = (method: string, path: string, body?: unknown, init: { headers?: Record<string, string>; key?: string } = {}) =>
  t.api(`/api/v1${path}`, {
    method,
    headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...init.headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    ...(init.key !== undefined ? { key: init.key } : {}),
  })
const patch = (id: string, body: unknown, init: { query?: string; headers?: Record<string, string>; key?: string } = {}) =>
  send("PATCH", `/articles/${id}${init.query ?? ""}`, body, init)
const article = async (id: string) => json(await send("GET", `/articles/${id}`))
const revisionsOf = async (id: string) =>
  (await json(await send("GET", `/articles/${id}/revisions?per_page=100`))).data as Array<{ number: number; origin: string; restored_from: number | null }>

const problemOf = async (res: Response, status: number, code: string) => {
  expect(res.status).toBe(status)
  const body = await json(res)
  expect(body.code).toBe(code)
  return body
}

describe("protected_links", () => {
  it("should list every protected element of the single article in document order", async () => {
    const a = await article("art_a1")
    expect(a.protected_links).toEqual([
      { type: "backlink", href: "https://partner.test/offer", text: "partner offer" },
      { type: "internal", href: "https://alpha.test/guide", text: "our guide" },
    ])
    expect((await article("art_a05")).protected_links).toEqual([])
  })

  it("should be in the article of every write answer", async () => {
    const res = await patch("art_a1", { title: "Protected article, renamed" })
    expect(res.status).toBe(200)
    expect((await json(res)).article.protected_links).toHaveLength(2)
  })
})

describe("PATCH /articles/{id}", () => {
  it("should apply edits in order on the body as GET serves it, as one api revision", async () => {
    const before = await article("art_a06")
    const res = await patch("art_a06", {
      edits: [
        { find: "Body of article 6", replace: "The body of article six" },
        { find: "six with", replace: "six, now with" },
      ],
      reason: "tighter",
    })
    expect(res.status).toBe(200)
    const body = await json(res)
    expect(body.article.body).toBe("<p>The body of article six, now with some words.</p>")
    expect(body.revision).toMatchObject({ number: before.revision + 1, origin: "api", reason: "tighter" })
    expect(res.headers.get("etag")).toBe(`"art_a06-r${before.revision + 1}"`)
    expect(res.headers.get("edit-limit-remaining")).toMatch(/^\d+$/)
    const log = await json(await send("GET", "/activity?per_page=100"))
    expect(log.data.find((e: { request_id: string }) => e.request_id === res.headers.get("x-request-id"))).toMatchObject({
      action: "PATCH /api/v1/articles/{id}",
      status: 200,
      article_id: "art_a06",
      site_id: "site_a1",
    })
  })

  it("should refuse a find found 0 or 2+ times, naming each edit with its count, and change nothing", async () => {
    await patch("art_a07", { edits: [{ find: "Body", replace: "Body Body" }] })
    const before = await article("art_a07")
    const res = await patch("art_a07", {
      edits: [
        { find: "not there", replace: "x" },
        { find: "Body", replace: "x" },
        { find: "some words", replace: "more words" },
      ],
    })
    const problem = await problemOf(res, 422, "edit_not_applicable")
    expect(problem.errors).toEqual([
      { path: "edits/0/find", message: expect.any(String), count: 0 },
      { path: "edits/1/find", message: expect.any(String), count: 2 },
    ])
    expect(await article("art_a07")).toMatchObject({ revision: before.revision, body: before.body })
  })

  it("should never remove or change a protected link", async () => {
    const before = await article("art_a1")
    for (const edits of [
      [{ find: PROTECTED_BACKLINK, replace: "partner offer" }],
      [{ find: 'href="https://partner.test/offer"', replace: 'href="https://evil.test/"' }],
      [{ find: ">our guide<", replace: ">their guide<" }],
      [{ find: "<h2>Intro</h2>", replace: '<h2>Intro <a href="https://x.test" data-service-protected="backlink">x</a></h2>' }],
    ]) {
      const problem = await problemOf(await patch("art_a1", { edits }), 422, "protected_link_changed")
      expect(problem.blocks.length).toBeGreaterThan(0)
    }
    const moved = await patch("art_a1", { edits: [{ find: `<p>Then ${PROTECTED_INTERNAL}.</p>`, replace: "" }, { find: "<h2>Intro</h2>", replace: `<h2>Intro</h2><p>First ${PROTECTED_INTERNAL}.</p>` }] })
    expect(moved.status).toBe(200)
    const after = await article("art_a1")
    expect(after.protected_links).toEqual([...before.protected_links].reverse())
  })

  it("should sanitise the edited body, honour If-Match and dry_run, and refuse bad requests", async () => {
    const a = await article("art_a08")
    const dry = await patch("art_a08", { edits: [{ find: "some words", replace: "words<script>x()</script>" }] }, { query: "?dry_run=true" })
    expect(dry.status).toBe(200)
    const dryBody = await json(dry)
    expect(dryBody).toMatchObject({ dry_run: true, revision: null, sanitized: { changed: true } })
    expect(dryBody.article.body).not.toContain("<script")
    expect((await article("art_a08")).revision).toBe(a.revision)
    await problemOf(await patch("art_a08", { title: "x" }, { headers: { "if-match": `"art_a08-r${a.revision + 5}"` } }), 412, "precondition_failed")
    for (const header of [`W/"art_a08-r${a.revision}"`, `"art_a08-r99999999999999999999"`, `"art_a07-r${a.revision}"`]) {
      const refused = await problemOf(await patch("art_a08", { edits: [{ find: "words", replace: "words" }], title: "weak" }, { headers: { "if-match": header } }), 412, "precondition_failed")
      expect(refused.detail, header).not.toMatch(/not 0/)
    }
    const listed = await patch("art_a08", { title: "Listed 8" }, { headers: { "if-match": `"art_a08-r${a.revision + 5}", "art_a08-r${a.revision}"` }, query: "?dry_run=true" })
    expect(listed.status).toBe(200)
    const ok = await patch("art_a08", { edits: [{ find: "words", replace: "words" }], title: "Renamed 8" }, { headers: { "if-match": `"art_a08-r${a.revision}"` } })
    expect(ok.status).toBe(200)
    await problemOf(await patch("art_a08", {}), 400, "invalid_request")
    await problemOf(await patch("art_a08", { edits: [] }), 400, "invalid_request")
    await problemOf(await patch("art_a08", { edits: [{ find: "", replace: "x" }] }), 400, "invalid_request")
    await problemOf(await patch("art_a08", { edits: [{ find: "a" }] }), 400, "invalid_request")
    await problemOf(await patch("art_a08", { body: "<p>x</p>" }), 400, "invalid_request")
    await problemOf(await patch("art_a08", { title: "x" }, { key: KEYS.aRead }), 403, "insufficient_scope")
  })

  it("should refuse what a PUT's body refuses: text that cannot be stored (400 naming the edit) and a body over 1 MiB (400, not 413)", async () => {
    const before = await article("art_a22")
    for (const [edits, path] of [
      [[{ find: "some words", replace: "\ud800" }], "edits/0/replace"],
      [[{ find: "Body", replace: "Body" }, { find: "some words", replace: "a\u0000b" }], "edits/1/replace"],
    ] as const) {
      for (const query of ["", "?dry_run=true"]) {
        const body = await problemOf(await patch("art_a22", { edits }, { query }), 400, "invalid_request")
        expect(body.errors).toEqual([{ path, message: expect.stringMatching(/NUL .*unpaired surrogates/) }])
      }
    }
    expect(await article("art_a22")).toEqual(before)
    // 1 MiB less one byte of UTF-8, then edits that add two bytes ("é" is two)
    const big = `<p>x${"a".repeat(1024 * 1024 - 9)}</p>`
    expect((await send("PUT", "/articles/art_a22", { body: big })).status).toBe(200)
    const full = await article("art_a22")
    for (const query of ["", "?dry_run=true"]) {
      const body = await problemOf(await patch("art_a22", { edits: [{ find: "<p>x", replace: "<p>éé" }] }, { query }), 400, "invalid_request")
      expect(body.detail).toMatch(/edits would make the body larger than 1 MiB/)
      expect(body.errors).toEqual([{ path: "body", message: expect.stringMatching(/larger than 1 MiB/) }])
    }
    expect((await article("art_a22")).revision).toBe(full.revision)
  })

  it("should make the edits on the newest body when the article changed in between", async () => {
    const results = await Promise.all(
      Array.from({ length: 4 }, (_, i) => patch("art_a09", { edits: [{ find: "some words.", replace: `some words. Edit ${i}.` }] })),
    )
    // Every edit finds its text in the newest body; none is lost, none overwrites another.
    for (const r of results) expect([200, 409]).toContain(r.status)
    const applied = results.filter((r) => r.status === 200).length
    const body = (await article("art_a09")).body as string
    expect((body.match(/Edit \d\./g) ?? []).length).toBe(applied)
  })
})

describe("GET /articles/{id}/diff", () => {
  it("should answer a unified diff with one block a line and the words changed, to the current revision by default", async () => {
    const start = await article("art_a10")
    await patch("art_a10", { edits: [{ find: "some words.", replace: "some words.</p><p>A new paragraph here." }], title: "Ten" })
    const res = await send("GET", `/articles/art_a10/diff?from=${start.revision}`)
    expect(res.status).toBe(200)
    const diff = await json(res)
    expect(diff).toMatchObject({ from: start.revision, to: start.revision + 1, title: { from: "Article 10", to: "Ten" } })
    expect(diff.body.unified).toBe(
      [
        `--- revision ${start.revision}`,
        `+++ revision ${start.revision + 1}`,
        "@@ -1,1 +1,2 @@",
        " <p>Body of article 10 with some words.</p>",
        "+<p>A new paragraph here.</p>",
        "",
      ].join("\n"),
    )
    expect(diff.body).toMatchObject({ added_words: 4, removed_words: 0 })
    const same = await json(await send("GET", `/articles/art_a10/diff?from=${start.revision}&to=${start.revision}`))
    expect(same).toEqual({ from: start.revision, to: start.revision, title: null, "featured image": null, body: { unified: "", added_words: 0, removed_words: 0, granularity: "word", note: null } })
  })

  it("should refuse bad numbers and unknown revisions", async () => {
    await problemOf(await send("GET", "/articles/art_a10/diff"), 400, "invalid_request")
    await problemOf(await send("GET", "/articles/art_a10/diff?from=0"), 400, "invalid_request")
    await problemOf(await send("GET", "/articles/art_a10/diff?from=1&x=2"), 400, "invalid_request")
    await problemOf(await send("GET", "/articles/art_a10/diff?from=1&to=999"), 404, "not_found")
  })
})

describe("POST /articles/{id}/revisions/{number}/restore", () => {
  it("should restore a revision as a new api revision with restored_from, and write nothing when it is the current state", async () => {
    await send("PUT", "/articles/art_a11", { title: "Eleven", body: "<p>Eleven.</p>" })
    const before = await article("art_a11")
    const res = await send("POST", "/articles/art_a11/revisions/1/restore", { reason: "undo" })
    expect(res.status).toBe(200)
    const body = await json(res)
    expect(body.revision).toMatchObject({ number: before.revision + 1, origin: "api", restored_from: 1, reason: "undo" })
    expect(body.article).toMatchObject({ title: "Article 11", body: "<p>Body of article 11 with some words.</p>" })
    const again = await send("POST", "/articles/art_a11/revisions/1/restore")
    expect(again.status).toBe(200)
    expect((await json(again)).revision).toBeNull()
    await problemOf(await send("POST", "/articles/art_a11/revisions/2/restore", undefined, { headers: { "if-match": '"art_a11-r1"' } }), 412, "precondition_failed")
    // If-Match on a restore: any listed tag may match, a weak one never does
    const current = (await article("art_a11")).revision
    for (const header of [`W/"art_a11-r${current}"`, `"art_a11-r${current}0000000000000000000"`, `"art_a10-r${current}"`]) {
      const refused = await problemOf(await send("POST", "/articles/art_a11/revisions/2/restore", undefined, { headers: { "if-match": header } }), 412, "precondition_failed")
      expect(refused.detail, header).not.toMatch(/not 0/)
    }
    const listed = await send("POST", "/articles/art_a11/revisions/2/restore", undefined, { headers: { "if-match": `"art_a11-r1", "art_a11-r${current}"` } })
    expect(listed.status).toBe(200)
    expect((await json(listed)).revision).toMatchObject({ number: current + 1, restored_from: 2 })
    await problemOf(await send("POST", "/articles/art_a11/revisions/99/restore"), 404, "not_found")
    await problemOf(await send("POST", "/articles/art_a11/revisions/1/restore", { url: "x" }), 400, "invalid_request")
    await problemOf(await send("POST", "/articles/art_a11/revisions/1/restore", undefined, { key: KEYS.aRead }), 403, "insufficient_scope")
  })

  it("should refuse a restore that would drop a protected link the platform added later", async () => {
    // The platform inserts a protected link after revision 1 (as its own tools do).
    await t.server.runtime.runPromise(
      Effect.gen(function* () {
        const budget = yield* editBudget
        const platform = { accountId: "acc_a", actor: { type: "system" as const, id: "platform", name: "Platform" }, scope: "write" as const, channel: "web" as const, requestId: "platform-1", action: "platform", startedAt: Date.now() }
        yield* (yield* ArticleWriter).change("acc_a", "art_a12", budget, (current) =>
          makeChange(platform, current, { title: current.title, body: `${current.body}<p>${PROTECTED_BACKLINK}</p>`, word_count: 9, featured_image: null, reason: null, restored_from: null }),
        )
      }),
    )
    const before = await article("art_a12")
    const problem = await problemOf(await send("POST", "/articles/art_a12/revisions/1/restore"), 422, "protected_link_changed")
    expect(problem.blocks).toEqual([{ kind: "removed", href: "https://partner.test/offer", text: "partner offer" }])
    expect((await article("art_a12")).revision).toBe(before.revision)
  })
})

describe("Idempotency-Key", () => {
  it("should answer a retried PUT with the first answer and change nothing", async () => {
    const key = crypto.randomUUID()
    const first = await send("PUT", "/articles/art_a13", { title: "Thirteen" }, { headers: { "idempotency-key": key } })
    expect(first.status).toBe(200)
    const firstBody = await first.text()
    const count = (await revisionsOf("art_a13")).length
    const second = await send("PUT", "/articles/art_a13", { title: "Thirteen" }, { headers: { "idempotency-key": key } })
    expect(second.status).toBe(200)
    expect(await second.text()).toBe(firstBody)
    expect(second.headers.get("idempotent-replayed")).toBe("true")
    expect(second.headers.get("etag")).toBe(first.headers.get("etag"))
    expect(second.headers.get("edit-limit-remaining")).toBe(first.headers.get("edit-limit-remaining"))
    expect(second.headers.get("content-type")).toBe(first.headers.get("content-type"))
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    expect((await revisionsOf("art_a13")).length).toBe(count)
    await problemOf(await send("PUT", "/articles/art_a13", { title: "Other" }, { headers: { "idempotency-key": key } }), 422, "idempotency_key_reused")
    await problemOf(await send("PATCH", "/articles/art_a13", { title: "Thirteen" }, { headers: { "idempotency-key": key } }), 422, "idempotency_key_reused")
    // Keys are per account: account B's same key is its own.
    const b = await send("PUT", "/articles/art_b1", { title: "B again" }, { headers: { "idempotency-key": key }, key: KEYS.b })
    expect(b.status).toBe(200)
    await problemOf(await send("PUT", "/articles/art_a13", { title: "x" }, { headers: { "idempotency-key": "bad key with spaces" } }), 400, "invalid_request")
  })

  it("should refuse an Idempotency-Key sent empty, naming the header once", async () => {
    const before = (await revisionsOf("art_a13")).length
    for (const value of ["", "bad key with spaces"]) {
      const problem = await problemOf(await send("PUT", "/articles/art_a13", { title: "Empty key" }, { headers: { "idempotency-key": value } }), 400, "invalid_request")
      expect(problem.errors).toEqual([{ path: "Idempotency-Key", message: expect.any(String) }])
      expect(problem.detail.startsWith("The Idempotency-Key header is not valid:")).toBe(true)
      expect(problem.detail.split("Idempotency-Key").length - 1).toBe(1)
    }
    expect((await revisionsOf("art_a13")).length).toBe(before)
  })

  it("should replay PATCH, restore and featured-image answers, errors included", async () => {
    const pk = crypto.randomUUID()
    const p1 = await patch("art_a14", { edits: [{ find: "some words", replace: "a few words" }] }, { headers: { "idempotency-key": pk } })
    const p2 = await patch("art_a14", { edits: [{ find: "some words", replace: "a few words" }] }, { headers: { "idempotency-key": pk } })
    expect([p1.status, p2.status]).toEqual([200, 200])
    expect(await p2.text()).toBe(await p1.text())

    const ek = crypto.randomUUID()
    const e1 = await patch("art_a14", { edits: [{ find: "missing", replace: "x" }] }, { headers: { "idempotency-key": ek } })
    const e2 = await patch("art_a14", { edits: [{ find: "missing", replace: "x" }] }, { headers: { "idempotency-key": ek } })
    expect([e1.status, e2.status]).toEqual([422, 422])
    // the first problem again, under this response's request id (the header's, the body's and the entry's are one)
    const [problem1, problem2] = [(await e1.json()) as Record<string, unknown>, (await e2.json()) as Record<string, unknown>]
    expect(problem2).toEqual({ ...problem1, request_id: e2.headers.get("x-request-id") })
    expect(problem2["request_id"]).not.toBe(problem1["request_id"])
    expect(e2.headers.get("idempotent-replayed")).toBe("true")

    const rk = crypto.randomUUID()
    const r1 = await send("POST", "/articles/art_a14/revisions/1/restore", undefined, { headers: { "idempotency-key": rk } })
    const count = (await revisionsOf("art_a14")).length
    const r2 = await send("POST", "/articles/art_a14/revisions/1/restore", undefined, { headers: { "idempotency-key": rk } })
    expect([r1.status, r2.status]).toEqual([200, 200])
    expect(await r2.text()).toBe(await r1.text())
    expect((await revisionsOf("art_a14")).length).toBe(count)

    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#f00" } }).png().toBuffer()
    const upload = (key: string) => {
      const form = new FormData()
      form.set("image", new Blob([new Uint8Array(png)], { type: "image/png" }), "a.png")
      form.set("alt", "red")
      return t.api("/api/v1/articles/art_a14/featured-image", { method: "POST", body: form, headers: { "idempotency-key": key } })
    }
    const ik = crypto.randomUUID()
    const i1 = await upload(ik)
    const i2 = await upload(ik)
    expect([i1.status, i2.status]).toEqual([200, 200])
    expect(await i2.text()).toBe(await i1.text())
    expect((await revisionsOf("art_a14")).length).toBe(count + 1)
  })

  it("should make exactly one change of many concurrent requests with one key", async () => {
    const key = crypto.randomUUID()
    const before = (await revisionsOf("art_a15")).length
    const results = await Promise.all(
      Array.from({ length: 6 }, () => patch("art_a15", { edits: [{ find: "some words", replace: "some more words" }] }, { headers: { "idempotency-key": key } })),
    )
    // 409 for a request whose twin is in progress; 429 with Retry-After for those past the
    // account's share of the sanitiser pool (four places: a PATCH takes one before its body is
    // read, so six at once are more than one account's share whatever their keys)
    for (const r of results) expect([200, 409, 429]).toContain(r.status)
    for (const r of results.filter((r) => r.status === 429)) expect(r.headers.get("retry-after")).toBe("1")
    for (const r of results.filter((r) => r.status === 409)) expect(r.headers.get("retry-after")).toBe("1")
    expect(results.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(1)
    expect((await revisionsOf("art_a15")).length).toBe(before + 1)
    // Once the first is answered, a retry gets its answer.
    const retry = await patch("art_a15", { edits: [{ find: "some words", replace: "some more words" }] }, { headers: { "idempotency-key": key } })
    expect(retry.status).toBe(200)
    expect(retry.headers.get("idempotent-replayed")).toBe("true")
  })

  it("should be honoured by another instance of the same database", async () => {
    let other: StartedServer | undefined
    try {
      other = await startServer({ env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false", DATABASE_URL: t.databaseUrl, RATE_LIMIT_PER_MINUTE: "100000" }, now: clock.now, quiet: true })
      const key = crypto.randomUUID()
      const first = await send("PUT", "/articles/art_a16", { title: "Sixteen" }, { headers: { "idempotency-key": key } })
      const replay = await fetch(`${other.url}/api/v1/articles/art_a16`, {
        method: "PUT",
        headers: { authorization: `Bearer ${KEYS.a}`, "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify({ title: "Sixteen" }),
      })
      expect(replay.status).toBe(200)
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      expect(await replay.text()).toBe(await first.text())
    } finally {
      await other?.close()
    }
  })

  it("should keep a few KiB a key whatever the article's size: dry runs nothing, a write a reference to its revision", async () => {
    const big = `<p>start ${"x ".repeat(500_000)}</p>`
    expect((await send("PUT", "/articles/art_a24", { body: big })).status).toBe(200)
    const dryKeys = Array.from({ length: 4 }, () => crypto.randomUUID())
    for (const key of dryKeys) {
      const dry = await patch("art_a24", { edits: [{ find: "start", replace: "begin" }] }, { query: "?dry_run=true", headers: { "idempotency-key": key } })
      expect(dry.status).toBe(200)
    }
    // A dry run's retry runs again (nothing was kept) and answers the same; another request is still refused.
    const again = await patch("art_a24", { edits: [{ find: "start", replace: "begin" }] }, { query: "?dry_run=true", headers: { "idempotency-key": dryKeys[0]! } })
    expect(again.status).toBe(200)
    expect(again.headers.get("idempotent-replayed")).toBeNull()
    expect((await json(again)).dry_run).toBe(true)
    await problemOf(await patch("art_a24", { edits: [{ find: "start", replace: "go" }] }, { query: "?dry_run=true", headers: { "idempotency-key": dryKeys[0]! } }), 422, "idempotency_key_reused")
    const key = crypto.randomUUID()
    const first = await patch("art_a24", { edits: [{ find: "start", replace: "begin" }] }, { headers: { "idempotency-key": key } })
    expect(first.status).toBe(200)
    const firstText = await first.text()
    const client = new pg.Client({ connectionString: t.databaseUrl })
    await client.connect()
    try {
      const rows = await client.query<{ key: string; size: number }>(
        `select key, coalesce(octet_length(body), 0) + coalesce(octet_length(headers::text), 0) + octet_length(fingerprint) as size
         from idempotency_keys where key = any($1)`,
        [[...dryKeys, key]],
      )
      expect(rows.rows).toHaveLength(5)
      for (const row of rows.rows) expect(row.size).toBeLessThan(4096)
    } finally {
      await client.end()
    }
    const replay = await patch("art_a24", { edits: [{ find: "start", replace: "begin" }] }, { headers: { "idempotency-key": key } })
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(await replay.text()).toBe(firstText)
    expect(firstText.length).toBeGreaterThan(1_000_000)
  })

  it("should refuse a read-only key sending a write key's Idempotency-Key, without replaying its answer", async () => {
    const key = crypto.randomUUID()
    const first = await send("PUT", "/articles/art_a13", { title: "Thirteen, kept" }, { headers: { "idempotency-key": key } })
    expect(first.status).toBe(200)
    const refused = await send("PUT", "/articles/art_a13", { title: "Thirteen, kept" }, { headers: { "idempotency-key": key }, key: KEYS.aRead })
    expect(refused.headers.get("idempotent-replayed")).toBeNull()
    await problemOf(refused, 403, "insufficient_scope")
    // The write key still gets its own answer again.
    const again = await send("PUT", "/articles/art_a13", { title: "Thirteen, kept" }, { headers: { "idempotency-key": key } })
    expect(again.headers.get("idempotent-replayed")).toBe("true")
  })
})

describe("Prefer: return=minimal", () => {
  const MINIMAL = { prefer: "return=minimal" }
  /** The answer's article has every key of the full article but `body`. */
  const expectMinimal = async (res: Response) => {
    expect(res.status).toBe(200)
    expect(res.headers.get("preference-applied")).toBe("return=minimal")
    expect(res.headers.get("vary")).toMatch(/prefer/i)
    const answer = await json(res)
    expect(answer.article).not.toHaveProperty("body")
    expect(res.headers.get("etag")).toBe(`"${answer.article.id}-r${answer.article.revision}"`)
    expect(res.headers.get("edit-limit-remaining")).toMatch(/^\d+$/)
    const full = await article(answer.article.id)
    const { body: _body, ...rest } = full
    expect(answer.article).toEqual(rest)
    return answer
  }
  /** A problem answered exactly as without the preference: no Preference-Applied, no Vary: Prefer. */
  const expectPlainProblem = async (res: Response, status: number, code: string) => {
    expect(res.headers.get("preference-applied")).toBeNull()
    expect(res.headers.get("vary") ?? "").not.toMatch(/prefer/i)
    return problemOf(res, status, code)
  }

  it("should answer PUT, PATCH, restore and featured-image without the article's body, and change the same", async () => {
    const put = await expectMinimal(await send("PUT", "/articles/art_a17", { body: "<p>Seventeen, rewritten in full.</p>" }, { headers: MINIMAL }))
    expect(put.revision.number).toBe(2)
    expect(put.article["word count"]).toBe(4)
    expect((await article("art_a17")).body).toBe("<p>Seventeen, rewritten in full.</p>")

    const patched = await expectMinimal(await patch("art_a17", { edits: [{ find: "in full", replace: "in part" }] }, { headers: MINIMAL }))
    expect(patched.revision.number).toBe(3)
    expect((await article("art_a17")).body).toBe("<p>Seventeen, rewritten in part.</p>")

    const restored = await expectMinimal(await send("POST", "/articles/art_a17/revisions/1/restore", undefined, { headers: MINIMAL }))
    expect(restored.revision.restored_from).toBe(1)

    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#0f0" } }).png().toBuffer()
    const form = new FormData()
    form.set("image", new Blob([new Uint8Array(png)], { type: "image/png" }), "g.png")
    const image = await expectMinimal(await t.api("/api/v1/articles/art_a17/featured-image", { method: "POST", body: form, headers: MINIMAL }))
    expect(image.article["featured image"].url).toMatch(/\/media\//)
  })

  it("should answer a dry run minimal too, and keep protected_links and the sanitiser's report", async () => {
    const res = await patch("art_a1", { edits: [{ find: "<h2>Intro</h2>", replace: "<h2>Intro</h2><script>x()</script>" }] }, { query: "?dry_run=true", headers: MINIMAL })
    const answer = await expectMinimal(res)
    expect(answer.dry_run).toBe(true)
    expect(answer.article.protected_links).toHaveLength(2)
    expect(answer.sanitized.removed).toEqual([{ what: "script", count: 1 }])
  })

  it("should answer in full without the preference, with return=representation, or with other preferences only", async () => {
    for (const prefer of [undefined, "return=representation", "respond-async, wait=10", "handling=lenient", "return=representation, return=minimal"]) {
      const res = await send("PUT", "/articles/art_a18", { title: `Eighteen ${prefer ?? "none"}` }, prefer ? { headers: { prefer } } : {})
      expect(res.status).toBe(200)
      expect(res.headers.get("preference-applied")).toBeNull()
      expect(res.headers.get("vary")).toMatch(/prefer/i)
      expect(typeof (await json(res)).article.body).toBe("string")
    }
    // Names and values are case-insensitive, a quoted value and parameters allowed.
    for (const prefer of ['RETURN="Minimal"', "wait=5, return=minimal; foo=bar"]) {
      await expectMinimal(await send("PUT", "/articles/art_a18", { title: `Eighteen ${prefer}` }, { headers: { prefer } }))
    }
  })

  it("should replay an idempotent write in the shape each retry asks for", async () => {
    const key = crypto.randomUUID()
    const first = await expectMinimal(await send("PUT", "/articles/art_a19", { title: "Nineteen" }, { headers: { ...MINIMAL, "idempotency-key": key } }))
    const count = (await revisionsOf("art_a19")).length
    const full = await send("PUT", "/articles/art_a19", { title: "Nineteen" }, { headers: { "idempotency-key": key } })
    expect(full.headers.get("idempotent-replayed")).toBe("true")
    const fullAnswer = await json(full)
    expect(typeof fullAnswer.article.body).toBe("string")
    expect(fullAnswer.revision).toEqual(first.revision)
    const again = await send("PUT", "/articles/art_a19", { title: "Nineteen" }, { headers: { ...MINIMAL, "idempotency-key": key } })
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(await expectMinimal(again)).toEqual(first)
    expect((await revisionsOf("art_a19")).length).toBe(count)
  })

  it("should answer every write in full by default, its article byte for byte as GET serves it", async () => {
    const raw = async (res: Response) => {
      expect(res.status).toBe(200)
      expect(res.headers.get("preference-applied")).toBeNull()
      return res.text()
    }
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#00f" } }).png().toBuffer()
    const form = new FormData()
    form.set("image", new Blob([new Uint8Array(png)], { type: "image/png" }), "b.png")
    const writes = [
      () => send("PUT", "/articles/art_a20", { body: "<p>Twenty, rewritten.</p>" }),
      () => patch("art_a20", { edits: [{ find: "rewritten", replace: "edited" }] }),
      () => patch("art_a20", { edits: [{ find: "edited", replace: "tried" }] }, { query: "?dry_run=true" }),
      () => send("POST", "/articles/art_a20/revisions/1/restore"),
      () => t.api("/api/v1/articles/art_a20/featured-image", { method: "POST", body: form }),
    ]
    for (const write of writes) {
      const text = await raw(await write())
      const served = await (await send("GET", "/articles/art_a20")).text()
      const start = text.indexOf('"article":') + '"article":'.length
      const article = JSON.parse(text).article as { body: string }
      expect(typeof article.body).toBe("string")
      // the dry run's article is the one it would store, the others the one stored now
      if (!text.includes('"dry_run":true')) expect(text.slice(start, start + served.length)).toBe(served)
      else expect(article.body).toBe("<p>Twenty, tried.</p>")
    }
  })

  it("should leave errors as they are, replayed ones included", async () => {
    await expectPlainProblem(await patch("art_a19", { edits: [{ find: "absent", replace: "x" }] }, { headers: MINIMAL }), 422, "edit_not_applicable")
    await expectPlainProblem(await send("PUT", "/articles/art_a19", { title: "" }, { headers: MINIMAL }), 400, "invalid_request")
    await expectPlainProblem(await send("POST", "/articles/art_b1/revisions/1/restore", undefined, { headers: MINIMAL }), 404, "not_found")
    const key = crypto.randomUUID()
    const edits = { edits: [{ find: "absent", replace: "x" }] }
    const first = await patch("art_a21", edits, { headers: { ...MINIMAL, "idempotency-key": key } })
    const firstText = await first.clone().text()
    await expectPlainProblem(first, 422, "edit_not_applicable")
    const replayed = await patch("art_a21", edits, { headers: { ...MINIMAL, "idempotency-key": key } })
    expect(replayed.headers.get("idempotent-replayed")).toBe("true")
    expect(await replayed.clone().json()).toEqual({ ...(JSON.parse(firstText) as object), request_id: replayed.headers.get("x-request-id") })
    await expectPlainProblem(replayed, 422, "edit_not_applicable")
  })
})

describe("cross-account", () => {
  it("should answer 404 on every new route for another account's article, exactly like a missing one", async () => {
    // Read first: another case may have written art_b1 (this one must pass alone, and in any order).
    const before = await json(await send("GET", "/articles/art_b1", undefined, { key: KEYS.b }))
    for (const id of ["art_b1", "art_missing"]) {
      await problemOf(await patch(id, { title: "x" }), 404, "not_found")
      await problemOf(await patch(id, { edits: [{ find: "B", replace: "x" }] }), 404, "not_found")
      await problemOf(await send("GET", `/articles/${id}/diff?from=1`), 404, "not_found")
      await problemOf(await send("POST", `/articles/${id}/revisions/1/restore`), 404, "not_found")
    }
    const after = await json(await send("GET", "/articles/art_b1", undefined, { key: KEYS.b }))
    expect([after.title, after.body, after.revision]).toEqual([before.title, before.body, before.revision])
  })
})

describe("OpenAPI", () => {
  it("should document the new operations, the Idempotency-Key header and the new problem codes", async () => {
    const doc = await json(await t.api("/api/v1/openapi.json", { key: null }))
    expect(doc.paths["/articles/{id}"].patch.operationId).toBe("editArticle")
    expect(doc.paths["/articles/{id}/diff"].get.operationId).toBe("diffRevisions")
    expect(doc.paths["/articles/{id}/revisions/{number}/restore"].post.operationId).toBe("restoreRevision")
    for (const [path, method] of [["/articles/{id}", "put"], ["/articles/{id}", "patch"], ["/articles/{id}/featured-image", "post"], ["/articles/{id}/revisions/{number}/restore", "post"]] as const) {
      expect(doc.paths[path][method].parameters.map((p: { name: string }) => p.name)).toContain("Idempotency-Key")
      expect(doc.paths[path][method].responses["422"].description).toContain("idempotency_key_reused")
      // a key still being processed is a 409 that says when to retry
      expect(Object.keys(doc.paths[path][method].responses["409"].headers)).toContain("Retry-After")
    }
    expect(doc.paths["/articles/{id}"].patch.responses["422"].description).toContain("edit_not_applicable")
    expect(doc.components.schemas.Article.required).toContain("protected_links")
    // The diff says how finely it compared; a protected link can be refused as hidden.
    expect(JSON.stringify(doc.components.schemas.RevisionDiff)).toContain('"granularity"')
    expect(JSON.stringify(doc.components.schemas.ProtectedBlockViolation)).toContain('"hidden"')
    for (const [path, method] of [["/articles/{id}", "put"], ["/articles/{id}", "patch"], ["/articles/{id}/featured-image", "post"], ["/articles/{id}/revisions/{number}/restore", "post"]] as const) {
      expect(doc.paths[path][method].parameters.map((p: { name: string }) => p.name)).toContain("Prefer")
      expect(Object.keys(doc.paths[path][method].responses["200"].headers)).toContain("Preference-Applied")
    }
    // The write answers' article in both shapes, the minimal one declaring `body` absent.
    const { Article, ArticleWithoutBody } = doc.components.schemas
    expect(ArticleWithoutBody.properties.body).toMatchObject({ not: {} })
    expect(ArticleWithoutBody.required).not.toContain("body")
    expect(Object.keys(ArticleWithoutBody.properties).sort()).toEqual(Object.keys(Article.properties).sort())
    for (const result of ["UpdateArticleResult", "RestoreRevisionResult", "FeaturedImageResult"]) {
      expect(doc.components.schemas[result].properties.article.anyOf).toEqual([
        { $ref: "#/components/schemas/Article" },
        { $ref: "#/components/schemas/ArticleWithoutBody" },
      ])
    }
  })
})

// A1_BODY is the fixture's protected article; the tests above keep its links.
void A1_BODY
