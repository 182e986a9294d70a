import { Validator } from "@seriousme/openapi-schema-validator"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { importData } from "@content-site/core"
import { Browser } from "../mcp/support.ts"
import { EXPECTED_SUMMARY, PERIOD, PERIOD_ARTICLES, periodSite } from "../support/periodFixture.ts"
import { json, KEYS, startTestServer, type TestServer } from "./helpers.ts"
import { schemaCompiler } from "./openapiCheck.ts"

/** Account C: its own site on the edges of a fixed month, and an activity log no other test writes to. */
const C = { email: "owner-c@example.com", password: "password-c-123", key: "cs_CCCCcccc1111222233334444555566667777" }

let t: TestServer
beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PER_MINUTE: "100000" })
  await t.server.runtime.runPromise(
    importData({
      accounts: [
        {
          id: "acc_c",
          email: C.email,
          password: C.password,
          name: "Owner C",
          api_keys: [{ id: "key_c", name: "c write", key: C.key, scope: "write" }],
          sites: [periodSite("site_c1", "charlie.test")],
        },
      ],
    }),
  )
})
afterAll(async () => {
  await t?.close()
})

const expectProblem = async (res: Response, status: number, code: string) => {
  expect(res.status).toBe(status)
  expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/)
  const body = await json(res)
  expect(body.code).toBe(code)
  expect(body.status).toBe(status)
  expect(body.request_id).toBe(res.headers.get("x-request-id"))
  expect(typeof body.detail).toBe("string")
  expect(JSON.stringify(body)).not.toMatch(/at .*\.ts:\d+/)
  return body
}

describe("authentication", () => {
  it("should accept the key as a Bearer token and as X-API-Key", async () => {
    expect((await t.api("/api/v1/sites")).status).toBe(200)
    expect((await t.api("/api/v1/sites", { key: null, headers: { "X-API-Key": KEYS.a } })).status).toBe(200)
  })

  it("should refuse a missing, unknown, revoked or malformed key with 401 and WWW-Authenticate: Bearer", async () => {
    for (const key of [null, "cs_unknownunknownunknownunknownunknown1", KEYS.aRevoked, "not-a-key"]) {
      const res = await t.api("/api/v1/sites", { key })
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/)
      await expectProblem(res, 401, "unauthenticated")
    }
    const basic = await t.api("/api/v1/sites", { key: null, headers: { Authorization: `Basic ${btoa("a:b")}` } })
    await expectProblem(basic, 401, "unauthenticated")
  })

  it("should take Authorization over X-API-Key when both are sent (docs/api.md)", async () => {
    // A valid Bearer key with an unknown X-API-Key: the Bearer key is the one used.
    expect((await t.api("/api/v1/sites", { key: null, headers: { Authorization: `Bearer ${KEYS.a}`, "X-API-Key": "cs_unknownunknownunknownunknownunknown1" } })).status).toBe(200)
    // A Basic Authorization with a valid X-API-Key: Authorization wins, and it is no key.
    const both = await t.api("/api/v1/sites", { key: null, headers: { Authorization: `Basic ${btoa("a:b")}`, "X-API-Key": KEYS.a } })
    await expectProblem(both, 401, "unauthenticated")
  })

  it("should refuse an OAuth-style access token at REST", async () => {
    const res = await t.api("/api/v1/sites", { key: "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhY2NfYSJ9.c2ln" })
    await expectProblem(res, 401, "unauthenticated")
  })

  it("should refuse a read-only key writing with 403 insufficient_scope and let it read", async () => {
    expect((await t.api("/api/v1/articles/art_a1", { key: KEYS.aRead })).status).toBe(200)
    const res = await t.api("/api/v1/articles/art_a1", {
      key: KEYS.aRead,
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ title: "x" }),
    })
    await expectProblem(res, 403, "insufficient_scope")
  })
})

