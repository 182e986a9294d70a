import { Effect, Exit, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  Alt,
  ApiKeyName,
  Body,
  decodeInput,
  FeaturedImageUrlBody,
  ImportFile,
  isStorableText,
  toStorableText,
  NewAccount,
  Reason,
  SignInEmail,
  Title,
  UpdateArticleArgs,
  UpdateArticleBody,
} from "../../src/index.ts"

const NUL = "\u0000"
const LONE_HIGH = "\ud800"
const LONE_LOW = "\udc00"

const refuses = (schema: Schema.Codec<any, any, never, never>, input: unknown): boolean =>
  Exit.isFailure(Effect.runSyncExit(decodeInput(schema, input, "Input")))

describe("isStorableText", () => {
  it("should accept any text PostgreSQL stores as given, astral characters included", () => {
    for (const s of ["", "plain", "é ü ß", "emoji 😀 pair", "\ud83d\ude00", "tab\tnew\nline", "\u0001\u001f"]) expect(isStorableText(s), s).toBe(true)
  })

  it("should refuse NUL and unpaired surrogates anywhere in the text", () => {
    for (const s of [NUL, `a${NUL}b`, `${LONE_HIGH}`, `a${LONE_HIGH}b`, `${LONE_LOW}a`, `\ud83d\ude00${LONE_LOW}`, `${LONE_HIGH}${LONE_HIGH}\udc00`]) {
      expect(isStorableText(s), JSON.stringify(s)).toBe(false)
    }
  })
})

describe("every input string that reaches storage carries the refinement", () => {
  const cases: ReadonlyArray<readonly [string, Schema.Codec<any, any, never, never>, (bad: string) => unknown]> = [
    ["Title", Title, (bad) => `title ${bad}`],
    ["Body", Body, (bad) => `<p>${bad}</p>`],
    ["Reason", Reason, (bad) => bad],
    ["Alt", Alt, (bad) => bad],
    ["ApiKeyName", ApiKeyName, (bad) => `key ${bad}`],
    ["SignInEmail", SignInEmail, (bad) => `a${bad}@example.com`],
    ["UpdateArticleBody.reason", UpdateArticleBody, (bad) => ({ title: "ok", reason: bad })],
    ["UpdateArticleArgs.title", UpdateArticleArgs, (bad) => ({ article_id: "art_1", title: bad })],
    ["FeaturedImageUrlBody.url", FeaturedImageUrlBody, (bad) => ({ url: `https://a.test/${bad}` })],
    ["NewAccount.name", NewAccount, (bad) => ({ email: "a@example.com", password: "password-1", name: bad })],
    ["ImportFile backlink anchor", ImportFile, (bad) => ({ accounts: [{ email: "a@example.com", password: "password-p", sites: [{ name: "S", url: "https://s.test", backlinks: [{ date_acquired: "2026-01-01", source_domain: "d.test", source_url: "https://d.test/", target_url: "https://s.test/", anchor_text: bad, anchor_type: "exact", category: "local" }] }] }] })],
    ["ImportFile article body", ImportFile, (bad) => ({ accounts: [{ email: "a@example.com", password: "password-p", sites: [{ name: "S", url: "https://s.test", articles: [{ title: "T", url: "https://s.test/a", status: "draft", body: bad }] }] }] })],
  ]
  for (const [name, schema, make] of cases) {
    it(`should refuse NUL and unpaired surrogates in ${name} and accept the same input without them`, () => {
      expect(refuses(schema, make("fine 😀"))).toBe(false)
      for (const bad of [NUL, LONE_HIGH, LONE_LOW]) expect(refuses(schema, make(bad)), JSON.stringify(bad)).toBe(true)
    })
  }

  it("should say why in the field error", () => {
    const exit = Effect.runSyncExit(decodeInput(UpdateArticleBody, { title: `a${NUL}` }, "Request body"))
    expect(Exit.isFailure(exit)).toBe(true)
    expect(JSON.stringify(exit)).toContain("NUL")
  })
})

describe("toStorableText", () => {
  it("should write each NUL and unpaired surrogate as U+FFFD and keep the rest, pairs included, so that it is storable", () => {
    const given = `a${NUL}b\ud800c\udc00d\ud83d\ude00e`
    const kept = toStorableText(given)
    expect(kept).toBe("a\ufffdb\ufffdc\ufffdd\ud83d\ude00e")
    expect(isStorableText(kept)).toBe(true)
    expect(toStorableText("plain")).toBe("plain")
  })
})
