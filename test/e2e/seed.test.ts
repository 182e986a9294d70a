/**
 * Exact to the seed, as a client sees it on PostgreSQL. First, the seed's three article keys, `"target keyword"`, `"word count"` and `"featured image"`, spelled
 * word for word (spaces included) in every place a client reads them, with no snake_case twin:
 * REST lists, single articles, revisions, the period summary, the OpenAPI document and MCP
 * `structuredContent` and output schemas. Then the contract's dry run over MCP (the same error as
 * the real call), strict paging numbers, rate-limit headers on every authenticated answer, and the
 * site of every activity entry about an article.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { connectOrFail, ScriptedOAuthProvider } from "../mcp/support.ts"
import { eventually } from "../support/eventually.ts"
import { json, startTestServer, type TestServer } from "./helpers.ts"

const SEED_KEYS = ["target keyword", "word count", "featured image"] as const
const TWINS = ["target_keyword", "word_count", "featured_image", "targetKeyword", "wordCount", "featuredImage"]

let t: TestServer
let client: Client

/** Every key of an object, recursively (array items and nested objects included). */
const allKeys = (value: unknown, into = new Set<string>()): Set<string> => {
  if (Array.isArray(value)) for (const v of value) allKeys(v, into)
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      into.add(k)
      allKeys(v, into)
    }
  }
  return into
}

const expectNoTwin = (value: unknown) => {
  const keys = allKeys(value)
  for (const twin of TWINS) expect(keys.has(twin), `snake/camel twin '${twin}' served`).toBe(false)
}

beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PER_MINUTE: "10000" })
  const provider = new ScriptedOAuthProvider({ email: "owner-a@example.com", password: "password-a-123", decision: "allow" })
  client = await connectOrFail(`${t.url}/mcp`, provider)
}, 60_000)

afterAll(async () => {
  await client?.close()
  await t?.close()
})

describe("the seed's key names over REST", () => {
  it("should spell them as written on list items, with the values the fixture gave", async () => {
    const body = await json(await t.api("/api/v1/sites/site_a1/articles?per_page=100"))
    const a1 = body.data.find((a: { id: string }) => a.id === "art_a1")
    expect(a1["target keyword"]).toBe("protected")
    // "Intro / Read the partner offer first. / Then our guide.": block elements separate words.
    expect(a1["word count"]).toBe(9)
    expect(a1["featured image"]).toEqual({ url: "https://alpha.test/i.jpg", alt: "old" })
    for (const item of body.data) for (const key of SEED_KEYS) expect(item).toHaveProperty([key])
    expectNoTwin(body)
  })

  it("should spell them as written on the single article, its revisions and the period summary", async () => {
    const article = await json(await t.api("/api/v1/articles/art_a1"))
    expect(Object.keys(article)).toEqual(expect.arrayContaining([...SEED_KEYS]))
    const revisions = await json(await t.api("/api/v1/articles/art_a1/revisions"))
    expect(revisions.data[0]["featured image"]).toEqual({ url: "https://alpha.test/i.jpg", alt: "old" })
    const revision = await json(await t.api("/api/v1/articles/art_a1/revisions/1"))
    expect(revision["featured image"]).toEqual({ url: "https://alpha.test/i.jpg", alt: "old" })
    const stats = await json(await t.api("/api/v1/sites/site_a1/stats?period=last_30_days"))
    const sum = stats.articles.items.reduce((n: number, a: Record<string, number>) => n + (a["word count"] ?? NaN), 0)
    expect(stats.articles["word count"]).toBe(sum)
    expect(stats.articles["word count"]).toBeGreaterThan(0)
    for (const value of [article, revisions, revision, stats]) expectNoTwin(value)
  })

  it("should refuse a PUT that tries to set one of them, naming the key", async () => {
    for (const key of SEED_KEYS) {
      const res = await t.api("/api/v1/articles/art_a02", {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ title: "x", [key]: key === "word count" ? 3 : "y" }),
      })
      expect(res.status).toBe(400)
      expect((await json(res)).detail).toContain(`'${key}'`)
    }
  })

  it("should publish them in the OpenAPI document's schemas", async () => {
    const doc = await json(await t.api("/api/v1/openapi.json", { key: null }))
    const schemas = doc.components.schemas as Record<string, { properties?: Record<string, unknown>; required?: Array<string> }>
    for (const name of ["Article", "ArticleListItem"]) {
      expect(Object.keys(schemas[name]?.properties ?? {})).toEqual(expect.arrayContaining([...SEED_KEYS]))
      expect(schemas[name]?.required).toEqual(expect.arrayContaining([...SEED_KEYS]))
    }
    expect(Object.keys(schemas["Revision"]?.properties ?? {})).toContain("featured image")
    expectNoTwin(doc.components.schemas)
  })
})

