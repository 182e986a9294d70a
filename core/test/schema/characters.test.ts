import Ajv2020 from "ajv/dist/2020.js"
import { Effect, Exit, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as core from "../../src/index.ts"

/** One character beyond U+FFFF: two UTF-16 code units, one code point. */
const EMOJI = "\u{1F600}"
const emoji = (n: number) => EMOJI.repeat(n)

const decodes = (schema: Schema.Codec<any, any, never, never>, input: unknown): boolean =>
  Exit.isSuccess(Effect.runSyncExit(core.decodeInput(schema, input, "Test")))

const pathsOf = (schema: Schema.Codec<any, any, never, never>, input: unknown): ReadonlyArray<string> => {
  const exit = Effect.runSyncExit(core.decodeInput(schema, input, "Test"))
  return Exit.isFailure(exit) ? (exit.cause.reasons[0] as unknown as { error: core.InvalidRequest }).error.errors.map((e) => e.path) : []
}

/** The published JSON Schema of a core schema, compiled by a validator that counts code points as JSON Schema does. */
const published = (schema: Schema.Top) => {
  const doc = Schema.toJsonSchemaDocument(schema)
  const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false, allErrors: true })
  return ajv.compile({ ...(doc.schema as object), $defs: doc.definitions })
}

describe("characterCount", () => {
  it("should count code points: an astral character is one, an unpaired surrogate one", () => {
    expect(core.characterCount("")).toBe(0)
    expect(core.characterCount("abc")).toBe(3)
    expect(core.characterCount(emoji(3))).toBe(3)
    expect(core.characterCount(`a${EMOJI}b`)).toBe(3)
    expect(core.characterCount("\ud800")).toBe(1)
    expect(core.characterCount("\udc00\ud800")).toBe(2)
    expect(core.characterCount(`\ud800${EMOJI}\udc00`)).toBe(3)
  })

  it("should agree with the string's own code point iterator", () => {
    fc.assert(fc.property(fc.string({ unit: "binary" }), (s) => core.characterCount(s) === [...s].length))
  })
})

