/**
 * The OpenAPI document says exactly what the server checks. Two tests, both generated from the
 * document the server serves (so a constraint added to a schema is walked without touching this
 * file):
 * - the walk: for every operation, every parameter and every JSON body field, values the document
 *   forbids are a 400 naming that field (a path id may be a 404, as the contract allows), and
 *   values it allows (boundaries included) are never a 400 naming it;
 * - the fuzz: seeded random requests per operation, valid and invalid, with either key and dry
 *   runs for writes: never a 5xx, every status documented for its operation, every 2xx body valid
 *   against its schema and every error a problem with `X-Request-Id` (the test server's `api`
 *   checks the last two on every call).
 */
import { parseDateBound } from "@content-site/core"
import fc from "fast-check"
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { schemaValues, type SchemaValues } from "../support/schemaArbitrary.ts"
import { KEYS, startTestServer, type TestServer } from "./helpers.ts"

type Json = Record<string, any>

interface Request {
  readonly path: Record<string, string>
  readonly query: Record<string, string>
  readonly headers: Record<string, string>
  readonly body: Json | undefined
  /** Sent as multipart/form-data with a small real PNG as `image`, instead of the JSON body. */
  readonly form?: Record<string, string>
  readonly key: string
  /** Which header carries the key (both are documented; `Authorization` by default). */
  readonly via?: "authorization" | "x-api-key"
}

interface Operation {
  readonly method: string
  readonly template: string
  readonly op: Json
  readonly parameters: ReadonlyArray<Json>
  readonly body: Json | undefined
  readonly form: Json | undefined
}

let t: TestServer
let doc: Json
let values: SchemaValues
let operations: Array<Operation>
let png: Uint8Array<ArrayBuffer>

beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PER_MINUTE: "1000000", DAILY_EDIT_LIMIT: "1000000" })
  doc = (await (await fetch(`${t.url}/api/v1/openapi.json`)).json()) as Json
  values = schemaValues(doc)
  png = new Uint8Array(await sharp({ create: { width: 4, height: 4, channels: 3, background: "#08f" } }).png().toBuffer())
  operations = Object.entries(doc["paths"] as Record<string, Json>).flatMap(([template, item]) =>
    Object.entries(item).map(([method, op]: [string, Json]) => ({
      method: method.toUpperCase(),
      template,
      op,
      parameters: (op["parameters"] as Array<Json> | undefined) ?? [],
      body: op["requestBody"]?.content?.["application/json"]?.schema as Json | undefined,
      form: op["requestBody"]?.content?.["multipart/form-data"]?.schema as Json | undefined,
    })),
  )
})
afterAll(async () => {
  await t?.close()
})

/** An article of the fixture that these tests may change (no protected links, no other test reads it). */
const WALKED_ARTICLE = "art_a05"

/** A request every operation accepts, which each test then changes one field of. */
const baseline = (o: Operation): Request => ({
  path: { id: o.template.startsWith("/sites/") ? "site_a1" : WALKED_ARTICLE, number: "1" },
  // A write is a dry run unless dry_run itself is walked: the walk changes nothing it need not.
  query: o.parameters.some((p) => p["name"] === "dry_run") ? { dry_run: "true" } : {},
  headers: {},
  body:
    o.body === undefined
      ? undefined
      : o.template.endsWith("/featured-image")
        ? // Loopback is never fetched (not a public host): the answer comes without a network.
          { url: "https://127.0.0.1/walk.png" }
        : o.template.endsWith("/restore")
          ? {}
          : { title: "Walked title" },
  key: KEYS.a,
})

const send = async (o: Operation, r: Request): Promise<Response> => {
  const path = o.template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(r.path[name] ?? ""))
  const query = new URLSearchParams(r.query).toString()
  const headers: Record<string, string> = { ...r.headers }
  if (r.form !== undefined) {
    const form = new FormData()
    form.set("image", new Blob([png], { type: "image/png" }), "walk.png")
    for (const [name, value] of Object.entries(r.form)) form.set(name, value)
    return t.api(`/api/v1${path}${query === "" ? "" : `?${query}`}`, { method: o.method, headers, body: form, key: r.key })
  }
  if (r.body !== undefined) headers["content-type"] = "application/json"
  if (r.via === "x-api-key") headers["x-api-key"] = r.key
  return t.api(`/api/v1${path}${query === "" ? "" : `?${query}`}`, {
    method: o.method,
    headers,
    ...(r.body !== undefined ? { body: JSON.stringify(r.body) } : {}),
    key: r.key,
  })
}

