/**
 * The REST pipeline in one process on the memory Layers, spoken to over HTTP on a loopback port:
 * the gate every authenticated request passes (the key, the address's failure budget, the account's
 * request limit and its RateLimit-* headers), idempotency keys and their replays, the edits left on
 * writes, the activity entry of every call, 405 and unknown paths. Fast enough to run under the
 * mutation tool (`npm run mutation -- adapters`).
 */
import { type ActivityRecord, type CoreServices, importData } from "@content-site/core"
import { errorFunnel, requestId } from "@content-site/http"
import { fixedClock, headerImageInspector, inlineHtmlAnalyzer, makeMemoryState, memoryStorage, settingsLayer, tableImageFetcher } from "@content-site/memory"
import { randomIds, webCryptoSecrets } from "@content-site/platform/web"
import { Layer, ManagedRuntime } from "effect"
import Koa from "koa"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { mountRest, presentedKey } from "../src/index.ts"

const NOW = Date.parse("2026-11-22T12:00:00.000Z")
const PUBLIC_URL = "https://cs.test"
const KEY = "cs_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
const READ_ONLY = "cs_rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr"
const link = '<a href="https://partner.test/x" data-service-protected="backlink">partner</a>'

const fixture = {
  accounts: [
    {
      id: "acc_a",
      email: "a@example.com",
      password: "password-a",
      api_keys: [
        { id: "key_a", name: "ci", key: KEY, scope: "write" },
        { id: "key_ro", name: "ro", key: READ_ONLY, scope: "read-only" },
      ],
      sites: [
        {
          id: "site_a",
          name: "Garden",
          url: "https://garden.test",
          articles: [
            { id: "art_1", title: "Roses", url: "https://garden.test/roses", status: "published", published_at: "2026-11-03T09:00:00Z", body: `<p>Roses and ${link}.</p>` },
            { id: "art_2", title: "Tulips", url: "https://garden.test/tulips", status: "published", published_at: "2026-10-15T09:00:00Z", body: "<p>one two three</p>" },
          ],
        },
      ],
    },
  ],
}

const closing: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closing.splice(0)) await close()
})