describe("lengths in characters (code points), as the contract and JSON Schema count them", () => {
  it("should take a title of 1 to 300 characters after trimming, astral ones counted once", () => {
    for (const title of [emoji(300), emoji(151), ` ${emoji(300)} `, EMOJI, `${"x".repeat(299)}${EMOJI}`]) {
      expect(decodes(core.UpdateArticleBody, { title }), `${title.length} units`).toBe(true)
    }
    for (const title of [emoji(301), `${"x".repeat(300)}${EMOJI}`, "  ", ""]) {
      expect(pathsOf(core.UpdateArticleBody, { title }), `${title.length} units`).toEqual(["title"])
    }
  })

  it("should take a reason of at most 500 characters", () => {
    expect(decodes(core.UpdateArticleBody, { title: "t", reason: emoji(500) })).toBe(true)
    expect(decodes(core.RestoreRevisionBody, { reason: emoji(251) })).toBe(true)
    expect(pathsOf(core.UpdateArticleBody, { title: "t", reason: emoji(501) })).toEqual(["reason"])
    expect(pathsOf(core.EditArticleBody, { title: "t", reason: `${"r".repeat(500)}${EMOJI}` })).toEqual(["reason"])
  })

  it("should take a featured image's alt text of at most 500 characters, and a URL of at most 2048", () => {
    const url = "https://img.test/"
    expect(decodes(core.FeaturedImageUrlBody, { url, alt: emoji(500) })).toBe(true)
    expect(decodes(core.Alt, emoji(500))).toBe(true)
    expect(pathsOf(core.FeaturedImageUrlBody, { url, alt: emoji(501) })).toEqual(["alt"])
    expect(decodes(core.FeaturedImageUrlBody, { url: `${url}${emoji(2048 - url.length)}` })).toBe(true)
    expect(pathsOf(core.FeaturedImageUrlBody, { url: `${url}${emoji(2049 - url.length)}` })).toEqual(["url"])
  })

  it("should take API key names of at most 100 characters, and emails of at most 320", () => {
    expect(decodes(core.ApiKeyName, emoji(100))).toBe(true)
    expect(decodes(core.ApiKeyName, emoji(101))).toBe(false)
    expect(decodes(core.SignInEmail, `${emoji(300)}@example.com`)).toBe(true)
    expect(decodes(core.SignInEmail, `${emoji(309)}@example.com`)).toBe(false)
  })

  it("should take a find of at least one character, one astral character included", () => {
    expect(decodes(core.EditArticleBody, { edits: [{ find: EMOJI, replace: "" }] })).toBe(true)
    expect(pathsOf(core.EditArticleBody, { edits: [{ find: "", replace: "x" }] })).toEqual(["edits/0/find"])
  })

  it("should name a field the contract's one way, a key holding '/' or '~' escaped, and the detail say the key as sent", () => {
    // the same form as a find not found (`edits/0/find`, core/policy/textEdits.ts): one path format for every error
    expect(pathsOf(core.EditArticleBody, { edits: [{ find: "a", replace: "b" }, { find: "x", replace: 7 }] })).toEqual(["edits/1/replace"])
    expect(pathsOf(core.EditArticleBody, { edits: [{ find: "a", replace: "b", "a/b~c": 1 }] })).toEqual(["edits/0/a~1b~0c"])
    const exit = Effect.runSyncExit(core.decodeInput(core.UpdateArticleBody, { title: "t", "x/y": 1 }, "Edit"))
    const error = Exit.isFailure(exit) ? (exit.cause.reasons[0] as unknown as { error: core.InvalidRequest }).error : undefined
    expect(error?.detail).toBe("Edit: 'x/y' cannot be set here.")
    expect(error?.errors).toEqual([{ path: "x~1y", message: "Unknown key 'x/y': it cannot be set here" }])
    // a key inside an object is said with the path of the object that holds it
    const nested = Effect.runSyncExit(core.decodeInput(core.EditArticleBody, { edits: [{ find: "a", replace: "b" }, { find: "c", replace: "d", extra: 1 }] }, "Article edit"))
    const nestedError = Exit.isFailure(nested) ? (nested.cause.reasons[0] as unknown as { error: core.InvalidRequest }).error : undefined
    expect(nestedError?.detail).toBe("Article edit: 'extra' in edits/1 cannot be set here.")
    expect(nestedError?.errors).toEqual([{ path: "edits/1/extra", message: "Unknown key 'extra': it cannot be set here" }])
  })

  it("should publish minLength and maxLength that accept and refuse exactly what the decoder does", () => {
    const cases: ReadonlyArray<readonly [Schema.Codec<any, any, never, never>, unknown]> = [
      [core.UpdateArticleBody, { title: "t", reason: emoji(500) }],
      [core.UpdateArticleBody, { title: "t", reason: emoji(501) }],
      [core.UpdateArticleBody, { title: emoji(300) }],
      [core.UpdateArticleBody, { title: "" }],
      [core.FeaturedImageUrlBody, { url: "https://img.test/", alt: emoji(500) }],
      [core.FeaturedImageUrlBody, { url: "https://img.test/", alt: emoji(501) }],
      [core.ApiKeyName, emoji(100)],
      [core.ApiKeyName, emoji(101)],
      [core.EditArticleBody, { edits: [{ find: EMOJI, replace: "" }] }],
      [core.EditArticleBody, { edits: [{ find: "", replace: "" }] }],
    ]
    for (const [schema, input] of cases) expect(published(schema)(input), JSON.stringify(input).slice(0, 60)).toBe(decodes(schema, input))
    const reason = Schema.toJsonSchemaDocument(core.Reason).schema as Record<string, unknown>
    expect(reason).toMatchObject({ type: "string", maxLength: 500, description: expect.stringContaining("500 characters") })
    expect(Schema.toJsonSchemaDocument(core.Title).schema).toMatchObject({ minLength: 1 })
    expect(Schema.toJsonSchemaDocument(core.Alt).schema).toMatchObject({ maxLength: 500 })
    expect(Schema.toJsonSchemaDocument(core.TextEdit).schema).toMatchObject({
      properties: { find: { minLength: 1, maxLength: core.MAX_BODY_BYTES }, replace: { maxLength: core.MAX_BODY_BYTES } },
    })
  })
})
