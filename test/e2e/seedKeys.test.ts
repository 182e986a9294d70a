/**
 * The seed's three article keys, `"target keyword"`, `"word count"` and `"featured image"`, spelled
 * word for word (spaces included) in every place a client reads them, with no snake_case twin:
 * REST lists, single articles, revisions, the period summary, the OpenAPI document and MCP
 * `structuredContent` and output schemas. On PostgreSQL, as a client sees it.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { connect, ScriptedOAuthProvider } from "../mcp/support.ts"
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
  t = await startTestServer()
  const provider = new ScriptedOAuthProvider({ email: "owner-a@example.com", password: "password-a-123", decision: "allow" })
  const connected = await connect(`${t.url}/mcp`, provider)
  if (connected === undefined) throw new Error(`could not connect: ${provider.lastPage}`)
  client = connected
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
