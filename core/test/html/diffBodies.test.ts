import fc from "fast-check"
import { applyPatch } from "diff"
import { describe, expect, it } from "vitest"
import { bodyLines, countWords, diffBodies, diffLines, diffWords } from "../../src/html/index.ts"
import { clean } from "./helpers.ts"

describe("bodyLines", () => {
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
    ["", []],
    ["  \n ", []],
    ["<p>a</p><p>b</p>", ["<p>a</p>", "<p>b</p>"]],
    ["<p>a</p>\n\n<h2>T</h2>\n", ["<p>a</p>", "<h2>T</h2>"]],
    ["<ul><li>one</li><li>two</li></ul>", ["<ul>", "<li>one</li>", "<li>two</li>", "</ul>"]],
    ["text <b>bold</b><p>para</p>tail", ["text <b>bold</b>", "<p>para</p>", "tail"]],
    ['<div class="x"><p>a</p>b</div>', ['<div class="x">', "<p>a</p>", "b", "</div>"]],
    ["<table><tbody><tr><td>a</td><td>b</td></tr></tbody></table>", ["<table>", "<tbody>", "<tr>", "<td>a</td>", "<td>b</td>", "</tr>", "</tbody>", "</table>"]],
    ["<p>one<br>two</p>", ["<p>one<br>two</p>"]],
    ["<pre>a\n  b</pre>", ["<pre>a&#10;  b</pre>"]],
    ["<p>a\nb</p>", ["<p>a&#10;b</p>"]],
    ["<hr><p>x</p>", ["<hr>", "<p>x</p>"]],
    ['<figure><img src="/a.png" alt="a"><figcaption>c</figcaption></figure>', ["<figure>", '<img src="/a.png" alt="a">', "<figcaption>c</figcaption>", "</figure>"]],
    ['<p>See <a href="https://x.test" data-service-protected="backlink">x</a>.</p>', ['<p>See <a href="https://x.test" data-service-protected="backlink">x</a>.</p>']],
  ]
  for (const [html, lines] of cases) {
    it(`should split ${JSON.stringify(html)} into one block element a line`, () => {
      expect(bodyLines(html)).toEqual(lines)
    })
  }

  it("should split input too deep to parse into one line without overflowing the stack", () => {
    expect(bodyLines("<div>".repeat(100_000) + "a b")).toHaveLength(1)
  })
})

describe("diffBodies", () => {
  const body = "<h2>Title</h2>\n<p>One two three.</p>\n<p>Four five six.</p>\n<ul><li>seven</li><li>eight</li></ul>"

  it("should start a hunk that adds to an empty body at line 0", () => {
    expect(diffBodies("", "<h2>a</h2>").unified).toBe("--- from\n+++ to\n@@ -0,0 +1,1 @@\n+<h2>a</h2>\n")
  })

  it("should answer an empty diff for equal bodies", () => {
    expect(diffBodies(body, body)).toEqual({ unified: "", added_words: 0, removed_words: 0 })
  })

  it("should answer a unified diff with one block a line and the words changed", () => {
    const next = body.replace("five", "fifty")
    expect(diffBodies(body, next, { from: "revision 1", to: "revision 2" })).toEqual({
      unified: [
        "--- revision 1",
        "+++ revision 2",
        "@@ -1,6 +1,6 @@",
        " <h2>Title</h2>",
        " <p>One two three.</p>",
        "-<p>Four five six.</p>",
        "+<p>Four fifty six.</p>",
        " <ul>",
        " <li>seven</li>",
        " <li>eight</li>",
        "",
      ].join("\n"),
      added_words: 1,
      removed_words: 1,
    })
  })

  it("should label the sides from and to by default", () => {
    expect(diffBodies("<p>a</p>", "<p>b</p>").unified.split("\n").slice(0, 2)).toEqual(["--- from", "+++ to"])
  })

  it("should count every word of a body added to an empty one, and removed when it goes", () => {
    expect(diffBodies("", body)).toMatchObject({ added_words: countWords(body), removed_words: 0 })
    expect(diffBodies(body, "")).toMatchObject({ added_words: 0, removed_words: countWords(body) })
  })

  it("should show only the context around distant changes", () => {
    const paragraphs = Array.from({ length: 30 }, (_, i) => `<p>paragraph ${i}</p>`)
    const next = [...paragraphs]
    next[2] = "<p>paragraph two</p>"
    next[25] = "<p>paragraph twenty-five</p>"
    const { unified } = diffBodies(paragraphs.join(""), next.join(""))
    expect(unified.match(/^@@ .* @@$/gm)).toEqual(["@@ -1,6 +1,6 @@", "@@ -23,7 +23,7 @@"])
    expect(unified).not.toContain("paragraph 12")
  })

  it("should count a moved paragraph as its words removed and added", () => {
    const result = diffBodies("<p>a b</p><p>c</p><p>d</p>", "<p>c</p><p>d</p><p>a b</p>")
    expect(result).toMatchObject({ added_words: 2, removed_words: 2 })
  })

  it("should diff two large bodies that differ everywhere, reporting the middle as replaced", () => {
    const a = "<p>alpha beta</p>".repeat(5_000)
    const b = "<p>gamma delta</p>".repeat(5_000)
    const result = diffBodies(`<h1>Same</h1>${a}<p>end</p>`, `<h1>Same</h1>${b}<p>end</p>`)
    expect(result.added_words).toBe(10_000)
    expect(result.removed_words).toBe(10_000)
    expect(result.unified).toMatch(/^@@ -1,5002 \+1,5002 @@$/m)
  })
})

