/**
 * What the shared response check (`openapiCheck.ts`) leaves out, for a walk over every operation's
 * success and error paths: each answer's headers are documented for its status (none but the
 * usual HTTP ones left out), those documented as required are there, and their values match the documented schemas, its body matches with
 * `format` checked too (dates, date-times), and a documented response without content has none.
 */
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import sharp from "sharp"
import { afterAll, beforeAll, expect, it } from "vitest"
import { KEYS, startTestServer, type TestServer } from "./helpers.ts"

type Json = Record<string, any>

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

/** Headers of HTTP itself and of the security policy, which the document does not list per operation. */
const USUAL = new Set([
  "content-type", "content-length", "date", "connection", "keep-alive", "transfer-encoding", "cache-control", "vary",
  "x-content-type-options", "content-security-policy", "referrer-policy", "x-frame-options", "strict-transport-security",
  "permissions-policy", "cross-origin-opener-policy", "cross-origin-resource-policy", "cross-origin-embedder-policy", "origin-agent-cluster",
])

let generous: TestServer
let strict: TestServer

beforeAll(async () => {
  generous = await startTestServer({ RATE_LIMIT_PER_MINUTE: "100000" }, { storage: "memory" })
  strict = await startTestServer({ RATE_LIMIT_PER_MINUTE: "8", DAILY_EDIT_LIMIT: "1", AUTH_FAILURE_LIMIT_PER_MINUTE: "2" }, { storage: "memory" })
}, 60_000)

afterAll(async () => {
  await generous?.close()
  await strict?.close()
})

/** Sends requests to a server and says where an answer differs from its OpenAPI document. */
const walker = async (t: TestServer) => {
  const doc = (await (await fetch(`${t.url}/api/v1/openapi.json`)).json()) as Json
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }))
  ajv.addSchema({ $id: "openapi", components: doc["components"] }, "openapi")
  const local = (schema: unknown): Json => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/')) as Json
  const routes = Object.entries(doc["paths"] as Record<string, Json>)
    .flatMap(([template, item]) =>
      Object.entries(item).map(([method, op]) => ({ method: method.toUpperCase(), regex: new RegExp(`^/api/v1${template.replace(/\{\w+\}/g, "[^/]+")}$`), op: op as Json })),
    )
    .sort((a, b) => b.regex.source.length - a.regex.source.length)
  const misses: Array<string> = []
  const statuses: Array<number> = []
  const send = async (method: string, path: string, init: { body?: BodyInit; headers?: Record<string, string>; key?: string | null } = {}) => {
    const headers = new Headers(init.headers)
    if (init.key !== null) headers.set("authorization", `Bearer ${init.key ?? KEYS.a}`)
    const res = await fetch(`${t.url}${path}`, { method, headers, ...(init.body !== undefined ? { body: init.body } : {}) })
    const text = await res.text()
    statuses.push(res.status)
    const at = `${method} ${path.slice(0, 80)} ${res.status}`
    const route = routes.find((r) => r.method === method && r.regex.test(new URL(path, t.url).pathname))
    const response = route?.op["responses"][String(res.status)] as Json | undefined
    if (response === undefined) {
      misses.push(`${at}: not a documented status`)
      return res.status
    }
    const documented = (response["headers"] ?? {}) as Record<string, Json>
    const names = new Map(Object.keys(documented).map((name) => [name.toLowerCase(), name]))
    for (const [name, header] of Object.entries(documented)) {
      if (header["required"] === true && !res.headers.has(name)) misses.push(`${at}: required header ${name} is missing`)
    }
    for (const [name, value] of res.headers) {
      const key = names.get(name)
      if (key === undefined) {
        if (!USUAL.has(name)) misses.push(`${at}: header ${name} is not documented`)
        continue
      }
      const schema = documented[key]!["schema"] as Json
      const typed = schema["type"] === "integer" ? (/^\d+$/.test(value) ? Number(value) : value) : value
      if (!ajv.validate(schema, typed)) misses.push(`${at}: header ${name}: ${value} is not ${JSON.stringify(schema)}`)
    }
    const media = Object.keys(response["content"] ?? {})[0]
    if (media === undefined) {
      if (text !== "") misses.push(`${at}: a body where none is documented`)
      return res.status
    }
    if (!(res.headers.get("content-type") ?? "").startsWith(media)) misses.push(`${at}: content type ${res.headers.get("content-type")}, not ${media}`)
    const validate = ajv.compile(local(response["content"][media]["schema"]))
    if (!validate(JSON.parse(text))) misses.push(`${at}: ${ajv.errorsText(validate.errors)}`)
    return res.status
  }
  return { send, misses, statuses }
}

