import fc from "fast-check"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { analyzeArticleHtml, applyEditPolicy, countWords, extractProtectedBlocks } from "../../src/html/index.ts"
import { clean, unsafeParts } from "./helpers.ts"

const tokens = [
  "<p>", "</p>", "<a href=\"https://x.test\">", "<a href=javascript:alert(1)>", "<a href=' JaVa\tScRiPt:x'>", "</a>",
  "<b>", "</b>", "<i>", "<table>", "<tr>", "<td>", "</table>", "<li>", "<ul>", "</ul>", "<pre>", "\n", "</pre>",
  "<svg>", "</svg>", "<math>", "<mi>", "<mtext>", "<mglyph>", "<style>", "</style>", "<script>", "</script>",
  "<noscript>", "</noscript>", "<template>", "<form>", "</form>", "<select>", "<option>", "<textarea>", "<title>",
  "<img src=x onerror=alert(1)>", "<img src=\"/ok.png\" alt=\"ok\">", "<iframe srcdoc='<script>'>", "<!--", "-->",
  "<![CDATA[", "]]>", "<marquee>", "<button>", "<object>", "<p style=\"x\">", "<div id=a class='b c'>", "</div>",
  "<span data-service-protected=\"x\">", "</span>", "&amp;", "&lt;", "&nbsp;", "&#0;", "&#x6A;", "\"", "'", "=", "<", ">",
  "/", " ", "text", "\u0000", "\r", "<caption>", "<colgroup>", "<col>", "<details open>", "<summary>", "<blockquote cite=data:x>",
]

const htmlish = fc.array(fc.oneof(fc.constantFrom(...tokens), fc.string({ maxLength: 4 })), { maxLength: 40 }).map((parts) => parts.join(""))

describe("sanitiser properties", () => {
  it("should be idempotent on arbitrary html-ish strings", () => {
    fc.assert(
      fc.property(htmlish, (input) => {
        const once = clean(input)
        expect(clean(once)).toBe(once)
      }),
      { numRuns: 400 },
    )
  })

  it("should leave nothing unsafe in the re-parsed output of arbitrary html-ish strings", () => {
    fc.assert(
      fc.property(htmlish, (input) => {
        expect(unsafeParts(clean(input))).toEqual([])
      }),
      { numRuns: 400 },
    )
  })

  it("should report the stored body's word count as countWords does", () => {
    fc.assert(
      fc.property(htmlish, (input) => {
        const result = Effect.runSync(analyzeArticleHtml(input))
        expect(countWords(result.html)).toBe(result.wordCount)
      }),
      { numRuns: 200 },
    )
  })

  it("should report the stored body's protected blocks as extractProtectedBlocks does", () => {
    fc.assert(
      fc.property(htmlish, (input) => {
        const result = Effect.runSync(analyzeArticleHtml(input))
        expect(extractProtectedBlocks(result.html)).toEqual(result.blocks)
      }),
      { numRuns: 200 },
    )
  })

  it("should report nothing changed exactly when nothing was removed and the input was canonical", () => {
    fc.assert(
      fc.property(htmlish, (input) => {
        const stored = clean(input)
        const again = Effect.runSync(analyzeArticleHtml(stored))
        expect(again.report).toStrictEqual({ changed: false, removed: [] })
      }),
      { numRuns: 200 },
    )
  })
})

describe("word count properties", () => {
  const word = fc.stringMatching(/^[A-Za-z0-9äöüß'.,!?-]{1,8}$/)

  it("should count the words of a paragraph of plain words", () => {
    fc.assert(
      fc.property(fc.array(word, { maxLength: 30 }), fc.constantFrom(" ", "\n", "\t", "\u00a0", "\u2009", " \n "), (words, space) => {
        expect(countWords(`<p>${words.join(space)}</p>`)).toBe(words.length)
      }),
    )
  })

  it("should not change when words are wrapped in inline elements", () => {
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 20 }), fc.constantFrom("b", "em", "a", "span"), (words, tag) => {
        const plain = `<p>${words.join(" ")}</p>`
        const wrapped = `<p>${words.map((w, i) => (i % 2 === 0 ? `<${tag}>${w}</${tag}>` : w)).join(" ")}</p>`
        expect(countWords(wrapped)).toBe(countWords(plain))
      }),
    )
  })

  it("should add up over paragraphs separated by whitespace", () => {
    fc.assert(
      fc.property(fc.array(fc.array(word, { maxLength: 10 }), { maxLength: 10 }), (paragraphs) => {
        const html = paragraphs.map((words) => `<p>${words.join(" ")}</p>`).join("\n")
        expect(countWords(html)).toBe(paragraphs.reduce((sum, words) => sum + words.length, 0))
      }),
    )
  })

  it("should ignore attribute values and comments", () => {
    fc.assert(
      fc.property(fc.array(word, { maxLength: 10 }), fc.array(word, { maxLength: 10 }), (text, hidden) => {
        const html = `<p title="${hidden.join(" ")}">${text.join(" ")}<!-- ${hidden.join(" ")} --></p>`
        expect(countWords(html)).toBe(text.length)
      }),
    )
  })
})

