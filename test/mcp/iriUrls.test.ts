/**
 * A URL outside ASCII (an IRI, `https://bäckerei.example/brötchen`) is accepted at import and served
 * as stored, so the schemas that describe it must accept it too: the MCP SDK's client checks every
 * tool result against the tool's output schema, formats included, and the OpenAPI document must
 * hold for the REST answers under a validator that checks formats.
 */
import { importData } from "@content-site/core"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { afterAll, beforeAll, expect, it } from "vitest"
import { ALICE, connectOrFail, ScriptedOAuthProvider, type SeededServer, startSeeded } from "./support.ts"

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

let server: SeededServer
let client: Client

beforeAll(async () => {
  server = await startSeeded({ RATE_LIMIT_PER_MINUTE: "100000" })
  const site = {
    id: "site_iri",
    name: "Bäckerei",
    url: "https://bäckerei.example/",
    articles: [{ id: "art_iri", title: "Brötchen", url: "https://bäckerei.example/brötchen", status: "published", published_at: "2026-10-03T09:00:00Z", body: "<p>Frisch.</p>" }],
    backlinks: [
      { id: "bl_iri", date_acquired: "2026-10-05", source_domain: "zeitung.test", source_url: "https://zeitung.test/bäcker", target_url: "https://bäckerei.example/brötchen", anchor_text: "Brötchen", anchor_type: "exact", category: "local" },
    ],
  }
  await server.runtime.runPromise(importData({ accounts: [{ id: "acc_alice", email: ALICE.email, password: ALICE.password, name: "Alice", sites: [site] }] }))
  client = await connectOrFail(`${server.url}/mcp`, new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }))
}, 60_000)

afterAll(async () => {
  await client?.close()
  await server?.close()
})

const reads: ReadonlyArray<readonly [string, Record<string, unknown>, string, string]> = [
  ["list_sites", {}, "/sites", "listSites"],
  ["list_articles", { site_id: "site_iri" }, "/sites/site_iri/articles", "listArticles"],
  ["get_article", { article_id: "art_iri" }, "/articles/art_iri", "getArticle"],
  ["list_backlinks", { site_id: "site_iri" }, "/sites/site_iri/backlinks", "listBacklinks"],
  ["get_stats", { site_id: "site_iri", period: "2026-10" }, "/sites/site_iri/stats?period=2026-10", "getStats"],
]

it("should answer the read tools for a site and article whose URLs are IRIs, through the SDK client's own output check", async () => {
  await client.listTools()
  for (const [name, args] of reads) {
    // the SDK client throws when structuredContent does not match the output schema
    const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: unknown }
    expect(result.isError ?? false, name).toBe(false)
    expect(JSON.stringify(result.structuredContent), name).toContain("bäckerei.example")
  }
})

it("should serve REST answers that hold to the OpenAPI document with formats checked", async () => {
  const doc = (await (await fetch(`${server.url}/api/v1/openapi.json`)).json()) as Record<string, any>
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }))
  ajv.addSchema({ $id: "openapi", components: doc["components"] }, "openapi")
  const operations = Object.values(doc["paths"] as Record<string, Record<string, any>>).flatMap((item) => Object.values(item))
  for (const [, , path, operationId] of reads) {
    const response = await fetch(`${server.url}/api/v1${path}`, { headers: { authorization: `Bearer ${ALICE.apiKey}` } })
    expect(response.status, path).toBe(200)
    const schema = operations.find((op) => op["operationId"] === operationId)["responses"]["200"]["content"]["application/json"]["schema"]
    const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/')))
    const body: unknown = await response.json()
    expect(validate(body), `${path}: ${ajv.errorsText(validate.errors)}`).toBe(true)
  }
})
