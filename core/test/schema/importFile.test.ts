/** The bounds of an import file's texts that no edit sets (a target keyword, a site's name), and the alt text an edit does. */
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { decodeInput, ImportFile, MAX_ALT_LENGTH, MAX_SITE_NAME_LENGTH, MAX_TARGET_KEYWORD_LENGTH } from "../../src/index.ts"

const fileWith = (site: { name?: string }, article: { keyword?: string; alt?: string }) => ({
  accounts: [
    {
      email: "a@example.com",
      password: "p",
      sites: [
        {
          name: site.name ?? "Site",
          url: "https://s.test",
          articles: [
            {
              title: "T",
              url: "https://s.test/a",
              status: "draft",
              body: "<p>b</p>",
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
})