describe("resources and headers", () => {
  it("should list sites by name with the pagination envelope", async () => {
    const res = await t.api("/api/v1/sites")
    const body = await json(res)
    expect(body.data.map((s: { id: string }) => s.id)).toEqual(["site_a1", "site_a2"])
    expect(body.data[0]).toMatchObject({ article_count: 25, backlink_count: 6 })
    expect(body.pagination).toEqual({ page: 1, per_page: 20, total: 2, total_pages: 1 })
  })

  it("should carry X-Request-Id, Cache-Control: no-store, RateLimit-* and security headers", async () => {
    const res = await t.api("/api/v1/sites")
    expect(res.headers.get("x-request-id")).toMatch(/^req_/)
    expect(res.headers.get("cache-control")).toBe("no-store")
    expect(res.headers.get("x-content-type-options")).toBe("nosniff")
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
    expect(res.headers.get("referrer-policy")).toBe("no-referrer")
    for (const h of ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"]) expect(res.headers.get(h)).toMatch(/^\d+$/)
  })

  it("should not honour a client-chosen X-Request-Id (activity is idempotent by request id)", async () => {
    const res = await t.api("/api/v1/sites", { headers: { "X-Request-Id": "my-own-request-id-123" } })
    expect(res.headers.get("x-request-id")).not.toBe("my-own-request-id-123")
  })

  it("should page articles newest first with an RFC 8288 Link header of absolute URLs", async () => {
    const res = await t.api("/api/v1/sites/site_a1/articles?per_page=5&page=2")
    const body = await json(res)
    expect(body.pagination).toEqual({ page: 2, per_page: 5, total: 25, total_pages: 5 })
    const dates = body.data.map((a: { published_at: string }) => a.published_at)
    expect([...dates].sort().reverse()).toEqual(dates)
    expect(body.data[0]).not.toHaveProperty("body")
    const link = res.headers.get("link") ?? ""
    for (const [rel, page] of [["first", 1], ["prev", 1], ["next", 3], ["last", 5]] as const) {
      expect(link).toContain(`<${t.url}/api/v1/sites/site_a1/articles?per_page=5&page=${page}>; rel="${rel}"`)
    }
  })

  it("should answer a page past the end with 200 and empty data", async () => {
    const body = await json(await t.api("/api/v1/sites/site_a1/articles?page=99"))
    expect(body.data).toEqual([])
    expect(body.pagination.total).toBe(25)
  })

  it("should filter articles by status", async () => {
    const drafts = await json(await t.api("/api/v1/sites/site_a1/articles?status=draft&per_page=100"))
    expect(drafts.data.map((a: { id: string }) => a.id).sort()).toEqual(["art_a07", "art_a13", "art_a19", "art_a25"])
    expect(drafts.data.every((a: { status: string }) => a.status === "draft")).toBe(true)
    expect(drafts.pagination.total).toBe(4)
  })

  it("should filter articles by an inclusive date range: bare dates cover whole UTC days, instants are inclusive", async () => {
    const ids = async (query: string) =>
      (await json(await t.api(`/api/v1/sites/site_c1/articles?per_page=100&${query}`, { key: C.key }))).data.map((a: { id: string }) => a.id)
    // The whole month by bare dates: its first and last instants in, the instants just outside it out.
    expect(await ids(`from=${PERIOD.from}&to=${PERIOD.to}`)).toEqual(["art_p_last", "art_p_mid_a", "art_p_mid_b", "art_p_draft", "art_p_first"])
    // One day, from and to the same date: the whole day (a bare `to` is the end of that day).
    expect(await ids("from=2025-03-15&to=2025-03-15")).toEqual(["art_p_mid_a", "art_p_mid_b"])
    expect(await ids("from=2025-03-31&to=2025-03-31")).toEqual(["art_p_last"])
    expect(await ids("from=2025-04-01&to=2025-04-01")).toEqual(["art_p_apr"])
    // Instants: both ends inclusive, to the millisecond.
    expect(await ids("from=2025-03-01T00:00:00.000Z&to=2025-03-01T00:00:00.000Z")).toEqual(["art_p_first"])
    expect(await ids("from=2025-03-01T00:00:00.001Z&to=2025-03-31T23:59:59.998Z")).toEqual(["art_p_mid_a", "art_p_mid_b", "art_p_draft"])
    expect(await ids("to=2025-02-28")).toEqual(["art_p_feb"])
    expect(await ids("from=2025-04-01T00:00:00Z")).toEqual(["art_p_apr"])
    // Status and dates together.
    expect(await ids(`status=published&from=${PERIOD.from}&to=${PERIOD.to}`)).toEqual(EXPECTED_SUMMARY.articles.ids)
  })

  it("should return one article with its body and an ETag naming its revision", async () => {
    const res = await t.api("/api/v1/articles/art_a1")
    const body = await json(res)
    expect(body.body).toContain('data-service-protected="backlink"')
    expect(body.revision).toBe(1)
    expect(res.headers.get("etag")).toBe('"art_a1-r1"')
  })

  it("should answer 304 without a body when If-None-Match names the article's ETag, and log it", async () => {
    for (const header of ['"art_a1-r1"', 'W/"art_a1-r1"', '"art_a1-r7", "art_a1-r1"', "*"]) {
      const res = await t.api("/api/v1/articles/art_a1", { headers: { "If-None-Match": header } })
      expect([res.status, res.headers.get("etag"), await res.text()], header).toEqual([304, '"art_a1-r1"', ""])
      expect(res.headers.get("ratelimit-remaining"), header).toMatch(/^\d+$/)
    }
    // another revision's tag, another article's, or a value that is no entity tag: the full answer
    for (const header of ['"art_a1-r2"', '"art_a2-r1"', "art_a1-r1"]) {
      const res = await t.api("/api/v1/articles/art_a1", { headers: { "If-None-Match": header } })
      expect(res.status, header).toBe(200)
      expect((await json(res)).id).toBe("art_a1")
    }
    const notModified = await t.api("/api/v1/articles/art_a1", { headers: { "If-None-Match": '"art_a1-r1"' } })
    const log = await json(await t.api("/api/v1/activity?per_page=100"))
    expect(log.data.find((e: { request_id: string }) => e.request_id === notModified.headers.get("x-request-id"))).toMatchObject({ status: 304, error_code: null, article_id: "art_a1" })
  })

  it("should list backlinks newest first, ties by id", async () => {
    const bl = await json(await t.api("/api/v1/sites/site_a1/backlinks"))
    expect(bl.data.map((b: { id: string }) => b.id)).toEqual(["bl_a1", "bl_a2", "bl_a3", "bl_a4", "bl_a5", "bl_a6"])
    const dates = bl.data.map((b: { date_acquired: string }) => b.date_acquired)
    expect(new Set(dates).size).toBe(6)
    expect([...dates].sort().reverse()).toEqual(dates)
    const c = await json(await t.api("/api/v1/sites/site_c1/backlinks", { key: C.key }))
    expect(c.data.map((b: { id: string }) => b.id)).toEqual(["bl_p_5", "bl_p_2", "bl_p_3", "bl_p_1", "bl_p_4"])
    const inMonth = await json(await t.api(`/api/v1/sites/site_c1/backlinks?from=${PERIOD.from}&to=${PERIOD.to}`, { key: C.key }))
    expect(inMonth.data.map((b: { id: string }) => b.id)).toEqual(EXPECTED_SUMMARY.backlinks.ids)
  })

  it("should summarise a month: published articles and backlinks inside it, their counts and word count", async () => {
    const res = await t.api(`/api/v1/sites/site_c1/stats?period=${PERIOD.key}`, { key: C.key })
    expect(res.status).toBe(200)
    const stats = await json(res)
    expect(stats.site_id).toBe("site_c1")
    expect(stats.period).toEqual(PERIOD)
    expect(stats.articles.count).toBe(EXPECTED_SUMMARY.articles.count)
    expect(stats.articles["word count"]).toBe(EXPECTED_SUMMARY.articles["word count"])
    expect(stats.articles).not.toHaveProperty("word_count")
    expect(stats.articles.items.map((a: { id: string }) => a.id)).toEqual(EXPECTED_SUMMARY.articles.ids)
    for (const item of stats.articles.items) {
      const words = PERIOD_ARTICLES.find((a) => a.id === item.id)?.words
      expect(item["word count"], item.id).toBe(words)
      expect(item).not.toHaveProperty("body")
    }
    expect(stats.backlinks).toMatchObject({
      count: EXPECTED_SUMMARY.backlinks.count,
      industry: EXPECTED_SUMMARY.backlinks.industry,
      local: EXPECTED_SUMMARY.backlinks.local,
    })
    expect(stats.backlinks.items.map((b: { id: string }) => b.id)).toEqual(EXPECTED_SUMMARY.backlinks.ids)
    const empty = await json(await t.api("/api/v1/sites/site_c1/stats?period=2025-05", { key: C.key }))
    expect(empty.period).toEqual({ key: "2025-05", from: "2025-05-01", to: "2025-05-31" })
    expect(empty.articles).toMatchObject({ count: 0, "word count": 0, items: [] })
    expect(empty.backlinks).toMatchObject({ count: 0, industry: 0, local: 0, items: [] })
  })

  it("should summarise the relative periods of the fixture", async () => {
    const stats = await json(await t.api("/api/v1/sites/site_a1/stats?period=last_30_days"))
    expect(stats.period.key).toBe("last_30_days")
    expect(stats.backlinks.count).toBe(6)
    expect(stats.backlinks.industry + stats.backlinks.local).toBe(6)
    expect(stats.articles.items.every((a: { status: string }) => a.status === "published")).toBe(true)
    // art_a1 and the 20 published of the other 24, all within the last 26 days.
    expect(stats.articles.count).toBe(21)
    expect(stats.articles.items).toHaveLength(21)
    expect(stats.articles["word count"]).toBe(stats.articles.items.reduce((n: number, a: Record<string, number>) => n + (a["word count"] ?? NaN), 0))
    expect(stats.articles["word count"]).toBe(9 + 20 * 7)
    const month = await json(await t.api("/api/v1/sites/site_a1/stats?period=2020-01"))
    expect(month.period).toEqual({ key: "2020-01", from: "2020-01-01", to: "2020-01-31" })
  })

  it("should list revisions without bodies and return one with its body", async () => {
    const list = await json(await t.api("/api/v1/articles/art_a1/revisions"))
    expect(list.data[0]).toMatchObject({ number: 1, origin: "editor" })
    expect(list.data[0]).not.toHaveProperty("body")
    const one = await json(await t.api("/api/v1/articles/art_a1/revisions/1"))
    expect(one.body).toContain("partner offer")
  })
})

describe("strict requests", () => {
  const bad: ReadonlyArray<readonly [string, string]> = [
    ["/api/v1/sites/site_a1/articles?from=2026-13-01", "from"],
    ["/api/v1/sites/site_a1/articles?from=yesterday", "from"],
    ["/api/v1/sites/site_a1/articles?from=2026-11-10&to=2026-11-01", ""],
    ["/api/v1/sites/site_a1/articles?per_page=0", "per_page"],
    ["/api/v1/sites/site_a1/articles?per_page=101", "per_page"],
    ["/api/v1/sites/site_a1/articles?per_page=10000000", "per_page"],
    ["/api/v1/sites/site_a1/articles?per_page=abc", "per_page"],
    ["/api/v1/sites/site_a1/articles?page=0", "page"],
    ["/api/v1/sites/site_a1/articles?page=1.5", "page"],
    ["/api/v1/sites/site_a1/articles?status=bogus", "status"],
    ["/api/v1/sites/site_a1/articles?bogus=1", "bogus"],
    ["/api/v1/sites/site_a1/articles?page=1&page=2", "page"],
    ["/api/v1/sites/site_a1/backlinks?to=not-a-date", "to"],
    // instants outside 0001-01-01 to 9999-12-31 UTC (the last is 10000-01-01T00:59:59Z)
    ["/api/v1/sites/site_a1/articles?from=0000-01-01", "from"],
    ["/api/v1/sites/site_a1/articles?to=0000-01-01", "to"],
    ["/api/v1/sites/site_a1/articles?from=0000-01-01T00:00:00Z", "from"],
    ["/api/v1/sites/site_a1/articles?from=9999-12-31T23:59:59-01:00", "from"],
    ["/api/v1/sites/site_a1/backlinks?from=9999-12-31T23:59:59-01:00", "from"],
    ["/api/v1/activity?from=0000-01-01", "from"],
    ["/api/v1/activity?to=9999-12-31T23:59:59-01:00", "to"],
    ["/api/v1/sites/site_a1/stats?period=0000-01", "period"],
    ["/api/v1/sites/site_a1/stats?period=bogus", "period"],
    ["/api/v1/sites/site_a1/stats?period=2026-13", "period"],
    ["/api/v1/activity?channel=bogus", "channel"],
    ["/api/v1/articles/art_a1?x=1", "x"],
    ["/api/v1/sites?per_page=-1", "per_page"],
  ]
  for (const [path, name] of bad) {
    it(`should answer 400 invalid_request naming the parameter for ${path}`, async () => {
      const body = await expectProblem(await t.api(path), 400, "invalid_request")
      expect(Array.isArray(body.errors)).toBe(true)
      if (name !== "") expect(`${body.detail} ${JSON.stringify(body.errors)}`).toContain(name)
    })
  }

  it("should say why a date out of range is refused, not pass it to the database", async () => {
    const body = await expectProblem(await t.api("/api/v1/sites/site_a1/articles?from=0000-01-01T00:00:00Z"), 400, "invalid_request")
    expect(body.errors).toEqual([{ path: "from", message: expect.stringMatching(/between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z/) }])
    expect(body.detail).not.toMatch(/field value|postgres|database/i)
  })

  it("should accept the whole range, 0001-01-01 to 9999-12-31, and months of the first century", async () => {
    const all = await json(await t.api("/api/v1/sites/site_a1/articles?per_page=100"))
    const dated = all.data.filter((a: { published_at: string | null }) => a.published_at !== null)
    for (const query of ["from=0001-01-01", "to=9999-12-31", "from=0001-01-01T00:00:00Z&to=9999-12-31T23:59:59.999Z"]) {
      const res = await t.api(`/api/v1/sites/site_a1/articles?per_page=100&${query}`)
      expect(res.status, query).toBe(200)
      const page = await json(res)
      expect(page.data, query).toEqual(dated)
      expect(page.pagination.total, query).toBe(dated.length)
    }
    const backlinks = await json(await t.api("/api/v1/sites/site_a1/backlinks?from=9999-12-31T23:59:59.999Z"))
    expect(backlinks.data).toEqual([])
    const activity = await t.api("/api/v1/activity?from=0001-01-01&to=9999-12-31")
    expect(activity.status).toBe(200)
    const stats = await json(await t.api("/api/v1/sites/site_a1/stats?period=0001-01"))
    expect(stats.period).toEqual({ key: "0001-01", from: "0001-01-01", to: "0001-01-31" })
    expect([stats.articles.count, stats.articles["word count"], stats.backlinks.count]).toEqual([0, 0, 0])
    expect((await json(await t.api("/api/v1/sites/site_a1/stats?period=0099-12"))).period).toEqual({ key: "0099-12", from: "0099-12-01", to: "0099-12-31" })
  })

  it("should answer bad path ids and revision numbers with 404 not_found", async () => {
    for (const path of [
      "/api/v1/articles/%20bad%20id",
      "/api/v1/articles/art_nope",
      `/api/v1/articles/${"x".repeat(300)}`,
      "/api/v1/sites/..%2F..%2Fetc/articles",
      "/api/v1/articles/art_a1/revisions/0",
      "/api/v1/articles/art_a1/revisions/abc",
      "/api/v1/articles/art_a1/revisions/99",
    ]) {
      await expectProblem(await t.api(path), 404, "not_found")
    }
    // a revision is named by its number and article, a number that is none as it was given
    expect((await json(await t.api("/api/v1/articles/art_a1/revisions/99"))).detail).toBe("No revision 99 of article 'art_a1' on this account.")
    expect((await json(await t.api("/api/v1/articles/art_a1/revisions/0"))).detail).toMatch(/^No revision '0' of this article: revisions are numbered 1, 2, 3/)
  })

  it("should answer a method the path does not take with 405, Allow and a problem", async () => {
    const res = await t.api("/api/v1/articles/art_a1", { method: "DELETE" })
    expect(res.status).toBe(405)
    expect(res.headers.get("allow")).toContain("PUT")
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/)
    expect((await json(res)).code).toBe("method_not_allowed")
    // logged as an entry about that article, with the route's template as its action
    const site = await t.api("/api/v1/sites/site_a1/backlinks", { method: "DELETE" })
    expect(site.status).toBe(405)
    const log = await json(await t.api("/api/v1/activity?per_page=100"))
    const entryOf = (r: Response) => log.data.find((e: { request_id: string }) => e.request_id === r.headers.get("x-request-id"))
    expect(entryOf(res)).toMatchObject({ action: "DELETE /api/v1/articles/{id}", status: 405, error_code: "method_not_allowed", article_id: "art_a1", site_id: "site_a1" })
    expect(entryOf(site)).toMatchObject({ action: "DELETE /api/v1/sites/{id}/backlinks", status: 405, article_id: null, site_id: "site_a1" })
  })

  it("should answer an unknown API path with a 404 problem", async () => {
    await expectProblem(await t.api("/api/v1/nothing-here"), 404, "not_found")
  })
})

