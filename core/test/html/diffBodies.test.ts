import fc from "fast-check"
import { applyPatch } from "diff"
import { describe, expect, expectTypeOf, it } from "vitest"
import { bodyLines, compareBodies, countWords, DIFF_BUDGET, diffBodies, type DiffLine, diffLines, diffWords, makeDiffBudget, type ReadingRow } from "../../src/html/index.ts"
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
    expect(diffBodies(body, body)).toEqual({ unified: "", added_words: 0, removed_words: 0, granularity: "word", note: null })
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
      granularity: "word",
      note: null,
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

// Words of `length` characters, all different, so that no two sides share one.
const longWords = (prefix: string, count: number, length: number): Array<string> =>
  Array.from({ length: count }, (_, i) => `${prefix}${i}`.padEnd(length, prefix))

describe("one budget per comparison", () => {
  it("should charge long words their length once, not once per comparison", () => {
    // 500 words of 1 000 characters a side, one of them changed: aligning compares numbers.
    const words = longWords("w", 500, 1_000)
    const from = `<p>${words.join(" ")}</p>`
    const to = `<p>${words.map((w, i) => (i === 250 ? longWords("x", 1, 1_000)[0] : w)).join(" ")}</p>`
    const { diff, work } = compareBodies(from, to)
    expect(diff).toMatchObject({ added_words: 1, removed_words: 1, granularity: "word", note: null })
    // Interning: every line and word, its length plus one; aligning: a few units per word.
    expect(work.used).toBeLessThanOrEqual(2 * (from.length + to.length) + 10 * 2 * 502)
    expect(work.fallback).toBe(0)
  })

  it("should stay within the budget on the review's worst input (two 0.5 MB revisions of 1 000-character words)", () => {
    // Two 0.5 MB revisions of 1 000-character words, one a paragraph, nothing shared.
    const from = longWords("a", 500, 1_000).map((w) => `<p>${w}</p>`).join("")
    const to = longWords("b", 500, 1_000).map((w) => `<p>${w}</p>`).join("")
    const budget = makeDiffBudget()
    const { diff, work } = compareBodies(from, to, { reading: true }, budget)
    expect(work.used).toBeLessThanOrEqual(DIFF_BUDGET)
    expect(diff).toMatchObject({ added_words: 500, removed_words: 500 })
    // Replacing every paragraph is also the shortest diff: it fits, words and all.
    expect(diff.granularity).toBe("word")
  })

  it("should say when the words are more than the default budget aligns", () => {
    // 4 200 words a side, 200 of them shared here and there.
    const from = Array.from({ length: 200 }, (_, i) => `<p>${longWords("a", 20, 5).join(" ")} ${i}</p>`).join("")
    const to = Array.from({ length: 200 }, (_, i) => `<p>${longWords("b", 20, 5).join(" ")} ${i}</p>`).join("")
    const { diff, work } = compareBodies(from, to)
    expect(diff.granularity).toBe("block")
    expect(work.used).toBeLessThanOrEqual(DIFF_BUDGET)
  })

  it("should fall back to block lines past the budget, counting each changed line's words whole, and say so", () => {
    const from = Array.from({ length: 200 }, (_, i) => `<p>${longWords("a", 4, 5).join(" ")} ${i}</p>`).join("")
    const to = Array.from({ length: 200 }, (_, i) => `<p>${longWords("b", 4, 5).join(" ")} ${i}</p>`).join("")
    const exact = compareBodies(from, to)
    expect(exact.diff.granularity).toBe("word")
    // Enough to align the lines (they come first), not the words.
    const limit = exact.work.used - 1
    const budget = makeDiffBudget(limit)
    const { diff, work } = compareBodies(from, to, {}, budget)
    expect(work.used).toBeLessThanOrEqual(limit)
    expect(diff.granularity).toBe("block")
    expect(diff.note).toMatch(/too long to compare word by word/)
    expect(diff.unified).toBe(exact.diff.unified)
    expect([diff.added_words, diff.removed_words]).toEqual([1_000, 1_000])
    // The fallback passes over each line once.
    expect(work.fallback).toBeLessThanOrEqual(400)
  })

  it("should fall back to the shared start and end, the middle replaced whole, when the lines do not fit", () => {
    const a = "<p>alpha beta</p>".repeat(300)
    const b = "<p>gamma delta</p>".repeat(300)
    const budget = makeDiffBudget(5_000)
    const { diff, work } = compareBodies(`<h1>Same</h1>${a}<p>end</p>`, `<h1>Same</h1>${b}<p>end</p>`, {}, budget)
    expect(work.used).toBeLessThanOrEqual(5_000)
    expect(diff).toMatchObject({ granularity: "whole", added_words: 600, removed_words: 600 })
    expect(diff.note).toMatch(/differ too much to align line by line/)
    expect(diff.unified).toMatch(/^@@ -1,302 \+1,302 @@$/m)
    expect(work.fallback).toBeLessThanOrEqual(2 * 302 + 2)
  })

  it("should spend one budget for the lines, the word counts and every changed line a reader sees", () => {
    // Many changed paragraphs: each one's word diff spends the same budget, not one of its own.
    const from = Array.from({ length: 400 }, (_, i) => `<p>${longWords("a", 30, 8).join(" ")} ${i}</p>`).join("")
    const to = Array.from({ length: 400 }, (_, i) => `<p>${longWords("a", 30, 8).join(" ")} x${i}</p>`).join("")
    const alone = compareBodies(from, to)
    const withRows = compareBodies(from, to, { reading: true })
    expect(withRows.work.used).toBeGreaterThan(alone.work.used)
    expect(withRows.rows.filter((row) => row.kind === "changed")).toHaveLength(400)
    const limit = alone.work.used + Math.floor((withRows.work.used - alone.work.used) / 2)
    const halfway = compareBodies(from, to, { reading: true }, makeDiffBudget(limit))
    expect(halfway.work.used).toBeLessThanOrEqual(limit)
    expect(halfway.diff.granularity).toBe("block")
    const rows = halfway.rows.filter((row) => row.kind === "changed")
    expect(rows).toHaveLength(400)
    // The last rows are whole lines, removed and added.
    expect(rows[399]).toEqual({ kind: "changed", before: [{ op: "del", text: expect.any(String) }], after: [{ op: "ins", text: expect.any(String) }] })
  })

  it("should answer the line diff only when a page asks for it (reading), as the same lines the unified diff shows", () => {
    const from = "<h1>Roses</h1><p>red</p><p>kept</p>"
    const to = "<h1>Roses</h1><p>white</p><p>kept</p>"
    const plain = compareBodies(from, to)
    expect(plain.lines).toBeNull()
    expect(plain.rows).toBeNull()
    const page = compareBodies(from, to, { reading: true })
    expect(page.diff).toEqual(plain.diff)
    expect(page.lines.map((line) => line.op)).toEqual(["same", "del", "ins", "same"])
    // every line the unified diff removes or adds is one of them
    const changed = plain.diff.unified.split("\n").filter((l) => /^[-+]</.test(l))
    expect(changed).toEqual(page.lines.filter((l) => l.op !== "same").map((l) => `${l.op === "del" ? "-" : "+"}${l.text}`))
    // (checked by the type checker: a page's comparison has its lines and rows, any other may not)
    expectTypeOf(page.lines).toEqualTypeOf<ReadonlyArray<DiffLine>>()
    expectTypeOf(page.rows).toEqualTypeOf<ReadonlyArray<ReadingRow>>()
    expectTypeOf(plain.lines).toEqualTypeOf<ReadonlyArray<DiffLine> | null>()
    expectTypeOf(compareBodies(from, to, { reading: false as boolean }).rows).toEqualTypeOf<ReadonlyArray<ReadingRow> | null>()
  })

  it("should compare the titles first, in the same budget, when asked", () => {
    const plain = compareBodies("<p>a</p>", "<p>a</p>")
    const titled = compareBodies("<p>a</p>", "<p>a</p>", { titles: { from: "Old roses", to: "New roses" } })
    expect(titled.title).toEqual([{ op: "del", text: "Old" }, { op: "ins", text: "New" }, { op: "same", text: " roses" }])
    expect(titled.work.used).toBeGreaterThan(plain.work.used)
    expect(compareBodies("<p>a</p>", "<p>a</p>", { titles: { from: "Same", to: "Same" } }).title).toBeNull()
  })

  it("should keep a word diff within its budget and rebuild both texts past it", () => {
    const a = Array.from({ length: 5_000 }, (_, i) => `a${i}`).join(" ")
    const b = Array.from({ length: 5_000 }, (_, i) => `b${i}`).join(" ")
    const budget = makeDiffBudget(50_000)
    const pieces = diffWords(a, b, budget)
    expect(budget.used).toBeLessThanOrEqual(50_000)
    expect(pieces.filter((p) => p.op !== "ins").map((p) => p.text).join("")).toBe(a)
    expect(budget.fallback).toBeLessThanOrEqual(a.length + 1)
  })
})