const namesField = (problem: Json, field: string): boolean =>
  ((problem["errors"] as Array<{ path: string }> | undefined) ?? []).some(
    // an edit's text the use case refuses is named as `edit_not_applicable` names it: `edits/0/find`
    (e) => e.path === field || e.path.startsWith(`${field}.`) || e.path.startsWith(`${field}[`) || e.path === field.replace(/\[(\d+)\]\./g, "/$1/"),
  )

/**
 * Whether a value can be sent as is in its place: a header as a byte string without control
 * characters; a path or query value as UTF-8 (a lone surrogate has none, and would arrive as U+FFFD);
 * an empty path segment makes another path (`/revisions/` is the list), not an empty parameter.
 */
// With the `u` flag a surrogate in a class matches only one without its pair.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u

const sendable = (f: Field, v: unknown): boolean =>
  f.where === "header"
    ? /^[\t\x20-\x7e\x80-\xff]*$/.test(String(v))
    : f.where === "body" || f.where === "edit" || (!LONE_SURROGATE.test(String(v)) && (f.where !== "path" || String(v) !== ""))

/**
 * Allowed values the server may still refuse, each for a rule the field's description states
 * because JSON Schema cannot say it.
 */
const describedRefusal = (field: string, value: unknown, problem: Json): boolean =>
  ((field === "from" || field === "to") && typeof value === "string" && "refused" in parseDateBound(value, field === "to")) ||
  // "at most the article's current revision"
  (field === "base_revision" && JSON.stringify(problem["errors"]).includes("the current revision"))

/** One field of one operation: where it goes in a request, and its schema. */
interface Field {
  readonly name: string
  readonly where: "path" | "query" | "header" | "body" | "edit" | "form"
  readonly schema: Json
}

const fieldsOf = (o: Operation): Array<Field> => {
  const fields: Array<Field> = o.parameters.map((p) => ({ name: p["name"] as string, where: p["in"] as Field["where"], schema: p["schema"] as Json }))
  if (o.body !== undefined) {
    const body = values.deref(o.body)
    for (const [name, schema] of Object.entries((body["properties"] as Record<string, Json> | undefined) ?? {})) {
      fields.push({ name, where: "body", schema })
      const items = schema["items"] as Json | undefined
      if (items !== undefined) {
        for (const [inner, innerSchema] of Object.entries((values.deref(items)["properties"] as Record<string, Json> | undefined) ?? {})) {
          fields.push({ name: `${name}[0].${inner}`, where: "edit", schema: innerSchema })
        }
      }
    }
  }
  // A multipart form's text fields (the file itself is the image tests' business).
  for (const [name, schema] of Object.entries((o.form?.["properties"] as Record<string, Json> | undefined) ?? {})) {
    if (schema["contentMediaType"] === undefined) fields.push({ name, where: "form", schema })
  }
  return fields
}

const withField = (r: Request, f: Field, value: unknown): Request => {
  switch (f.where) {
    case "path":
      return { ...r, path: { ...r.path, [f.name]: String(value) } }
    case "query":
      return { ...r, query: { ...r.query, [f.name]: String(value) } }
    case "header":
      return { ...r, headers: { ...r.headers, [f.name]: String(value) } }
    case "body":
      return { ...r, body: { ...r.body, [f.name]: value } }
    case "form":
      return { ...r, body: undefined, form: { ...r.form, [f.name]: String(value) } }
    case "edit": {
      const inner = f.name.slice(f.name.indexOf(".") + 1)
      const edit = { find: "Body of article", replace: "Body of this article", [inner]: value }
      return { ...r, body: { ...r.body, edits: [edit] } }
    }
  }
}

const isText = (f: Field) => f.where !== "body" && f.where !== "edit"