describe("isolation between accounts (OWASP API1)", () => {
  const foreign = [
    ["GET", "/api/v1/sites/site_b1/articles"],
    ["GET", "/api/v1/sites/site_b1/backlinks"],
    ["GET", "/api/v1/sites/site_b1/stats"],
    ["GET", "/api/v1/articles/art_b1"],
    ["GET", "/api/v1/articles/art_b1/revisions"],
    ["GET", "/api/v1/articles/art_b1/revisions/1"],
    ["PUT", "/api/v1/articles/art_b1"],
    ["PUT", "/api/v1/articles/art_b1?dry_run=true"],
    ["POST", "/api/v1/articles/art_b1/featured-image"],
  ] as const
  for (const [method, path] of foreign) {
    it(`should answer ${method} ${path} of another account exactly like a missing one`, async () => {
      const init =
        method === "GET"
          ? {}
          : method === "PUT"
            ? { method, headers: { "content-type": "application/json" }, body: JSON.stringify({ title: "taken over" }) }
            : { method, headers: { "content-type": "application/json" }, body: JSON.stringify({ url: "https://example.com/i.png" }) }
      const foreignRes = await t.api(path, init)
      const missingRes = await t.api(path.replace("art_b1", "art_zz").replace("site_b1", "site_zz"), init)
      const a = await expectProblem(foreignRes, 404, "not_found")
      const b = await expectProblem(missingRes, 404, "not_found")
      expect(a.detail.replace("art_b1", "X").replace("site_b1", "X")).toBe(b.detail.replace("art_zz", "X").replace("site_zz", "X"))
    })
  }

  it("should not list another account's sites or activity", async () => {
    const sites = await json(await t.api("/api/v1/sites", { key: KEYS.b }))
    expect(sites.data.map((s: { id: string }) => s.id)).toEqual(["site_b1"])
    const activity = await json(await t.api("/api/v1/activity?per_page=100", { key: KEYS.b }))
    expect(activity.data.every((e: { account_id: string }) => e.account_id === "acc_b")).toBe(true)
    const bArticle = await json(await t.api("/api/v1/articles/art_b1", { key: KEYS.b }))
    expect(bArticle.title).toBe("B article")
  })
})