/** The REST adapter behind the error funnel, as the server mounts it, on a port of its own. */
const serve = async (limits: { requestsPerMinute?: number; dailyEdits?: number; authFailuresPerMinute?: number } = {}) => {
  const state = makeMemoryState()
  const clock = fixedClock(NOW)
  const runtime: ManagedRuntime.ManagedRuntime<CoreServices, never> = ManagedRuntime.make(
    Layer.mergeAll(
      memoryStorage(state, clock.now),
      clock.layer,
      randomIds,
      webCryptoSecrets(1_000),
      settingsLayer(PUBLIC_URL, limits),
      headerImageInspector,
      inlineHtmlAnalyzer,
      tableImageFetcher(new Map()),
    ),
  )
  await runtime.runPromise(importData(fixture))
  const app = new Koa()
  const defects: Array<string> = []
  app.use(requestId())
  app.use(errorFunnel({ publicUrl: PUBLIC_URL, logDefect: (_id, detail) => defects.push(detail) }))
  const logged: Array<string> = []
  mountRest(app, { runtime, publicUrl: PUBLIC_URL, env: {}, log: { error: (_fields, message) => logged.push(message), warn: () => {}, info: () => {} } })
  const server = createServer(app.callback())
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  closing.push(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await runtime.dispose()
    expect(defects).toEqual([])
  })
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`
  const call = async (method: string, path: string, options: { key?: string | null; headers?: Record<string, string>; json?: unknown } = {}) => {
    const headers: Record<string, string> = { ...(options.key === null ? {} : { authorization: `Bearer ${options.key ?? KEY}` }), ...options.headers }
    if (options.json !== undefined) headers["content-type"] = "application/json"
    const res = await fetch(`${base}${path}`, { method, headers, ...(options.json !== undefined ? { body: JSON.stringify(options.json) } : {}) })
    const text = await res.text()
    return { status: res.status, headers: res.headers, text, body: text !== "" && /json/.test(res.headers.get("content-type") ?? "") ? (JSON.parse(text) as Record<string, any>) : undefined }
  }
  /** The activity entries written so far, oldest first. */
  const entries = (): ReadonlyArray<ActivityRecord> => [...state.activity].sort((a, b) => a.at.localeCompare(b.at))
  return { state, clock, call, entries, logged }
}

describe("presentedKey", () => {
  const ctx = (headers: Record<string, string>) => ({ get: (name: string) => headers[name] ?? "" }) as never

  it("should take the key of Authorization: Bearer, in any case and with spaces or tabs around it, else X-API-Key trimmed", () => {
    expect(presentedKey(ctx({ Authorization: "Bearer abc" }))).toBe("abc")
    expect(presentedKey(ctx({ Authorization: "bearer \tabc\t " }))).toBe("abc")
    expect(presentedKey(ctx({ "X-API-Key": "  xyz  " }))).toBe("xyz")
  })

  it("should present an empty key for an Authorization that is not one bearer token, whatever X-API-Key holds", () => {
    for (const authorization of ["Basic abc", "Bearer", "Bearer a b", "xBearer abc", "Bearer abc x"]) {
      expect(presentedKey(ctx({ Authorization: authorization, "X-API-Key": "xyz" })), authorization).toBe("")
    }
  })

  it("should present no key when neither header holds one", () => {
    expect(presentedKey(ctx({}))).toBeUndefined()
    expect(presentedKey(ctx({ "X-API-Key": "   " }))).toBeUndefined()
  })
})

describe("the gate: key, request limit, RateLimit-* and the activity entry", () => {
  it("should answer a call with a key, no-store, the account's RateLimit-* headers, and one entry naming the operation", async () => {
    const s = await serve({ requestsPerMinute: 3 })
    const res = await s.call("GET", "/articles/art_2", { key: null, headers: { "x-api-key": KEY } })
    expect(res.status).toBe(200)
    expect([res.headers.get("cache-control"), res.headers.get("ratelimit-limit"), res.headers.get("ratelimit-remaining"), res.headers.get("ratelimit-reset")]).toEqual([
      "no-store",
      "3",
      "2",
      "60",
    ])
    expect(s.entries()).toMatchObject([
      { account_id: "acc_a", actor: { type: "api_key", id: "key_a" }, channel: "api", action: "GET /api/v1/articles/{id}", article_id: "art_2", site_id: "site_a", status: 200, error_code: null },
    ])
    expect(s.entries()[0]?.request_id).toBe(res.headers.get("x-request-id"))
  })

  it("should name a HEAD request's action by its own method, as sent, not as the GET route that answers it", async () => {
    const s = await serve()
    const res = await s.call("HEAD", "/articles/art_2")
    expect([res.status, res.text]).toEqual([200, ""])
    const missing = await s.call("HEAD", "/articles/art_none")
    expect(missing.status).toBe(404)
    expect(s.entries()).toMatchObject([
      { action: "HEAD /api/v1/articles/{id}", article_id: "art_2", site_id: "site_a", status: 200, error_code: null, request_id: res.headers.get("x-request-id") },
      { action: "HEAD /api/v1/articles/{id}", article_id: "art_none", status: 404, error_code: "not_found" },
    ])
    const unknown = await s.call("HEAD", "/nothing/here")
    expect(unknown.status).toBe(404)
    expect(s.entries().at(-1)).toMatchObject({ action: "HEAD /api/v1/nothing/here", status: 404 })
  })

  it("should refuse a call over the account's limit with 429, RateLimit-Remaining 0 and the reset, and log it on the account with the path's subject", async () => {
    const s = await serve({ requestsPerMinute: 1 })
    expect((await s.call("GET", "/sites")).status).toBe(200)
    s.clock.advance(20_000)
    const refused = await s.call("GET", "/sites/site_a/articles")
    expect(refused.status).toBe(429)
    expect(refused.body).toMatchObject({ code: "rate_limited" })
    expect([refused.headers.get("ratelimit-limit"), refused.headers.get("ratelimit-remaining"), refused.headers.get("ratelimit-reset"), refused.headers.get("retry-after")]).toEqual(["1", "0", "40", "40"])
    const article = await s.call("GET", "/articles/art_1")
    expect(article.status).toBe(429)
    expect(s.entries().slice(1)).toMatchObject([
      { account_id: "acc_a", action: "GET /api/v1/sites/{id}/articles", site_id: "site_a", article_id: null, status: 429, error_code: "rate_limited" },
      { account_id: "acc_a", action: "GET /api/v1/articles/{id}", article_id: "art_1", status: 429, error_code: "rate_limited" },
    ])
  })

  it("should name no subject for a refused call whose path holds no valid id", async () => {
    const s = await serve({ requestsPerMinute: 1 })
    await s.call("GET", "/sites")
    expect((await s.call("GET", "/articles/not%20an%20id")).status).toBe(429)
    expect(s.entries()[1]).toMatchObject({ account_id: "acc_a", site_id: null, article_id: null, status: 429 })
  })

  it("should refuse a call without a key, or with a malformed or unknown one, with 401, logged with no account nor subject", async () => {
    const s = await serve()
    const none = await s.call("GET", "/articles/art_1", { key: null })
    expect([none.status, none.body?.["code"], none.headers.get("cache-control"), none.headers.get("ratelimit-limit")]).toEqual([401, "unauthenticated", "no-store", null])
    expect((await s.call("GET", "/articles/art_1", { key: null, headers: { authorization: "Basic abc" } })).status).toBe(401)
    expect((await s.call("GET", "/articles/art_1", { key: "cs_unknownunknownunknownunknownunknown" })).status).toBe(401)
    expect(s.entries()).toHaveLength(3)
    for (const entry of s.entries()) {
      expect(entry).toMatchObject({ account_id: null, actor: null, channel: "api", action: "GET /api/v1/articles/{id}", site_id: null, article_id: null, status: 401, error_code: "unauthenticated" })
    }
  })

  it("should refuse every key from an address past its failure budget, logging a live key's call on its account", async () => {
    const s = await serve({ authFailuresPerMinute: 1 })
    expect((await s.call("GET", "/sites", { key: "cs_unknownunknownunknownunknownunknown" })).status).toBe(401)
    const unknown = await s.call("GET", "/sites", { key: "cs_unknownunknownunknownunknownunknown" })
    expect([unknown.status, unknown.body?.["code"]]).toEqual([429, "rate_limited"])
    const live = await s.call("GET", "/articles/art_1")
    expect([live.status, live.body?.["code"], live.headers.get("ratelimit-limit")]).toEqual([429, "rate_limited", null])
    expect(s.entries().slice(1)).toMatchObject([
      { account_id: null, actor: null, site_id: null, article_id: null, status: 429, error_code: "rate_limited" },
      { account_id: "acc_a", actor: { type: "api_key", id: "key_a" }, action: "GET /api/v1/articles/{id}", article_id: "art_1", status: 429, error_code: "rate_limited" },
    ])
  })
})

describe("writes: edits left, idempotency keys and replays", () => {
  it("should say the edits left on a write's answer and on its refusal, 0 once the day's limit is reached", async () => {
    const s = await serve({ dailyEdits: 2 })
    const done = await s.call("PUT", "/articles/art_2", { json: { title: "One" } })
    expect([done.status, done.headers.get("edit-limit-remaining")]).toEqual([200, "1"])
    const missing = await s.call("PUT", "/articles/art_9", { json: { title: "One" } })
    expect([missing.status, missing.headers.get("edit-limit-remaining")]).toEqual([404, "1"])
    expect((await s.call("PUT", "/articles/art_2", { json: { title: "Two" } })).headers.get("edit-limit-remaining")).toBe("0")
    const over = await s.call("PUT", "/articles/art_2", { json: { title: "Three" } })
    expect([over.status, over.body?.["code"], over.headers.get("edit-limit-remaining")]).toEqual([429, "daily_edit_limit", "0"])
    const read = await s.call("GET", "/articles/art_9")
    expect([read.status, read.headers.get("edit-limit-remaining")]).toEqual([404, null])
  })

  it("should log a committed write once, in its own transaction's entry", async () => {
    const s = await serve()
    expect((await s.call("PUT", "/articles/art_2", { json: { title: "Once" } })).status).toBe(200)
    expect(s.entries()).toMatchObject([{ action: "PUT /api/v1/articles/{id}", article_id: "art_2", status: 200 }])
    expect(s.entries()).toHaveLength(1)
  })

  it("should answer a retry with the first answer and its headers, marked replayed, writing nothing more", async () => {
    const s = await serve()
    const key = { "idempotency-key": "k-1" }
    const first = await s.call("PUT", "/articles/art_2", { headers: key, json: { title: "Once" } })
    expect(first.status).toBe(200)
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    const again = await s.call("PUT", "/articles/art_2", { headers: key, json: { title: "Once" } })
    // the first answer's Content-Type, charset included
    expect([again.status, again.headers.get("idempotent-replayed"), again.headers.get("content-type")]).toEqual([200, "true", "application/json; charset=utf-8"])
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"))
    expect(again.body).toEqual(first.body)
    expect([again.headers.get("etag"), again.headers.get("edit-limit-remaining")]).toEqual([first.headers.get("etag"), first.headers.get("edit-limit-remaining")])
    expect(again.headers.get("etag")).toMatch(/^"/)
    // only the headers the first answer had: it had no Retry-After
    expect(again.headers.get("retry-after")).toBeNull()
    expect(s.state.articles.get("art_2")?.revision).toBe(2)
    expect(s.entries().map((e) => [e.status, e.error_code])).toEqual([
      [200, null],
      [200, null],
    ])
  })

  it("should answer a retry asking return=minimal with the first answer made minimal, and say so", async () => {
    const s = await serve()
    const key = { "idempotency-key": "k-2" }
    const first = await s.call("PUT", "/articles/art_2", { headers: key, json: { title: "Once" } })
    expect(first.headers.get("preference-applied")).toBeNull()
    expect(first.headers.get("vary")).toMatch(/Prefer/)
    expect(first.body?.["article"]?.body).toBe("<p>one two three</p>")
    const minimal = await s.call("PUT", "/articles/art_2", { headers: { ...key, prefer: "return=minimal" }, json: { title: "Once" } })
    expect([minimal.headers.get("idempotent-replayed"), minimal.headers.get("preference-applied")]).toEqual(["true", "return=minimal"])
    expect(minimal.headers.get("vary")).toMatch(/Prefer/)
    expect(minimal.body?.["article"]).toMatchObject({ id: "art_2", title: "Once" })
    expect(minimal.body?.["article"]).not.toHaveProperty("body")
    const fresh = await s.call("PUT", "/articles/art_2", { headers: { prefer: "return=minimal" }, json: { title: "Twice" } })
    expect(fresh.headers.get("preference-applied")).toBe("return=minimal")
    expect(fresh.body?.["article"]).not.toHaveProperty("body")
  })

  it("should keep a refusal for the retries: its status, problem, edits left, and the entry's code", async () => {
    const s = await serve()
    const key = { "idempotency-key": "k-3" }
    const first = await s.call("PUT", "/articles/art_1", { headers: key, json: { body: "<p>no link</p>" } })
    expect([first.status, first.body?.["code"]]).toEqual([422, "protected_link_changed"])
    const again = await s.call("PUT", "/articles/art_1", { headers: key, json: { body: "<p>no link</p>" } })
    expect([again.status, again.headers.get("idempotent-replayed"), again.headers.get("content-type"), again.headers.get("edit-limit-remaining")]).toEqual([
      422,
      "true",
      "application/problem+json",
      first.headers.get("edit-limit-remaining"),
    ])
    // the first problem under this response's request id: the header's, the body's and the entry's are one
    expect(again.body).toEqual({ ...first.body, request_id: again.headers.get("x-request-id") })
    expect(again.body?.["request_id"]).not.toBe(first.body?.["request_id"])
    const minimal = await s.call("PUT", "/articles/art_1", { headers: { ...key, prefer: "return=minimal" }, json: { body: "<p>no link</p>" } })
    expect([minimal.status, minimal.headers.get("idempotent-replayed"), minimal.headers.get("preference-applied"), minimal.headers.get("vary")]).toEqual([422, "true", null, null])
    expect(minimal.body).toEqual({ ...first.body, request_id: minimal.headers.get("x-request-id") })
    expect(s.entries().map((e) => [e.status, e.error_code])).toEqual([
      [422, "protected_link_changed"],
      [422, "protected_link_changed"],
      [422, "protected_link_changed"],
    ])
    expect(s.entries().map((e) => e.request_id)).toEqual([first, again, minimal].map((r) => r.headers.get("x-request-id")))
  })

  it("should free a key whose call failed for a reason a retry may not meet again", async () => {
    const s = await serve()
    const key = { "idempotency-key": "k-4" }
    const refused = await s.call("PUT", "/articles/art_2", { key: READ_ONLY, headers: key, json: { title: "Nope" } })
    expect(refused.status).toBe(403)
    const allowed = await s.call("PUT", "/articles/art_2", { headers: key, json: { title: "Nope" } })
    expect([allowed.status, allowed.headers.get("idempotent-replayed")]).toEqual([200, null])
  })

  it("should free a key whose call was refused for a reason that may pass (the day's limit): a retry the next day runs", async () => {
    const s = await serve({ dailyEdits: 1 })
    await s.call("PUT", "/articles/art_2", { json: { title: "The day's edit" } })
    const key = { "idempotency-key": "k-6" }
    const refused = await s.call("PUT", "/articles/art_2", { headers: key, json: { title: "Tomorrow" } })
    expect([refused.status, refused.body?.["code"]]).toEqual([429, "daily_edit_limit"])
    s.clock.advance(12 * 3_600_000)
    const next = await s.call("PUT", "/articles/art_2", { headers: key, json: { title: "Tomorrow" } })
    expect([next.status, next.headers.get("idempotent-replayed"), next.body?.["article"]?.title]).toEqual([200, null, "Tomorrow"])
  })

  it("should keep nothing of a dry run for its retries: the same request with the key runs again", async () => {
    const s = await serve()
    const key = { "idempotency-key": "k-7" }
    const tried = await s.call("PUT", "/articles/art_2?dry_run=true", { headers: key, json: { title: "Tried" } })
    expect([tried.status, tried.body?.["dry_run"]]).toEqual([200, true])
    const again = await s.call("PUT", "/articles/art_2?dry_run=true", { headers: key, json: { title: "Tried" } })
    expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([200, null])
  })

  it("should not make a write again whose answer was never kept (the service stopped after its change): 409 naming the revision it made", async () => {
    const { state, clock, call } = await serve()
    const first = await call("PUT", "/articles/art_2", { headers: { "idempotency-key": "k-died" }, json: { title: "Tulips, once" } })
    expect(first.status).toBe(200)
    const revision = first.body?.["article"]["revision"] as number
    // as if the process had died between the change's commit and the keeping of its answer
    const entry = state.idempotency.get("acc_a#k-died")!
    state.idempotency.set("acc_a#k-died", { ...entry, answer: null })
    clock.advance(5 * 60_000)
    const retry = await call("PUT", "/articles/art_2", { headers: { "idempotency-key": "k-died" }, json: { title: "Tulips, once" } })
    expect(retry.status).toBe(409)
    expect(retry.body?.["detail"]).toContain(`article 'art_2', revision ${revision}`)
    expect((await call("GET", "/articles/art_2")).body?.["revision"]).toBe(revision)
  })

  it("should refuse an Idempotency-Key that is sent empty or malformed with 400, naming the header", async () => {
    const s = await serve()
    for (const value of ["", "with space", "x".repeat(256)]) {
      const res = await s.call("PUT", "/articles/art_2", { headers: { "idempotency-key": value }, json: { title: "x" } })
      expect([res.status, res.body?.["code"]], JSON.stringify(value)).toEqual([400, "invalid_request"])
      expect(res.body?.["detail"]).toMatch(/^The Idempotency-Key header is not valid: .+ \(a UUID is typical\)\.$/)
      expect(res.body?.["errors"]).toEqual([{ path: "Idempotency-Key", message: expect.any(String) }])
    }
    expect(s.state.articles.get("art_2")?.revision).toBe(1)
  })

  it("should not hold a key sent on a read", async () => {
    const s = await serve()
    const key = { "idempotency-key": "k-5" }
    await s.call("GET", "/articles/art_2", { headers: key })
    const again = await s.call("GET", "/articles/art_2", { headers: key })
    expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([200, null])
  })
})

describe("answers of the operations", () => {
  it("should answer a read as JSON with no edits left said, no preference applied and no Vary: Prefer, whatever Prefer says", async () => {
    const s = await serve()
    const res = await s.call("GET", "/articles/art_2", { headers: { prefer: "return=minimal" } })
    expect([res.status, res.headers.get("content-type"), res.headers.get("edit-limit-remaining"), res.headers.get("preference-applied"), res.headers.get("vary")]).toEqual([
      200,
      "application/json; charset=utf-8",
      null,
      null,
      null,
    ])
    expect(res.body?.["body"]).toBe("<p>one two three</p>")
  })

  it("should link the pages of a list with absolute URLs on the public address", async () => {
    const s = await serve()
    const res = await s.call("GET", "/sites/site_a/articles?per_page=1&page=2")
    expect(res.status).toBe(200)
    expect(res.headers.get("link")).toBe(
      [
        '<https://cs.test/api/v1/sites/site_a/articles?per_page=1&page=1>; rel="first"',
        '<https://cs.test/api/v1/sites/site_a/articles?per_page=1&page=1>; rel="prev"',
        '<https://cs.test/api/v1/sites/site_a/articles?per_page=1&page=2>; rel="last"',
      ].join(", "),
    )
  })

  it("should route PATCH and POST operations, and serve the OpenAPI document without a key", async () => {
    const s = await serve()
    const edited = await s.call("PATCH", "/articles/art_2", { json: { edits: [{ find: "two", replace: "2" }] } })
    expect([edited.status, edited.headers.get("content-type"), edited.body?.["article"]?.body]).toEqual([200, "application/json; charset=utf-8", "<p>one 2 three</p>"])
    const restored = await s.call("POST", "/articles/art_2/revisions/1/restore")
    expect([restored.status, restored.body?.["article"]?.body]).toEqual([200, "<p>one two three</p>"])
    const doc = await s.call("GET", "/openapi.json", { key: null })
    expect([doc.status, doc.body?.["openapi"]]).toEqual([200, expect.stringMatching(/^3\./)])
  })
})

describe("paths and methods outside the operation table", () => {
  it("should answer a method a known path does not take with 405, Allow and a logged problem, OPTIONS with 204", async () => {
    const s = await serve()
    const res = await s.call("DELETE", "/articles/art_1")
    expect([res.status, res.headers.get("allow"), res.body?.["code"], res.body?.["detail"]]).toEqual([
      405,
      "GET, PUT, PATCH, HEAD",
      "method_not_allowed",
      "DELETE is not allowed on this path; use GET or PUT or PATCH or HEAD.",
    ])
    expect(res.headers.get("ratelimit-limit")).toBe("60")
    expect([res.body?.["type"], res.body?.["title"]]).toEqual(["https://cs.test/problems/method_not_allowed", "Method not allowed"])
    expect(s.entries()).toMatchObject([{ account_id: "acc_a", action: "DELETE /api/v1/articles/{id}", article_id: "art_1", status: 405, error_code: "method_not_allowed" }])
    const options = await s.call("OPTIONS", "/sites", { key: null })
    expect([options.status, options.headers.get("allow")]).toEqual([204, "GET, HEAD"])
    expect((await s.call("POST", "/sites", { key: null })).status).toBe(401)
    const doc = await s.call("POST", "/openapi.json", { key: null })
    expect([doc.status, doc.headers.get("allow")]).toEqual([405, "GET, HEAD"])
    expect(s.entries()).toHaveLength(2)
    const post = await s.call("GET", "/articles/art_1/revisions/1/restore")
    expect([post.status, post.headers.get("allow")]).toEqual([405, "POST"])
    const long = await s.call("DELETE", `/articles/${"x".repeat(300)}`)
    expect(long.status).toBe(405)
    // the action is the route's template, whatever the path's length
    expect(s.entries().at(-1)?.action).toBe("DELETE /api/v1/articles/{id}")
  })

  it("should refuse a wrong method past the account's limit with 429, logged", async () => {
    const s = await serve({ requestsPerMinute: 1 })
    await s.call("GET", "/sites")
    const res = await s.call("DELETE", "/sites")
    expect([res.status, res.body?.["code"]]).toEqual([429, "rate_limited"])
    expect(s.entries()[1]).toMatchObject({ account_id: "acc_a", action: "DELETE /api/v1/sites", status: 429, error_code: "rate_limited" })
  })

  it("should answer an unknown API path with 404 to a caller with a key, counted and logged with the path asked for, and 401 without", async () => {
    const s = await serve({ requestsPerMinute: 5 })
    const res = await s.call("GET", "/nothing/here")
    expect([res.status, res.body?.["code"], res.headers.get("ratelimit-remaining")]).toEqual([404, "not_found", "4"])
    expect(res.body?.["detail"]).toMatch(/\/api\/v1\/nothing\/here/)
    expect(s.entries()).toMatchObject([{ account_id: "acc_a", action: "GET /api/v1/nothing/here", status: 404, error_code: "not_found" }])
    expect((await s.call("GET", "/nothing/here", { key: null })).status).toBe(401)
    const long = await s.call("GET", `/${"x".repeat(300)}`)
    expect(long.status).toBe(404)
    expect(s.entries().at(-1)?.action).toBe(`GET /api/v1/${"x".repeat(199)}`)
    const root = await s.call("GET", "")
    expect([root.status, root.body?.["code"]]).toEqual([404, "not_found"])
    expect(s.entries().at(-1)?.action).toBe("GET /api/v1")
  })

  it("should leave paths outside the API alone: no key asked, nothing logged", async () => {
    const s = await serve()
    const res = await s.call("GET", "/../../elsewhere", { key: null })
    // Koa's own 404: the server's last middleware makes it a page (apps/server)
    expect([res.status, res.text]).toEqual([404, "Not Found"])
    const near = await s.call("GET", "/../../api/v10", { key: null })
    expect([near.status, near.text]).toEqual([404, "Not Found"])
    expect(s.entries()).toEqual([])
  })
})
