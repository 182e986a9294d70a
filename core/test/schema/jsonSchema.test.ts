import Ajv2020 from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import * as core from "../../src/index.ts"

// Every exported schema of the core (resources, queries, bodies, tool arguments): each must become a
// valid JSON Schema document, since OpenAPI and the MCP tool schemas are generated from them.
const exported = Object.entries(core).filter(([, v]) => Schema.isSchema(v)) as Array<[string, Schema.Top]>

const newAjv = () => {
  const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false, allErrors: true })
  ;(addFormats as unknown as typeof addFormats.default)(ajv)
  return ajv
}

const compile = (schema: Schema.Top) => {
  const doc = Schema.toJsonSchemaDocument(schema)
  const ajv = newAjv()
  for (const [name, def] of Object.entries(doc.definitions)) ajv.addSchema(def as object, `#/$defs/${name}`)
  return ajv.compile({ ...(doc.schema as object), $defs: doc.definitions })
}

describe("JSON Schema of every exported schema", () => {
  it("should find the resource, query and body schemas among the exports", () => {
    const names = exported.map(([n]) => n)
    for (const n of ["Website", "ArticleListItem", "Article", "Backlink", "PeriodSummary", "Revision", "RevisionSummary", "ActivityEntry", "Problem", "ListArticlesQuery", "UpdateArticleBody", "FeaturedImageUrlBody", "UpdateArticleArgs", "ReplaceFeaturedImageArgs", "ImportFile"]) {
      expect(names).toContain(n)
    }
  })

  for (const [name, schema] of exported) {
    it(`should turn ${name} into a valid JSON Schema document (encoded and typed views)`, () => {
      expect(() => compile(schema)).not.toThrow()
      expect(() => compile(Schema.toType(schema))).not.toThrow()
    })
  }

  it("should describe an article so that a real article validates and a broken one does not", () => {
    const validate = compile(core.Article)
    const article = {
      id: "art_1", site_id: "site_1", title: "T", url: "https://x.test/a", status: "published",
      published_at: "2026-11-02T10:00:00.000Z", "target keyword": "k", "word count": 3, "featured image": null,
      body: "<p>a b c</p>", updated_at: "2026-11-02T10:00:00.000Z", revision: 1,
      protected_links: [{ type: "backlink", href: "https://x.test", text: "x" }],
    }
    expect(validate(article)).toBe(true)
    expect(validate({ ...article, protected_links: [{ type: "backlink", text: "x" }] })).toBe(false)
    expect(validate({ ...article, status: "bogus" })).toBe(false)
    expect(validate({ ...article, "word count": 1.5 })).toBe(false)
  })

  it("should tell a write answer's two articles apart: the full one is an Article, the minimal one an ArticleWithoutBody", () => {
    const article = {
      id: "art_1", site_id: "site_1", title: "T", url: "https://x.test/a", status: "published",
      published_at: "2026-11-02T10:00:00.000Z", "target keyword": "k", "word count": 3, "featured image": null,
      body: "<p>a b c</p>", updated_at: "2026-11-02T10:00:00.000Z", revision: 2,
      protected_links: [{ type: "backlink", href: "https://x.test", text: "x" }],
    }
    const full = { article, revision: null, sanitized: { changed: false, removed: [] } }
    const minimal = core.minimalWriteAnswer(full)
    const { body: _body, ...withoutBody } = article
    expect(minimal).toEqual({ ...full, article: withoutBody })
    expect(full.article.body).toBe("<p>a b c</p>")
    const [isArticle, isWithoutBody] = [compile(core.Article), compile(core.ArticleWithoutBody)]
    expect([isArticle(full.article), isWithoutBody(full.article)]).toEqual([true, false])
    expect([isArticle(minimal.article), isWithoutBody(minimal.article)]).toEqual([false, true])
    expect(isWithoutBody({ ...withoutBody, protected_links: undefined })).toBe(false)
    for (const result of [core.UpdateArticleResult, core.RestoreRevisionResult, core.FeaturedImageResult]) {
      const validate = compile(result)
      expect(validate(full)).toBe(true)
      expect(validate(minimal)).toBe(true)
      expect(validate({ ...full, article: { ...withoutBody, body: 5 } })).toBe(false)
    }
    // The shape an adapter encodes by default is the full article, key for key.
    expect(JSON.stringify(Schema.encodeUnknownSync(core.UpdateArticleResult)(full))).toBe(JSON.stringify(full))
  })

  it("should keep the descriptions of strings checked by a custom filter", () => {
    for (const schema of [core.Title, core.Body, core.DateBound, core.PeriodParam]) {
      const doc = Schema.toJsonSchemaDocument(schema).schema as { description?: string }
      expect(doc.description?.length ?? 0).toBeGreaterThan(10)
    }
  })

  it("should give typed query parameters integer bounds", () => {
    const validate = compile(Schema.toType(core.ListArticlesQuery))
    expect(validate({ page: 2, per_page: 100 })).toBe(true)
    expect(validate({ per_page: 101 })).toBe(false)
    expect(validate({ page: 0 })).toBe(false)
  })
})