describe("activity", () => {
  it("should record every authenticated call, refused ones included, with the route template", async () => {
    // the server's clock is the machine's (Date.now, as the client's here): the call's duration lies within the client's wait
    const sentAt = Date.now()
    const ok = await t.api("/api/v1/articles/art_a1")
    const waited = Date.now() - sentAt
    const notFound = await t.api("/api/v1/articles/art_missing")
    const invalid = await t.api("/api/v1/sites?per_page=0")
    const log = await json(await t.api("/api/v1/activity?per_page=100&channel=api"))
    const byRequest = new Map(log.data.map((e: { request_id: string }) => [e.request_id, e]))
    expect(byRequest.get(ok.headers.get("x-request-id"))).toMatchObject({
      action: "GET /api/v1/articles/{id}",
      status: 200,
      error_code: null,
      article_id: "art_a1",
      site_id: "site_a1",
      channel: "api",
      actor: { type: "api_key", id: "key_a" },
    })
    expect(byRequest.get(notFound.headers.get("x-request-id"))).toMatchObject({ status: 404, error_code: "not_found" })
    expect(byRequest.get(invalid.headers.get("x-request-id"))).toMatchObject({ action: "GET /api/v1/sites", status: 400, error_code: "invalid_request" })
    const entry = byRequest.get(ok.headers.get("x-request-id")) as { duration_ms: number }
    expect(Number.isInteger(entry.duration_ms)).toBe(true)
    expect(entry.duration_ms).toBeLessThanOrEqual(waited)
  })

  it("should list the caller's log newest first and filter it by channel and by inclusive from/to", async () => {
    type Entry = { id: string; at: string; channel: string; request_id: string; action: string; account_id: string }
    const logOf = async (query: string): Promise<Array<Entry>> => {
      const res = await t.api(`/api/v1/activity?per_page=100${query}`, { key: C.key })
      expect(res.status).toBe(200)
      return (await json(res)).data
    }
    // Each call starts after the clock has moved past the previous answer, so their entries' times differ.
    const afterThisMillisecond = async () => {
      const now = Date.now()
      while (Date.now() <= now) await new Promise((r) => setImmediate(r))
    }
    const calls: Array<string> = []
    for (const path of ["/api/v1/sites", "/api/v1/sites/site_c1/articles", "/api/v1/articles/art_p_first", "/api/v1/sites/site_c1/backlinks", "/api/v1/articles/art_missing"]) {
      await afterThisMillisecond()
      calls.push((await t.api(path, { key: C.key })).headers.get("x-request-id") ?? "")
      await afterThisMillisecond()
    }
    // A sign-in on the web pages: the same account's entry with channel web.
    const browser = new Browser()
    const home = await (await browser.request(`${t.url}/`)).text()
    const csrf = /name="_csrf" value="([^"]+)"/.exec(home)?.[1] ?? ""
    expect((await browser.request(`${t.url}/`, { form: { _csrf: csrf, next: "/sites", email: C.email, password: C.password } })).status).toBe(303)

    const all = await logOf("")
    expect(all.every((e) => e.account_id === "acc_c")).toBe(true)
    const times = all.map((e) => Date.parse(e.at))
    expect([...times].sort((a, b) => b - a)).toEqual(times)
    // Newest first: the calls appear in the reverse of the order they were made.
    const positions = calls.map((id) => all.findIndex((e) => e.request_id === id))
    expect(positions.every((p) => p >= 0)).toBe(true)
    expect([...positions].sort((a, b) => b - a)).toEqual(positions)

    const web = await logOf("&channel=web")
    expect(web.length).toBeGreaterThanOrEqual(1)
    expect(web.every((e) => e.channel === "web")).toBe(true)
    const api = await logOf("&channel=api")
    expect(api.every((e) => e.channel === "api")).toBe(true)
    for (const id of calls) expect(api.some((e) => e.request_id === id)).toBe(true)
    expect((await logOf("&channel=mcp"))).toEqual([])

    // from/to: exactly the entries between the second and the fourth call, both ends included.
    const second = all.find((e) => e.request_id === calls[1])!
    const fourth = all.find((e) => e.request_id === calls[3])!
    const between = await logOf(`&from=${encodeURIComponent(second.at)}&to=${encodeURIComponent(fourth.at)}`)
    expect(between.map((e) => e.request_id)).toEqual([calls[3], calls[2], calls[1]])
    const justAfter = new Date(Date.parse(second.at) + 1).toISOString()
    const narrowed = await logOf(`&from=${encodeURIComponent(justAfter)}&to=${encodeURIComponent(fourth.at)}`)
    expect(narrowed.map((e) => e.request_id)).toEqual([calls[3], calls[2]])
    // A bare date covers its whole UTC day; the day before holds none of these entries.
    const day = second.at.slice(0, 10)
    const sameDay = await logOf(`&from=${day}&to=${day}&channel=api`)
    expect(sameDay.some((e) => e.request_id === calls[1])).toBe(true)
    const dayBefore = new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10)
    expect(await logOf(`&to=${dayBefore}`)).toEqual([])
  })

  it("should log reading the log itself", async () => {
    const first = await t.api("/api/v1/activity")
    const log = await json(await t.api("/api/v1/activity?per_page=100"))
    expect(log.data.some((e: { request_id: string; action: string }) => e.request_id === first.headers.get("x-request-id") && e.action === "GET /api/v1/activity")).toBe(true)
  })
})