describe("the document says exactly what the server checks", () => {
  it("should publish every constraint of the request side: patterns in [0-9] form, lengths, ranges, the entity-tag shape, the storable-text rule", async () => {
    const text = JSON.stringify(doc["paths"]) + JSON.stringify(doc["components"])
    expect(text).not.toMatch(/\\\\d/)
    const put = operations.find((o) => o.method === "PUT" && o.template === "/articles/{id}")!
    const param = (name: string) => put.parameters.find((p) => p["name"] === name)!["schema"] as Json
    expect(param("id")).toMatchObject({ pattern: expect.any(String), maxLength: 128 })
    expect(param("If-Match")).toMatchObject({ pattern: expect.any(String) })
    const body = values.deref(put.body!)["properties"] as Record<string, Json>
    expect(JSON.stringify(body["title"])).toContain("\\u0000")
    expect(body["body"]).toMatchObject({ maxLength: 1048576 })
    // an edit's find and replace: the server refuses NUL and unpaired surrogates there too (400 naming the edit)
    const patch = operations.find((o) => o.method === "PATCH" && o.template === "/articles/{id}")!
    const edit = values.deref((values.deref(patch.body!)["properties"] as Record<string, Json>)["edits"]!["items"] as Json)["properties"] as Record<string, Json>
    for (const name of ["find", "replace"]) expect(JSON.stringify(edit[name])).toContain("\\u0000")
  })

  it("should publish If-None-Match on every article write, with the If-Match pattern, and say a 412 may come from it", () => {
    const writes = [
      ["PUT", "/articles/{id}"],
      ["PATCH", "/articles/{id}"],
      ["POST", "/articles/{id}/featured-image"],
      ["POST", "/articles/{id}/revisions/{number}/restore"],
    ] as const
    for (const [method, template] of writes) {
      const o = operations.find((x) => x.method === method && x.template === template)!
      const param = (name: string) => o.parameters.find((p) => p["name"] === name)
      const noneMatch = param("If-None-Match")
      expect(noneMatch, `${method} ${template}`).toMatchObject({ in: "header", required: false })
      expect((noneMatch!["schema"] as Json)["pattern"]).toBe((param("If-Match")!["schema"] as Json)["pattern"])
      expect(String(noneMatch!["description"])).toMatch(/412/)
      expect(String(o.op["responses"]["412"]["description"]), `${method} ${template}`).toMatch(/If-None-Match/)
    }
  })

  it("should say how each list's filters read: a backlink's date range by whole UTC days, the activity's channels by name", () => {
    const param = (method: string, template: string, name: string) =>
      operations.find((o) => o.method === method && o.template === template)!.parameters.find((p) => p["name"] === name)!
    const described = (p: Json) => String(p["description"] ?? values.deref(p["schema"] as Json)["description"] ?? "")
    for (const name of ["from", "to"]) {
      expect(described(param("GET", "/sites/{id}/backlinks", name))).toContain("whole UTC day")
      expect(described(param("GET", "/sites/{id}/articles", name))).not.toContain("whole UTC day")
    }
    expect(described(param("GET", "/activity", "channel"))).toMatch(/`api`.*`mcp`.*`web`.*`platform`/)
  })

  it("should publish the response side's counts as never negative and its revision and page numbers as counted from 1", () => {
    const schemas = (doc["components"] as Json)["schemas"] as Record<string, Json>
    const prop = (schema: string, ...path: Array<string>) => path.reduce((at: Json, key) => values.deref((at["properties"] as Record<string, Json>)[key]!), values.deref(schemas[schema]!))
    for (const [schema, ...path] of [["Website", "article_count"], ["ArticleListItem", "word count"], ["Pagination", "total"], ["ActivityEntry", "duration_ms"], ["PeriodSummary", "backlinks", "local"]] as const) {
      expect(prop(schema, ...path), `${schema} ${path.join(".")}`).toMatchObject({ type: "integer", minimum: 0 })
    }
    for (const [schema, key] of [["Article", "revision"], ["RevisionSummary", "number"], ["Pagination", "page"]] as const) expect(prop(schema, key), `${schema} ${key}`).toMatchObject({ type: "integer", minimum: 1 })
  })

  it("should refuse, for every operation and field, each value the document forbids with a 400 naming that field, and never so refuse a value it allows", async () => {
    let forbiddenTried = 0
    let allowedTried = 0
    const misses: Array<string> = []
    // Bounded: 13 operations, at most about 12 fields each, at most 40 forbidden and 4 allowed values a field.
    for (const o of operations) {
      for (const f of fieldsOf(o)) {
        const forbidden = values.invalid(f.schema, { asText: isText(f) }).filter((v) => sendable(f, v))
        for (const value of forbidden) {
          forbiddenTried++
          const res = await send(o, withField(baseline(o), f, value))
          const problem = (await res.json().catch(() => ({}))) as Json
          const ok = f.where === "path" ? res.status === 404 || (res.status === 400 && namesField(problem, f.name)) : res.status === 400 && namesField(problem, f.name)
          if (!ok) misses.push(`${o.method} ${o.template} ${f.name}=${JSON.stringify(value).slice(0, 60)}: forbidden, answered ${res.status} ${JSON.stringify(problem["errors"] ?? problem["detail"] ?? "").slice(0, 160)}`)
        }
        const allowed = fc.sample(values.valid(f.schema), { numRuns: 4, seed: 28 + forbiddenTried })
        for (const value of allowed) {
          if (!sendable(f, value)) continue
          allowedTried++
          const res = await send(o, withField(baseline(o), f, value))
          if (res.status !== 400) continue
          const problem = (await res.json()) as Json
          if (namesField(problem, f.name) && !describedRefusal(f.name, value, problem)) {
            misses.push(`${o.method} ${o.template} ${f.name}=${JSON.stringify(value).slice(0, 60)}: allowed, refused ${JSON.stringify(problem["errors"]).slice(0, 160)}`)
          }
        }
      }
    }
    expect(misses).toEqual([])
    console.log(`walked: ${forbiddenTried} forbidden and ${allowedTried} allowed values`)
    // The walk reached every operation's fields: a document that lost its constraints would walk nothing.
    expect(forbiddenTried).toBeGreaterThan(300)
    expect(allowedTried).toBeGreaterThan(150)
  }, 120_000)
})

