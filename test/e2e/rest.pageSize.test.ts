/**
 * An operator's MAX_PER_PAGE is what the server checks, so the OpenAPI document it serves says it:
 * every list's `per_page` has that maximum and the default the server uses with it.
 */
import { afterAll, beforeAll, expect, it } from "vitest"
import { json, startTestServer, type TestServer } from "./helpers.ts"

type Json = Record<string, any>

let t: TestServer
let doc: Json

beforeAll(async () => {
  t = await startTestServer({ MAX_PER_PAGE: "2", RATE_LIMIT_PER_MINUTE: "100000" }, { storage: "memory" })
  doc = (await (await fetch(`${t.url}/api/v1/openapi.json`)).json()) as Json
}, 60_000)

afterAll(async () => {
  await t?.close()
})

const perPageOf = (template: string): Json =>
  ((doc["paths"][template]["get"]["parameters"] as Array<Json>).find((p) => p["name"] === "per_page") as Json)

it("should document the configured page size on every list, and answer as documented", async () => {
  const lists = Object.entries(doc["paths"] as Record<string, Json>)
    .filter(([, item]) => (item["get"]?.["parameters"] as Array<Json> | undefined)?.some((p) => p["name"] === "per_page"))
    .map(([template]) => template)
  expect(lists).toEqual(expect.arrayContaining(["/sites", "/sites/{id}/articles", "/sites/{id}/backlinks", "/activity", "/search"]))
  for (const template of lists) {
    const parameter = perPageOf(template)
    expect(parameter["schema"], template).toMatchObject({ type: "integer", minimum: 1, maximum: 2, default: 2 })
    expect(parameter["description"], template).toBe("Items per page, 1 to 2 (default 2).")
  }
  // what the document says is what the server does: 2 is the default and the most
  const defaulted = await json(await t.api("/api/v1/sites/site_a1/articles"))
  expect(defaulted.pagination.per_page).toBe(2)
  expect((await t.api("/api/v1/sites/site_a1/articles?per_page=2")).status).toBe(200)
  const over = await t.api("/api/v1/sites/site_a1/articles?per_page=3")
  expect(over.status).toBe(400)
  expect((await json(over)).errors).toEqual([{ path: "per_page", message: "Expected a value between 1 and 2" }])
})