/** The REST operations the contract requires, as method and path template under /api/v1 (parameter names left out). */
const CONTRACT_OPERATIONS = [
  "GET /sites",
  "GET /sites/{}/articles",
  "GET /sites/{}/backlinks",
  "GET /sites/{}/stats",
  "GET /articles/{}",
  "PUT /articles/{}",
  "POST /articles/{}/featured-image",
  "GET /articles/{}/revisions",
  "GET /articles/{}/revisions/{}",
  "GET /activity",
  "GET /search",
]

describe("search (GET /search, q on a site's articles)", () => {
  const D = "cs_DDDDdddd1111222233334444555566667777"
  const d = (path: string, init: RequestInit = {}) => t.api(path, { ...init, key: D })
  const article = (id: string, title: string, body: string, published_at: string, keyword = "") => ({
    id, title, url: `https://delta.test/${id}`, status: "published", published_at, "target keyword": keyword, body,
  })
  beforeAll(async () => {
    await t.server.runtime.runPromise(
      importData({
        accounts: [
          {
            id: "acc_d",
            email: "owner-d@example.com",
            password: "password-d-123",
            name: "Owner D",
            api_keys: [{ id: "key_d", name: "d write", key: D, scope: "write" }],
            sites: [
              {
                id: "site_d1",
                name: "Delta",
                url: "https://delta.test",
                articles: [
                  article("art_d1", "Pruning roses", "<p>Tomato blight also spreads where roses grow; tomato blight loves damp.</p>", "2026-11-05T10:00:00Z"),
                  article("art_d2", "Tomato blight: a guide", "<p>Spot it early.</p>", "2026-10-01T10:00:00Z"),
                  article("art_d3", "Crème brûlée", "<p>5 &lt; 6 &amp; a CAFÉ classic</p>", "2026-09-01T10:00:00Z"),
                ],
              },
              { id: "site_d2", name: "Delta two", url: "https://delta2.test", articles: [article("art_d4", "Tomato soup", "<p>Soup.</p>", "2026-08-01T10:00:00Z")] },
            ],
          },
        ],
      }),
    )
  })

  it("should find the account's articles best first, a title match first, with snippets in the list envelope", async () => {
    const res = await d("/api/v1/search?q=tomato%20blight")
    expect(res.status).toBe(200)
    const body = await json(res)
    expect(body.data.map((a: { id: string }) => a.id)).toEqual(["art_d2", "art_d1"])
    expect(body.pagination).toEqual({ page: 1, per_page: 20, total: 2, total_pages: 1 })
    expect(body.data[1].snippet).toContain("<mark>Tomato</mark> <mark>blight</mark>")
    expect(body.data[1].snippet.replace(/<\/?mark>/g, "").length).toBeLessThanOrEqual(300)
    expect(body.data[1]).not.toHaveProperty("body")
    expect(body.data[1]["target keyword"]).toBe("")
    // accents and case ignored; the snippet escapes everything but the marks
    const accents = await json(await d("/api/v1/search?q=creme%20cafe"))
    expect(accents.data.map((a: { id: string }) => a.id)).toEqual(["art_d3"])
    expect(accents.data[0].snippet).toBe("5 &lt; 6 &amp; a <mark>CAFÉ</mark> classic")
    // a phrase is marked where it matched, not each of its words wherever it stands
    const phrase = await json(await d(`/api/v1/search?q=${encodeURIComponent('"blight loves"')}`))
    expect(phrase.data[0].snippet).toBe("Tomato blight also spreads where roses grow; tomato <mark>blight</mark> <mark>loves</mark> damp.")
    // all sites, or one
    expect((await json(await d("/api/v1/search?q=tomato"))).pagination.total).toBe(3)
    expect((await json(await d("/api/v1/search?q=tomato&site_id=site_d2"))).data.map((a: { id: string }) => a.id)).toEqual(["art_d4"])
    const paged = await d("/api/v1/search?q=tomato&per_page=1&page=2")
    expect((await json(paged)).data).toHaveLength(1)
    expect(paged.headers.get("link")).toContain('rel="next"')
    // other accounts see nothing of it
    expect((await json(await t.api("/api/v1/search?q=tomato%20blight"))).pagination.total).toBe(0)
    expect((await t.api("/api/v1/search?q=tomato&site_id=site_d1")).status).toBe(404)
  })

  it("should take q on a site's article list: matching articles by relevance, without snippets", async () => {
    const body = await json(await d("/api/v1/sites/site_d1/articles?q=tomato%20blight"))
    expect(body.data.map((a: { id: string }) => a.id)).toEqual(["art_d2", "art_d1"])
    expect(body.data[0]).not.toHaveProperty("snippet")
    expect((await json(await d("/api/v1/sites/site_d1/articles?q=tomato&from=2026-11-01"))).data.map((a: { id: string }) => a.id)).toEqual(["art_d1"])
  })

  it("should find an edit by its new words at once", async () => {
    const put = await d("/api/v1/articles/art_d4", { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ body: "<p>Gazpacho served cold.</p>" }) })
    expect(put.status).toBe(200)
    expect((await json(await d("/api/v1/search?q=gazpacho"))).data.map((a: { id: string }) => a.id)).toEqual(["art_d4"])
    expect((await json(await d("/api/v1/search?q=soup%20-gazpacho"))).pagination.total).toBe(0)
  })

  const badQ: ReadonlyArray<readonly [string, string]> = [
    ["/api/v1/search", "q"],
    ["/api/v1/search?q=", "q"],
    [`/api/v1/search?q=${"a".repeat(201)}`, "q"],
    ["/api/v1/search?q=a%00b", "q"],
    ["/api/v1/search?q=a&status=bogus", "status"],
    ["/api/v1/search?q=a&per_page=101", "per_page"],
    ["/api/v1/search?q=a&q=b", "q"],
    ["/api/v1/sites/site_d1/articles?q=", "q"],
  ]
  for (const [path, name] of badQ) {
    it(`should answer 400 invalid_request naming ${name} for ${path.slice(0, 60)}`, async () => {
      const body = await expectProblem(await d(path), 400, "invalid_request")
      expect(`${body.detail} ${JSON.stringify(body.errors)}`).toContain(name)
    })
  }
  it("should take q of 200 characters counted as code points, and one with nothing to match", async () => {
    expect((await d(`/api/v1/search?q=${encodeURIComponent("😀".repeat(200))}`)).status).toBe(200)
    expect((await json(await d(`/api/v1/search?q=${encodeURIComponent("!!! ---")}`))).pagination.total).toBe(0)
  })
})