describe("protected block properties", () => {
  const link = fc
    .record({
      host: fc.stringMatching(/^[a-z]{1,8}$/),
      text: fc.stringMatching(/^[A-Za-z][A-Za-z ]{0,10}[A-Za-z]$/),
      rel: fc.constantFrom(null, "nofollow", "sponsored noopener"),
      value: fc.constantFrom("", "backlink"),
    })
    .map(({ host, text, rel, value }) => ({
      href: `https://${host}.test/`,
      text,
      html: `<a href="https://${host}.test/"${rel === null ? "" : ` rel="${rel}"`} data-service-protected="${value}">${text}</a>`,
    }))
  const filler = fc.constantFrom("<p>Intro text.</p>", "<h2>Heading</h2>", "<ul><li>item</li></ul>", "<p>More <em>words</em>.</p>", "")

  const body = (blocks: ReadonlyArray<string>, fillers: ReadonlyArray<string>): string =>
    blocks.map((block, i) => `${fillers[i % Math.max(fillers.length, 1)] ?? ""}<p>${block}</p>`).join("\n")

  it("should accept any permutation of the protected blocks", () => {
    fc.assert(
      fc.property(
        fc.array(link, { minLength: 1, maxLength: 6 }).chain((links) =>
          fc.tuple(fc.constant(links), fc.shuffledSubarray(links, { minLength: links.length, maxLength: links.length })),
        ),
        fc.array(filler, { maxLength: 4 }),
        fc.array(filler, { maxLength: 4 }),
        ([links, shuffled], before, after) => {
          const current = extractProtectedBlocks(body(links.map((l) => l.html), before))
          const next = body(shuffled.map((l) => l.html), after)
          expect(Effect.runSync(applyEditPolicy(current, next)).violations).toEqual([])
        },
      ),
    )
  })

  const mutations = ["attribute", "text", "removal", "href", "rel", "forge"] as const

  it("should reject any single mutation of a protected block", () => {
    fc.assert(
      fc.property(
        fc.array(link, { minLength: 1, maxLength: 5 }),
        fc.nat(),
        fc.constantFrom(...mutations),
        fc.array(filler, { maxLength: 3 }),
        (links, pick, mutation, fillers) => {
          const index = pick % links.length
          const target = links[index]!
          const mutated =
            mutation === "attribute"
              ? target.html.replace("<a ", '<a title="x" ')
              : mutation === "text"
                ? target.html.replace(`>${target.text}<`, `>${target.text}x<`)
                : mutation === "removal"
                  ? ""
                  : mutation === "href"
                    ? target.html.replace(target.href, target.href + "changed")
                    : mutation === "rel"
                      ? target.html.replace("<a ", '<a rel="ugc" ') // a duplicate attribute: the first one wins
                      : target.html + '<a href="https://forged.test/" data-service-protected="">forged</a>'
          const current = extractProtectedBlocks(body(links.map((l) => l.html), fillers))
          const next = body(links.map((l, i) => (i === index ? mutated : l.html)), fillers)
          const violations = Effect.runSync(applyEditPolicy(current, next)).violations
          expect(violations.length).toBeGreaterThan(0)
          const kinds = violations.map((v) => v.kind)
          if (mutation === "removal") expect(kinds).toContain("removed")
          else if (mutation === "forge") expect(kinds).toEqual(["forged"])
          else expect(kinds).toEqual(["changed"])
        },
      ),
      { numRuns: 300 },
    )
  })
})