describe("decodeInput", () => {
  const decode = (input: unknown) => core.decodeInput(core.UpdateArticleBody, input, "Article edit")
  const fail = (input: unknown) => {
    const exit = Effect.runSyncExit(decode(input))
    if (exit._tag === "Success") throw new Error("expected a failure")
    return (exit.cause.reasons[0] as unknown as { error: core.InvalidRequest }).error
  }

  it("should refuse a key that cannot be changed here, naming it", () => {
    for (const key of ["url", "status", "target keyword", "backlinks", "site_id"]) {
      const error = fail({ title: "x", [key]: "y" })
      expect(error._tag).toBe("InvalidRequest")
      expect(error.detail).toContain(`'${key}'`)
      expect(error.errors.map((e) => e.path)).toContain(key)
    }
  })

  it("should answer a bounded refusal whatever the input holds: 20 errors, 5 keys named, each cut at 100 characters, the rest counted", () => {
    const many = Object.fromEntries([["title", "x"], ...Array.from({ length: 100_000 }, (_, i) => [`k${i}`, 1])])
    const error = fail(many)
    expect(error.errors).toHaveLength(core.MAX_LISTED_ERRORS)
    expect(error.errors[0]).toEqual({ path: "k0", message: "Unknown key 'k0': it cannot be set here" })
    expect(error.detail).toBe("Article edit: 'k0', 'k1', 'k2', 'k3', 'k4' and 99995 more cannot be set here. 100000 errors in all; errors lists the first 20.")
    expect(JSON.stringify(error).length).toBeLessThan(4096)
    // a long key is shown cut (by code points: a pair is not split), in the path, the message and the detail
    const long = `${"é".repeat(99)}\u{1F600}${"z".repeat(1_000_000)}`
    const cut = fail({ title: "x", [long]: 1 })
    expect(cut.errors[0]!.path).toBe(`${"é".repeat(99)}\u{1F600}…`)
    expect(cut.detail).toBe(`Article edit: '${"é".repeat(99)}\u{1F600}…' cannot be set here.`)
    expect(JSON.stringify(cut).length).toBeLessThan(1024)
    // a few errors are all listed and named, as before
    const few = fail({ title: 5, reason: 6, a: 1 })
    expect(few.errors.map((e) => e.path).sort()).toEqual(["a", "reason", "title"])
  })

  it("should refuse more than MAX_EDITS edits without reading one of them, on the REST body and the MCP arguments", () => {
    // the edits as an array that counts the elements read from it (a million `{}`: each one read
    // and refused, they held the event loop 23 s before the length was checked)
    const counted = (length: number) => {
      let read = 0
      const edits = new Proxy(Array.from({ length }, () => ({})), {
        get: (target, key, receiver) => {
          if (typeof key === "string" && /^\d+$/.test(key)) read++
          return Reflect.get(target, key, receiver)
        },
      })
      return { edits, read: () => read }
    }
    for (const [schema, extra] of [
      [core.EditArticleBody, {}],
      [core.EditArticleArgs, { article_id: "art_1" }],
    ] as const) {
      const many = counted(100_000)
      const exit = Effect.runSyncExit(core.decodeInput(schema as Schema.Codec<unknown, unknown, never, never>, { ...extra, edits: many.edits }, "Request body"))
      expect(many.read()).toBe(0)
      expect(exit._tag).toBe("Failure")
      const error = exit._tag === "Failure" ? (exit.cause.reasons[0] as { error: core.InvalidRequest }).error : undefined
      expect(error?.errors).toEqual([{ path: "edits", message: `Expected a value with a length of at most ${core.MAX_EDITS}` }])
      expect(error?.detail).toBe(`Request body: edits: Expected a value with a length of at most ${core.MAX_EDITS}.`)
      // at the limit every edit is read and decoded, as before
      const limit = counted(core.MAX_EDITS)
      Effect.runSyncExit(core.decodeInput(schema as Schema.Codec<unknown, unknown, never, never>, { ...extra, edits: limit.edits }, "Request body"))
      expect(limit.read()).toBeGreaterThanOrEqual(core.MAX_EDITS)
    }
  })

  it("should require a title or a body", () => {
    expect(fail({ reason: "why" }).detail).toContain("at least one of title, body")
  })

  it("should refuse a blank title and a title over 300 characters", () => {
    expect(fail({ title: "   " }).errors[0]?.path).toBe("title")
    expect(fail({ title: "x".repeat(301) }).errors[0]?.path).toBe("title")
    expect(Effect.runSync(decode({ title: ` ${"x".repeat(300)} ` })).title).toHaveLength(302)
  })

  it("should refuse a body over 1 MiB and a reason over 500 characters", () => {
    expect(fail({ body: "x".repeat(1024 * 1024 + 1) }).errors[0]?.path).toBe("body")
    expect(fail({ title: "t", reason: "r".repeat(501) }).errors[0]?.path).toBe("reason")
  })

  it("should refuse wrong types with the path of the value", () => {
    expect(fail({ title: 5 }).errors[0]?.path).toBe("title")
    expect(fail(null).errors.length).toBeGreaterThan(0)
  })

  it("should decode query strings into typed, bounded values and refuse the rest", () => {
    const q = (input: unknown) => Effect.runSyncExit(core.decodeInput(core.ListArticlesQuery, input, "Query"))
    const ok = q({ page: "2", per_page: "100", status: "draft", from: "2026-10-01", to: "2026-10-31T23:00:00Z" })
    expect(ok._tag).toBe("Success")
    for (const bad of [{ page: "0" }, { per_page: "101" }, { per_page: "1.5" }, { page: "x" }, { status: "bogus" }, { from: "yesterday" }, { sort: "x" }]) {
      expect(q(bad)._tag).toBe("Failure")
    }
  })
})