describe("the document's examples", () => {
  it("should give an id an example of its own kind or none: a website's where a website is meant, an article's where an article is", () => {
    const found: Array<readonly [string, unknown]> = []
    const walk = (node: unknown, path: string): void => {
      if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${path}/${i}`))
      if (node === null || typeof node !== "object") return
      const object = node as Json
      if (object["title"] === "Id" && object["examples"] !== undefined) found.push([path, object["examples"]])
      // a parameter is known by its name (and a path id by the path it is in)
      const here = typeof object["in"] === "string" ? `${path}[${String(object["name"])}]` : path
      for (const [key, value] of Object.entries(object)) walk(value, `${here}/${key}`)
    }
    walk(doc, "")
    const kindOf = (path: string): "site" | "article" | "other" => {
      if (/\/site_id(\/anyOf\/0)?$/.test(path) || /\[site_id\]\/schema$/.test(path) || /^\/components\/schemas\/Website\/properties\/id$/.test(path) || /^\/paths\/\/sites\/\{id\}.*\[id\]\/schema$/.test(path)) return "site"
      if (/\/article_id(\/anyOf\/0)?$/.test(path) || /^\/components\/schemas\/(ArticleListItem|Article|ArticleWithoutBody)\/properties\/id$/.test(path) || /^\/paths\/\/search\/get\/responses\/200\/.*\/items\/properties\/id$/.test(path) || /^\/paths\/\/articles\/\{id\}.*\[id\]\/schema$/.test(path)) return "article"
      return "other"
    }
    const wrong = found.filter(([path, examples]) => {
      const kind = kindOf(path)
      return kind === "other" || !(examples as Array<string>).every((e) => e.startsWith(kind === "site" ? "site_" : "art_"))
    })
    expect(found.length).toBeGreaterThan(10)
    expect(wrong).toEqual([])
  })
})

describe("property-based requests from the document, for every operation", () => {
  /** Ids a request may name: the caller's own, another account's, and ids no one has. */
  const idsFor = (template: string) =>
    template.startsWith("/sites/") ? ["site_a1", "site_a2", "site_b1", "site_none"] : ["art_a06", "art_a1", "art_a2x", "art_b1", "art_none"]

  /** A request for `o`: each parameter and the body valid (weight 4) or forbidden (weight 1), with either key. */
  const requests = (o: Operation): fc.Arbitrary<Request> => {
    const pick = (f: Field): fc.Arbitrary<unknown> => {
      const forbidden = values.invalid(f.schema, { asText: isText(f) }).filter((v) => sendable(f, v))
      const valid = f.where === "path" && f.name === "id" ? fc.oneof({ arbitrary: fc.constantFrom(...idsFor(o.template)), weight: 3 }, values.valid(f.schema)) : values.valid(f.schema)
      const some = forbidden.length > 0 ? fc.oneof({ arbitrary: valid, weight: 4 }, fc.constantFrom(...forbidden)) : valid
      return some.filter((v) => sendable(f, v))
    }
    const params = o.parameters.map((p): Field => ({ name: p["name"] as string, where: p["in"] as Field["where"], schema: p["schema"] as Json }))
    const model = Object.fromEntries(params.map((f) => [`${f.where}:${f.name}`, f.name === "dry_run" ? fc.constantFrom("true", "true", "true", "false") : pick(f)]))
    const required = params.filter((f) => f.where === "path" || f.name === "dry_run").map((f) => `${f.where}:${f.name}`)
    const bodySchema = o.body
    const body: fc.Arbitrary<Json | undefined> =
      bodySchema === undefined
        ? fc.constant(undefined)
        : fc.oneof(
            { arbitrary: values.valid(bodySchema) as fc.Arbitrary<Json>, weight: 4 },
            // one field forbidden, the rest valid
            (values.valid(bodySchema) as fc.Arbitrary<Json>).chain((valid) => {
              const fields = Object.entries((values.deref(bodySchema)["properties"] as Record<string, Json>) ?? {})
              return fc.constantFrom(...fields).chain(([name, schema]) => {
                const forbidden = values.invalid(schema)
                return forbidden.length === 0 ? fc.constant(valid) : fc.constantFrom(...forbidden).map((v) => ({ ...valid, [name]: v }))
              })
            }),
            fc.constantFrom<Json>({}, { unknown: 1 }, [] as unknown as Json, { title: null }),
          )
    return fc.record({ params: fc.record(model, { requiredKeys: required }), body, key: fc.constantFrom<string>(KEYS.a, KEYS.aRead), via: fc.constantFrom("authorization" as const, "x-api-key" as const) }).map(({ params: p, body: b, key, via }) => {
      const r: { path: Record<string, string>; query: Record<string, string>; headers: Record<string, string> } = { path: {}, query: {}, headers: {} }
      for (const [k, v] of Object.entries(p)) {
        const [where, name] = [k.slice(0, k.indexOf(":")), k.slice(k.indexOf(":") + 1)]
        r[where === "path" ? "path" : where === "query" ? "query" : "headers"][name] = String(v)
      }
      return { ...r, body: b, key, via }
    })
  }

  /** Requests per operation: seeded, so every run sends the same ones. */
  const RUNS = 40

  it("should answer every generated request within its documented statuses and schemas, never a 5xx, every error a problem carrying X-Request-Id", async () => {
    let sent = 0
    const statuses = new Map<number, number>()
    // Bounded: 13 operations x RUNS runs, one request each (shrinking only on a failure).
    for (const o of operations) {
      await fc.assert(
        fc.asyncProperty(requests(o), async (r) => {
          sent++
          // `t.api` throws on an undocumented status, a 2xx body off its schema or an error that is not a problem.
          const res = await send(o, r)
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
          expect(res.status, `${o.method} ${o.template}`).toBeLessThan(500)
          const requestId = res.headers.get("x-request-id")
          expect(requestId).toMatch(/\S/)
          if (res.status >= 400) expect(((await res.json()) as Json)["request_id"]).toBe(requestId)
        }),
        { numRuns: RUNS, seed: 32, endOnFailure: true },
      )
    }
    expect(sent).toBe(operations.length * RUNS)
    // The generator reaches both sides: answers that succeed and answers that refuse.
    expect([...statuses.keys()].filter((s) => s < 300).length).toBeGreaterThan(0)
    expect(statuses.get(400) ?? 0).toBeGreaterThan(50)
    console.log(`fuzzed: ${sent} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`)
  }, 120_000)
})