// Paragraph bodies built from a small vocabulary, so that diffs have much to align.
const word = fc.constantFrom("alpha", "beta", "gamma", "delta", "eta", "theta", "<b>iota</b>", "kappa,", "&amp;")
const paragraph = fc.array(word, { minLength: 1, maxLength: 8 }).map((words) => words.join(" "))
const blocks = fc.array(
  fc.oneof(
    paragraph.map((text) => `<p>${text}</p>`),
    paragraph.map((text) => `<h2>${text}</h2>`),
    fc.array(paragraph, { minLength: 1, maxLength: 3 }).map((items) => `<ul>${items.map((t) => `<li>${t}</li>`).join("")}</ul>`),
  ),
  { maxLength: 12 },
)

describe("diffBodies properties", () => {
  it("should give a unified diff that patches the old lines into the new ones", () => {
    fc.assert(
      fc.property(blocks, blocks, (a, b) => {
        const from = clean(a.join("\n"))
        const to = clean(b.join("\n"))
        const text = (lines: ReadonlyArray<string>): string => lines.map((line) => `${line}\n`).join("")
        const { unified } = diffBodies(from, to)
        const patched = unified === "" ? text(bodyLines(from)) : applyPatch(text(bodyLines(from)), unified)
        expect(patched).toBe(text(bodyLines(to)))
      }),
      { numRuns: 300 },
    )
  })

  it("should show exactly the words an edit replaces", () => {
    fc.assert(
      fc.property(
        fc.array(paragraph, { minLength: 1, maxLength: 10 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 5 }),
        (paragraphs, picks) => {
          const from = clean(paragraphs.map((p) => `<p>${p}</p>`).join("\n"))
          const chosen = [...new Set(picks.map((n) => n % paragraphs.length))]
          // One fresh word appended to each chosen paragraph, one word of another removed.
          const next = paragraphs.map((p, i) => (chosen.includes(i) ? `${p} fresh${i}` : p))
          const to = clean(next.map((p) => `<p>${p}</p>`).join("\n"))
          const result = diffBodies(from, to)
          expect(result.added_words).toBe(chosen.length)
          expect(result.removed_words).toBe(0)
          expect(result.unified.split("\n").filter((l) => l.startsWith("+<p>"))).toHaveLength(chosen.length)
          expect(result.unified.split("\n").filter((l) => l.startsWith("-<p>"))).toHaveLength(chosen.length)
          const back = diffBodies(to, from)
          expect([back.added_words, back.removed_words]).toEqual([0, chosen.length])
        },
      ),
      { numRuns: 200 },
    )
  })

  it("should count all the words of a body as added against an empty one", () => {
    fc.assert(
      fc.property(blocks, (a) => {
        const body = clean(a.join(""))
        expect(diffBodies("", body).added_words).toBe(countWords(body))
      }),
      { numRuns: 200 },
    )
  })
})

describe("diffLines", () => {
  it("should number the lines of both sides", () => {
    expect(diffLines(["a", "b", "c"], ["a", "x", "c", "d"])).toEqual([
      { op: "same", text: "a", oldNo: 1, newNo: 1 },
      { op: "del", text: "b", oldNo: 2, newNo: null },
      { op: "ins", text: "x", oldNo: null, newNo: 2 },
      { op: "same", text: "c", oldNo: 3, newNo: 3 },
      { op: "ins", text: "d", oldNo: null, newNo: 4 },
    ])
  })
})

describe("diffWords", () => {
  it("should mark the words that changed", () => {
    expect(diffWords("The quick brown fox.", "The quick red fox!")).toEqual([
      { op: "same", text: "The quick " },
      { op: "del", text: "brown" },
      { op: "ins", text: "red" },
      { op: "same", text: " fox" },
      { op: "del", text: "." },
      { op: "ins", text: "!" },
    ])
  })

  it("should answer one unchanged piece for equal texts and nothing for two empty ones", () => {
    expect(diffWords("same text", "same text")).toEqual([{ op: "same", text: "same text" }])
    expect(diffWords("", "")).toEqual([])
  })

  it("should rebuild both texts from its pieces", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), fc.string({ maxLength: 60 }), (a, b) => {
        const pieces = diffWords(a, b)
        expect(pieces.filter((p) => p.op !== "ins").map((p) => p.text).join("")).toBe(a)
        expect(pieces.filter((p) => p.op !== "del").map((p) => p.text).join("")).toBe(b)
      }),
      { numRuns: 300 },
    )
  })

  it("should rebuild both texts when they differ too much to align", () => {
    const a = Array.from({ length: 5_000 }, (_, i) => `a${i}`).join(" ")
    const b = Array.from({ length: 5_000 }, (_, i) => `b${i}`).join(" ")
    const pieces = diffWords(`start ${a} 😀end`, `start ${b} 😀end`)
    expect(pieces.filter((p) => p.op !== "ins").map((p) => p.text).join("")).toBe(`start ${a} 😀end`)
    expect(pieces.filter((p) => p.op !== "del").map((p) => p.text).join("")).toBe(`start ${b} 😀end`)
    expect(pieces[0]).toEqual({ op: "same", text: "start " })
  })
})
