/** The bounds of an import file's texts that no edit sets (a target keyword, a site's name), and the alt text an edit does. */
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { decodeInput, ImportFile, MAX_ALT_LENGTH, MAX_BODY_BYTES, MAX_SITE_NAME_LENGTH, MAX_TARGET_KEYWORD_LENGTH } from "../../src/index.ts"

const fileWith = (site: { name?: string }, article: { keyword?: string; alt?: string; body?: string }, email = "a@example.com", password = "password-p") => ({
  accounts: [
    {
      email,
      password,
      sites: [
        {
          name: site.name ?? "Site",
          url: "https://s.test",
          articles: [
            {
              title: "T",
              url: "https://s.test/a",
              status: "draft",
              body: article.body ?? "<p>b</p>",
              ...(article.keyword === undefined ? {} : { "target keyword": article.keyword }),
              ...(article.alt === undefined ? {} : { "featured image": { url: "https://s.test/i.jpg", alt: article.alt } }),
            },
          ],
        },
      ],
    },
  ],
})

/** The refusal's field paths, or "accepted". */
const outcome = (input: unknown) => {
  const exit = Effect.runSyncExit(decodeInput(ImportFile, input, "Import file"))
  if (Exit.isSuccess(exit)) return "accepted"
  return JSON.stringify(exit.cause)
}

describe("ImportFile's bounds", () => {
  it("should take texts up to their bounds, counted in code points, and refuse one character more, naming the field", () => {
    // astral characters count one each, as JSON Schema's maxLength counts them
    const astral = (n: number) => "😀".repeat(n)
    expect(outcome(fileWith({}, { keyword: astral(MAX_TARGET_KEYWORD_LENGTH) }))).toBe("accepted")
    expect(outcome(fileWith({}, { keyword: astral(MAX_TARGET_KEYWORD_LENGTH + 1) }))).toContain("target keyword")
    expect(outcome(fileWith({ name: "n".repeat(MAX_SITE_NAME_LENGTH) }, {}))).toBe("accepted")
    expect(outcome(fileWith({ name: "n".repeat(MAX_SITE_NAME_LENGTH + 1) }, {}))).toContain("name")
    expect(outcome(fileWith({}, { alt: "a".repeat(MAX_ALT_LENGTH) }))).toBe("accepted")
    expect(outcome(fileWith({}, { alt: "a".repeat(MAX_ALT_LENGTH + 1) }))).toContain("alt")
  })

  it("should take a body of at most 1 MiB of UTF-8, as an edit's, and an email of at most 320 characters, as an account's", () => {
    // "é" is two bytes: the bound is the body's encoded size, not its characters
    const body = (bytes: number) => `<p>${"é".repeat((bytes - 7) / 2)}</p>`
    expect(outcome(fileWith({}, { body: body(MAX_BODY_BYTES - 1) }))).toBe("accepted")
    expect(outcome(fileWith({}, { body: body(MAX_BODY_BYTES + 1) }))).toContain("body")
    const email = (n: number) => `${"e".repeat(n - "@example.com".length)}@example.com`
    expect(outcome(fileWith({}, {}, email(320)))).toBe("accepted")
    expect(outcome(fileWith({}, {}, email(321)))).toContain("email")
  })

  it("should take any password that is not empty, as the contract's own example gives one ('secret'), but never an empty or unstorable one", () => {
    expect(outcome(fileWith({}, {}, undefined, "secret"))).toBe("accepted")
    expect(outcome(fileWith({}, {}, undefined, "x"))).toBe("accepted")
    expect(outcome(fileWith({}, {}, undefined, ""))).toContain("password")
    expect(outcome(fileWith({}, {}, undefined, "se\u0000cret"))).toContain("password")
  })
})