const json = (value: unknown, headers: Record<string, string> = {}) => ({ body: JSON.stringify(value), headers: { "content-type": "application/json", ...headers } })

it("should answer every operation's successes and refusals with documented statuses, headers and bodies (formats checked)", async () => {
  const { send, misses, statuses } = await walker(generous)
  const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#f00" } }).png().toBuffer()
  const form = (file: Buffer, type: string) => {
    const f = new FormData()
    f.set("image", new Blob([new Uint8Array(file)], { type }), "x")
    f.set("alt", "a")
    return f
  }
  for (const path of [
    "/api/v1/sites", "/api/v1/sites?page=2&per_page=1", "/api/v1/sites?per_page=0", "/api/v1/sites?bogus=1",
    "/api/v1/sites/site_a1/articles?status=draft&from=2020-01-01&to=2030-01-01T00:00:00Z", "/api/v1/sites/site_a1/articles?q=article", "/api/v1/sites/site_a1/articles?from=2026-02-30", "/api/v1/sites/site_b1/articles",
    "/api/v1/search?q=protected", "/api/v1/search", "/api/v1/search?q=x&site_id=nope",
    "/api/v1/articles/art_a1", "/api/v1/articles/art_b1", "/api/v1/articles/art_a1?x=1",
    "/api/v1/articles/art_a1/revisions", "/api/v1/articles/art_a1/revisions/1", "/api/v1/articles/art_a1/revisions/99",
    "/api/v1/articles/art_a1/diff?from=1", "/api/v1/articles/art_a1/diff", "/api/v1/articles/art_a1/diff?from=1&to=5",
    "/api/v1/sites/site_a1/backlinks", "/api/v1/sites/site_a1/backlinks?from=2030-01-01&to=2020-01-01",
    "/api/v1/sites/site_a1/stats", "/api/v1/sites/site_a1/stats?period=2026-13", "/api/v1/activity", "/api/v1/activity?channel=bogus",
  ]) await send("GET", path)
  await send("GET", "/api/v1/sites", { key: null })
  await send("GET", "/api/v1/sites", { key: KEYS.aRevoked })
  await send("GET", "/api/v1/articles/art_a1", { headers: { "if-none-match": '"art_a1-r1"' } })
  await send("PUT", "/api/v1/articles/art_a02", json({ title: "New title" }))
  await send("PUT", "/api/v1/articles/art_a02?dry_run=true", json({ title: "Newer title" }, { prefer: "return=minimal" }))
  await send("PUT", "/api/v1/articles/art_a02", { ...json({ title: "X" }), key: KEYS.aRead })
  await send("PUT", "/api/v1/articles/art_a02", json({ title: "X", url: "https://x.test" }))
  await send("PUT", "/api/v1/articles/art_a02", { body: "{", headers: { "content-type": "application/json" } })
  await send("PUT", "/api/v1/articles/art_a02", { body: "x", headers: { "content-type": "text/plain" } })
  await send("PUT", "/api/v1/articles/art_a02", json({ title: "Y" }, { "if-match": '"art_a02-r1"' }))
  await send("PUT", "/api/v1/articles/art_a1", json({ body: "<p>gone</p>" }))
  await send("PUT", "/api/v1/articles/art_a03", json({ title: "A", base_revision: 1 }))
  await send("PUT", "/api/v1/articles/art_a03", json({ title: "B", base_revision: 1 }))
  for (const title of ["Once", "Once", "Twice"]) await send("PUT", "/api/v1/articles/art_a04", json({ title }, { "idempotency-key": "k-exact" }))
  await send("PUT", "/api/v1/articles/art_a05", { body: JSON.stringify({ title: "x".repeat(4 * 1024 * 1024) }), headers: { "content-type": "application/json" } })
  await send("PUT", "/api/v1/articles/nope", json({ title: "n" }))
  await send("PATCH", "/api/v1/articles/art_a06", json({ edits: [{ find: "Body", replace: "Text" }] }, { prefer: "return=minimal" }))
  await send("PATCH", "/api/v1/articles/art_a06", json({ edits: [{ find: "zzz", replace: "Text" }] }))
  await send("POST", "/api/v1/articles/art_a07/featured-image", json({ url: "https://127.0.0.1/a.png" }))
  await send("POST", "/api/v1/articles/art_a07/featured-image", { body: form(png, "image/png") })
  await send("POST", "/api/v1/articles/art_a07/featured-image", { body: form(Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'/>"), "image/svg+xml") })
  await send("POST", "/api/v1/articles/art_a02/revisions/1/restore", json({ reason: "back" }))
  await send("POST", "/api/v1/articles/art_a08/revisions/1/restore")
  await send("POST", "/api/v1/articles/art_a02/revisions/1/restore", json({ reason: "back", extra: 1 }))
  expect(misses).toEqual([])
  // the walk met the statuses it was meant to
  for (const status of [200, 304, 400, 401, 403, 404, 409, 412, 413, 415, 422]) expect(statuses, String(status)).toContain(status)
}, 60_000)

it("should answer the limits' refusals with their documented headers", async () => {
  const { send, misses, statuses } = await walker(strict)
  for (const title of ["One", "Two"]) await send("PUT", "/api/v1/articles/art_a10", json({ title }))
  for (let i = 0; i < 8; i++) await send("GET", "/api/v1/sites")
  for (let i = 0; i < 4; i++) await send("GET", "/api/v1/sites", { key: `cs_unknown${i}` })
  expect(misses).toEqual([])
  expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(3)
}, 60_000)

it("should mark Retry-After required on every 429 and 503, since every such refusal says when to retry", async () => {
  const doc = (await (await fetch(`${generous.url}/api/v1/openapi.json`)).json()) as Json
  const optional: Array<string> = []
  for (const [template, item] of Object.entries(doc["paths"] as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item as Record<string, Json>)) {
      for (const status of ["429", "503"]) {
        if (op["responses"][status]?.["headers"]?.["Retry-After"]?.["required"] !== true) optional.push(`${method.toUpperCase()} ${template} ${status}`)
      }
    }
  }
  expect(optional).toEqual([])
})

it("should mark required the success headers every 200 of its operation carries: a list's Link, a write's Edit-Limit-Remaining", async () => {
  const doc = (await (await fetch(`${generous.url}/api/v1/openapi.json`)).json()) as Json
  const optional: Array<string> = []
  for (const [template, item] of Object.entries(doc["paths"] as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item as Record<string, Json>)) {
      for (const [name, header] of Object.entries((op["responses"]["200"]["headers"] ?? {}) as Record<string, Json>)) {
        if ((name === "Link" || name === "Edit-Limit-Remaining") && header["required"] !== true) optional.push(`${method.toUpperCase()} ${template} ${name}`)
      }
    }
  }
  expect(optional).toEqual([])
})

it("should mark Vary required on the 200 of a write that takes Prefer, which names Prefer in every such answer", async () => {
  const doc = (await (await fetch(`${generous.url}/api/v1/openapi.json`)).json()) as Json
  const optional: Array<string> = []
  for (const [template, item] of Object.entries(doc["paths"] as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item as Record<string, Json>)) {
      const vary = op["responses"]["200"]["headers"]?.["Vary"] as Json | undefined
      if (vary !== undefined && vary["required"] !== true) optional.push(`${method.toUpperCase()} ${template}`)
    }
  }
  expect(optional).toEqual([])
  // and it is sent: a write answered in full says so too
  const res = await generous.api("/api/v1/articles/art_a10?dry_run=true", { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ title: "Vary" }) })
  expect(res.status).toBe(200)
  expect(res.headers.get("vary") ?? "").toMatch(/\bPrefer\b/i)
})
