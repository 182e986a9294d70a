import { Arbitrary, Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { operations } from "../src/rest/operations.ts"
import { generalEncoder, isCompiled, wireEncoderOf } from "../src/rest/wireEncoder.ts"

/**
 * Values of a schema's type, generated from the schema itself; where the generator cannot meet
 * the schema's checks (a URL pattern, for one), a few hand-made articles in the same shapes.
 */
const samples = (schema: Schema.Top, n: number): ReadonlyArray<unknown> => {
  const exit = Effect.runSyncExit(Arbitrary.sampleEffect(Arbitrary.schema(schema as Schema.Codec<unknown, unknown, never, never>), { count: n, seed: 15 }))
  if (exit._tag === "Success") return exit.value
  return articles.flatMap((article) => [article, { article, revision: null, sanitized: { changed: false, removed: [] } }])
}

const article = (i: number) => ({
  id: `art_${i}`,
  site_id: "site_1",
  title: `Title ${i} "quoted" <b>`,
  url: `https://example.com/a${i}`,
  status: i % 2 === 0 ? "published" : "draft",
  published_at: i % 2 === 0 ? "2026-11-01T10:00:00.000Z" : null,
  "target keyword": "keyword",
  "word count": 120 + i,
  "featured image": i % 3 === 0 ? null : { url: `https://example.com/i${i}.png`, alt: "An image" },
  body: `<p>Body ${i} <a href="https://partner.test/" data-service-protected="backlink">partner</a></p>`,
  updated_at: "2026-11-02T10:00:00.000Z",
  revision: i + 1,
  protected_links: [{ type: "backlink", href: i % 2 === 0 ? "https://partner.test/" : null, text: "partner" }],
})
const articles = Array.from({ length: 6 }, (_, i) => article(i))

/** Adds keys the schema does not declare, at every level of objects. */
const withStrangers = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(withStrangers)
  if (typeof value !== "object" || value === null) return value
  const out: Record<string, unknown> = { internal_secret: "must not be sent" }
  for (const [k, v] of Object.entries(value)) out[k] = withStrangers(v)
  return out
}

const responses = [...new Set(operations.map((op) => op.response))].filter((schema) => schema !== Schema.Unknown)

describe("response encoding", () => {
  it("should compile every read's response schema; writes answering either of two article shapes use the general encoder", () => {
    const general = operations.filter((op) => op.response !== Schema.Unknown && !isCompiled(op.response)).map((op) => op.operationId)
    expect(general).toEqual(["updateArticle", "editArticle", "replaceFeaturedImage", "restoreRevision"])
    expect(operations.filter((op) => op.method === "GET" && op.response !== Schema.Unknown).every((op) => isCompiled(op.response))).toBe(true)
  })

  it("should answer what Schema's own encoder answers, for generated values with and without undeclared keys", () => {
    let compared = 0
    for (const schema of responses) {
      const compiled = wireEncoderOf(schema)
      const reference = generalEncoder(schema)
      for (const value of samples(schema, 40)) {
        let expected: unknown
        try {
          expected = reference(value)
        } catch {
          continue // a hand-made value of the other shape of a write's answer
        }
        expect(compiled(value)).toStrictEqual(expected)
        expect(JSON.stringify(compiled(withStrangers(value)))).toBe(JSON.stringify(reference(withStrangers(value))))
        expect(JSON.stringify(compiled(withStrangers(value)))).not.toContain("internal_secret")
        compared++
      }
    }
    expect(compared).toBeGreaterThanOrEqual(6 * responses.length)
  })

  it("should copy keys that JavaScript or JSON would have to escape, and none it was not given", () => {
    const odd = Schema.Struct({
      'say "hi"': Schema.String,
      "back\\slash": Schema.String,
      "${template}": Schema.Number,
      "line\nbreak": Schema.optional(Schema.String),
      "`tick`": Schema.Struct({ "word count": Schema.Number, "');": Schema.NullOr(Schema.String) }),
    })
    expect(isCompiled(odd)).toBe(true)
    const value = { 'say "hi"': "a", "back\\slash": "b", "${template}": 1, "`tick`": { "word count": 2, "');": null, extra: 3 }, other: 4 }
    expect(wireEncoderOf(odd)(value)).toStrictEqual(generalEncoder(odd)(value))
    expect(Object.keys(wireEncoderOf(odd)(value) as object)).toEqual(['say "hi"', "back\\slash", "${template}", "`tick`"])
    const proto = Schema.Struct({ ["__proto__"]: Schema.String })
    expect(isCompiled(proto)).toBe(false)
  })

  it("should leave a schema with a transformation to the general encoder", () => {
    const withNumber = Schema.Struct({ n: Schema.NumberFromString, name: Schema.String })
    expect(isCompiled(withNumber)).toBe(false)
    const encode = wireEncoderOf(withNumber)
    expect(encode({ n: 42, name: "x", extra: 1 })).toStrictEqual({ n: "42", name: "x" })
  })
})