describe("OpenAPI, docs and health", () => {
  it("should publish a valid OpenAPI 3.1 document with both security schemes and every operation", async () => {
    const res = await fetch(`${t.url}/api/v1/openapi.json`)
    expect(res.status).toBe(200)
    const doc = await res.json()
    expect(doc.openapi).toBe("3.1.0")
    const result = await new Validator().validate(doc)
    expect(result.valid, JSON.stringify(result.errors)).toBe(true)
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(["apiKeyHeader", "bearerAuth"])
    expect(doc.components.securitySchemes.apiKeyHeader).toMatchObject({ type: "apiKey", in: "header", name: "X-API-Key" })
    // Every operation the contract names is documented (more may be: a documented addition is no failure).
    const documented = new Set(
      Object.entries(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap(([path, item]) =>
        Object.keys(item).map((method) => `${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, "{}")}`),
      ),
    )
    for (const operation of CONTRACT_OPERATIONS) expect(documented, operation).toContain(operation)
    const operationIds = Object.values(doc.paths).flatMap((item) => Object.values(item as Record<string, { operationId: string }>).map((o) => o.operationId))
    expect(new Set(operationIds).size).toBe(operationIds.length)
    const put = doc.paths["/articles/{id}"].put
    expect(Object.keys(put.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "403", "404", "409", "412", "413", "415", "422", "429", "500", "503"]))
    expect(put.requestBody.content["application/json"].schema).toBeDefined()
    expect(put.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(["id", "dry_run", "If-Match"]))
    for (const name of ["Article", "ArticleListItem", "Website", "Backlink", "Revision", "RevisionSummary", "ActivityEntry", "PeriodSummary", "Problem"]) {
      expect(doc.components.schemas).toHaveProperty(name)
    }
    // Character limits, in code points like the server counts them, for clients that validate first.
    const schemas = doc.components.schemas
    const jsonBody = (method: string, path: string) => doc.paths[path][method].requestBody.content["application/json"].schema
    expect(jsonBody("put", "/articles/{id}").properties.title).toMatchObject({ minLength: 1 })
    expect(jsonBody("put", "/articles/{id}").properties.reason).toMatchObject({ maxLength: 500 })
    expect(jsonBody("patch", "/articles/{id}").properties.reason).toMatchObject({ maxLength: 500 })
    expect(schemas.TextEdit.properties.find).toMatchObject({ minLength: 1 })
    expect(schemas.FeaturedImageUrlBody.properties.alt).toMatchObject({ maxLength: 500 })
    const image = doc.paths["/articles/{id}/featured-image"].post.requestBody.content
    expect(image["multipart/form-data"].schema.properties.alt).toMatchObject({ type: "string", maxLength: 500 })

    // What the server refuses, the document refuses too: a client validating first learns the same.
    const compile = schemaCompiler(doc)
    const putBody = compile(jsonBody("put", "/articles/{id}"))
    expect([{}, { reason: "r" }, { title: "T" }, { body: "<p>b</p>" }, { title: "T", body: "<p>b</p>", reason: "r" }].map(putBody)).toEqual([false, false, true, true, true])
    const patchBody = compile(jsonBody("patch", "/articles/{id}"))
    expect([{}, { edits: [] }, { reason: "r" }, { title: "T" }, { edits: [{ find: "a", replace: "b" }] }].map(patchBody)).toEqual([false, false, false, true, true])
    const parameter = (path: string, name: string) =>
      (doc.paths[path].get.parameters as Array<{ name: string; schema: unknown }>).find((p) => p.name === name)!.schema as Record<string, unknown>
    const period = compile(parameter("/sites/{id}/stats", "period"))
    expect(["this_month", "last_month", "last_30_days", "2026-11", "1969-12", "0001-01", "0010-05", "0999-12", "0000-01", "2026-13", "2026-1", "month"].map(period)).toEqual([
      true, true, true, true, true, true, true, true, false, false, false, false,
    ])
    expect(parameter("/sites/{id}/stats", "period")["pattern"]).not.toContain("(?")
    expect(parameter("/sites/{id}/stats", "period")["default"]).toBe("this_month")
    const from = compile(parameter("/sites/{id}/articles", "from"))
    expect(["2026-11-02", "2026-11-02T10:00:00Z", "2026-11-02T10:00:00.5+01:00", "2026/11/02", "2026-11-02 10:00", "yesterday"].map(from)).toEqual([
      true, true, true, false, false, false,
    ])
    expect(parameter("/search", "q")).toMatchObject({ type: "string", minLength: 1, maxLength: 200 })
    expect(parameter("/sites/{id}/articles", "q")).toMatchObject({ minLength: 1, maxLength: 200 })
    expect(parameter("/sites/{id}/articles", "page")["default"]).toBe(1)
    expect(parameter("/sites/{id}/articles", "per_page")["default"]).toBe(20)
  })

  it("should render the reference page from local assets under a CSP that allows them", async () => {
    const res = await fetch(`${t.url}/api/docs`)
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain("/api/docs/swagger-ui-bundle.js")
    expect(html).not.toMatch(/https?:\/\/(?!localhost)[a-z0-9.-]+\.(com|net|org|io)/)
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'")
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
    const js = await fetch(`${t.url}/api/docs/swagger-ui-bundle.js`)
    expect(js.status).toBe(200)
    expect(js.headers.get("content-type")).toMatch(/javascript/)
    expect((await fetch(`${t.url}/api/docs/init.js`)).status).toBe(200)
    expect((await fetch(`${t.url}/api/docs/swagger-ui.css`)).status).toBe(200)
  })

  it("should answer /healthz and /readyz without auth and without a rate limit", async () => {
    const h = await fetch(`${t.url}/healthz`)
    expect(h.status).toBe(200)
    expect(h.headers.get("ratelimit-limit")).toBeNull()
    const r = await fetch(`${t.url}/readyz`)
    expect(r.status).toBe(200)
    expect(await r.json()).toEqual({ status: "ready" })
  })
})