describe("the seed's key names over MCP", () => {
  it("should spell them as written in structuredContent and in the tools' output schemas", async () => {
    const got = (await client.callTool({ name: "get_article", arguments: { article_id: "art_a1" } })) as { structuredContent: Record<string, unknown> }
    expect(got.structuredContent["target keyword"]).toBe("protected")
    expect(got.structuredContent["word count"]).toBe(9)
    const listed = (await client.callTool({ name: "list_articles", arguments: { site_id: "site_a1", per_page: 5 } })) as { structuredContent: unknown }
    const stats = (await client.callTool({ name: "get_stats", arguments: { site_id: "site_a1", period: "last_30_days" } })) as unknown as {
      structuredContent: { articles: Record<string, unknown> }
    }
    expect(typeof stats.structuredContent.articles["word count"]).toBe("number")
    for (const value of [got.structuredContent, listed.structuredContent, stats.structuredContent]) expectNoTwin(value)
    const { tools } = await client.listTools()
    const getArticle = tools.find((tool) => tool.name === "get_article")
    expect(Object.keys((getArticle?.outputSchema as { properties: object }).properties)).toEqual(expect.arrayContaining([...SEED_KEYS]))
    expectNoTwin(tools.map((tool) => tool.outputSchema))
  })
})

describe("a dry run over MCP answers what the real call would", () => {
  const problemOf = (result: { isError?: boolean; structuredContent?: unknown; content: Array<{ text?: string }> }) => {
    expect(result.isError).toBe(true)
    expect(result.structuredContent).toBeUndefined()
    return JSON.parse(result.content[0]?.text ?? "") as { code: string; blocks?: Array<{ kind: string }> }
  }

  it("should refuse a dry run that removes a protected block with the tool error protected_link_changed and its blocks", async () => {
    const before = await json(await t.api("/api/v1/articles/art_a1"))
    const dry = await client.callTool({ name: "update_article", arguments: { article_id: "art_a1", body: "<p>gone</p>", dry_run: true } })
    const problem = problemOf(dry as never)
    expect(problem.code).toBe("protected_link_changed")
    expect(problem.blocks?.map((b) => b.kind)).toEqual(["removed", "removed"])
    const stale = await client.callTool({ name: "update_article", arguments: { article_id: "art_a1", title: "x", dry_run: true, if_revision: before.revision + 5 } })
    expect(problemOf(stale as never).code).toBe("precondition_failed")
    const after = await json(await t.api("/api/v1/articles/art_a1"))
    expect(after.revision).toBe(before.revision)
  })

  it("should answer a dry run that would apply with the sanitised result and write nothing", async () => {
    const result = (await client.callTool({
      name: "update_article",
      arguments: { article_id: "art_a03", body: "<p>clean</p><script>alert(1)</script>", dry_run: true },
    })) as unknown as { structuredContent: { dry_run: boolean; revision: unknown; article: { body: string }; sanitized: { removed: unknown } } }
    expect(result.structuredContent).toMatchObject({ dry_run: true, revision: null, article: { body: "<p>clean</p>" } })
    expect(result.structuredContent.sanitized.removed).toEqual([{ what: "script", count: 1 }])
    expect((await json(await t.api("/api/v1/articles/art_a03"))).revision).toBe(1)
  })
})

describe("strict paging numbers", () => {
  it("should refuse page and per_page not written in decimal digits with a 400 naming the parameter", async () => {
    for (const path of ["/api/v1/sites", "/api/v1/sites/site_a1/articles", "/api/v1/sites/site_a1/backlinks", "/api/v1/articles/art_a1/revisions", "/api/v1/activity"]) {
      for (const name of ["page", "per_page"]) {
        for (const value of ["1e1", "+2", "0x10", "2.0", "-1", " 3", "1_0"]) {
          const res = await t.api(`${path}?${name}=${encodeURIComponent(value)}`)
          expect(res.status, `${path}?${name}=${value}`).toBe(400)
          const problem = await json(res)
          expect(problem.code).toBe("invalid_request")
          expect(problem.errors.map((e: { path: string }) => e.path)).toContain(name)
        }
      }
    }
  })

  it("should accept plain digits, leading zeros included", async () => {
    const body = await json(await t.api("/api/v1/sites/site_a1/articles?page=02&per_page=010"))
    expect(body.pagination).toMatchObject({ page: 2, per_page: 10 })
    expect(body.data).toHaveLength(10)
  })
})

describe("RateLimit-* on every authenticated API answer", () => {
  it("should send them on a 404 for an unknown path, a 405, a 404 for an unknown article and a 400, and log the unknown path", async () => {
    const cases: ReadonlyArray<readonly [string, RequestInit, number]> = [
      ["/api/v1/no-such-thing", {}, 404],
      ["/api/v1/sites/site_a1/nothing/here", {}, 404],
      ["/api/v1", {}, 404],
      ["/api/v1/sites", { method: "DELETE" }, 405],
      ["/api/v1/articles/art_nope", {}, 404],
      ["/api/v1/sites?page=x", {}, 400],
      // paths are case-sensitive: another case is no endpoint, whatever the method
      ["/api/v1/Sites", {}, 404],
      ["/api/v1/articles/art_a1_1/REVISIONS", {}, 404],
      ["/api/v1/SITES", { method: "DELETE" }, 404],
    ]
    for (const [path, init, status] of cases) {
      const res = await t.api(path, init)
      expect(res.status, path).toBe(status)
      for (const h of ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"]) expect(res.headers.get(h), `${h} on ${path}`).toMatch(/^\d+$/)
      expect(res.headers.get("cache-control")).toBe("no-store")
    }
    const log = await json(await t.api("/api/v1/activity?per_page=100"))
    expect(log.data.find((e: { action: string }) => e.action === "GET /api/v1/no-such-thing")).toMatchObject({ status: 404, error_code: "not_found" })
    // an unknown path's sentence speaks of the path, not of an object missing from the account
    const unknown = await json(await t.api("/api/v1/no-such-thing"))
    expect(unknown.detail).toBe("No endpoint at '/api/v1/no-such-thing': the API's paths are listed in its OpenAPI document, /api/v1/openapi.json.")
  })

  it("should mark an OPTIONS answer on an API path no-store, like every API answer", async () => {
    for (const path of ["/api/v1/sites", "/api/v1/articles/art_a1_1", "/api/v1/openapi.json"]) {
      const res = await t.api(path, { method: "OPTIONS", key: null })
      expect([res.status, res.headers.get("cache-control")], path).toEqual([204, "no-store"])
      expect(res.headers.get("x-request-id"), path).toMatch(/^req_/)
    }
  })

  it("should still answer an unknown path without a key with 401, and count no request", async () => {
    const res = await t.api("/api/v1/no-such-thing", { key: null })
    expect(res.status).toBe(401)
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/)
  })
})

describe("activity entries about an article carry its site, refused calls included", () => {
  const entryOf = async (requestId: string | null) => {
    const log = await json(await t.api("/api/v1/activity?per_page=100"))
    return log.data.find((e: { request_id: string }) => e.request_id === requestId)
  }

  it("should give REST refusals (422, 412, 404 of another account's article) the site they concern, or none", async () => {
    const protectedEdit = await t.api("/api/v1/articles/art_a1", { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ body: "<p>x</p>" }) })
    expect(protectedEdit.status).toBe(422)
    expect(await entryOf(protectedEdit.headers.get("x-request-id"))).toMatchObject({ article_id: "art_a1", site_id: "site_a1", error_code: "protected_link_changed" })
    const stale = await t.api("/api/v1/articles/art_a04", {
      method: "PUT",
      headers: { "content-type": "application/json", "if-match": '"art_a04-r99"' },
      body: JSON.stringify({ title: "x" }),
    })
    expect(stale.status).toBe(412)
    expect(await entryOf(stale.headers.get("x-request-id"))).toMatchObject({ article_id: "art_a04", site_id: "site_a1", error_code: "precondition_failed" })
    const foreign = await t.api("/api/v1/articles/art_b1/revisions")
    expect(foreign.status).toBe(404)
    expect(await entryOf(foreign.headers.get("x-request-id"))).toMatchObject({ article_id: "art_b1", site_id: null, error_code: "not_found" })
    const revisions = await t.api("/api/v1/articles/art_a04/revisions")
    expect(await entryOf(revisions.headers.get("x-request-id"))).toMatchObject({ article_id: "art_a04", site_id: "site_a1", status: 200 })
  })

  it("should give MCP refusals the site too", async () => {
    const refused = (await client.callTool({ name: "update_article", arguments: { article_id: "art_a1", body: "<p>x</p>" } })) as { isError?: boolean }
    expect(refused.isError).toBe(true)
    const log = await json(await t.api("/api/v1/activity?channel=mcp&per_page=100"))
    const entry = log.data.find((e: { action: string; error_code: string | null }) => e.action === "update_article" && e.error_code === "protected_link_changed")
    expect(entry).toMatchObject({ article_id: "art_a1", site_id: "site_a1", status: "error" })
  })

  it("should give a call refused by the request limit (429) the site of its article", async () => {
    const limited = await startTestServer({ RATE_LIMIT_PER_MINUTE: "2" })
    try {
      const ids: Array<string | null> = []
      let last: Response | undefined
      for (let i = 0; i < 3; i++) {
        last = await limited.api("/api/v1/articles/art_a02")
        ids.push(last.headers.get("x-request-id"))
      }
      expect(last?.status).toBe(429)
      const { default: pg } = await import("pg")
      const db = new pg.Client({ connectionString: limited.databaseUrl })
      await db.connect()
      try {
        // The activity API is itself limited now, so the entry is read from the database, once written.
        const rows = await eventually(
          async () => (await db.query("select site_id, article_id, error_code from activity where request_id = $1", [ids[2]])).rows,
          (r) => r.length > 0,
        )
        expect(rows).toEqual([{ site_id: "site_a1", article_id: "art_a02", error_code: "rate_limited" }])
      } finally {
        await db.end()
      }
    } finally {
      await limited.close()
    }
  })
})
