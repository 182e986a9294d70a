import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { bodyUnits, type Hunk, hunkGroupEnds, mergeArticle, settleMerge, skipShared } from "../../src/html/mergeArticle.ts"
import { DIFF_BUDGET, makeDiffBudget } from "../../src/html/diffBudget.ts"
import { extractProtectedBlocks } from "../../src/html/index.ts"

const P = (text: string): string => `<p>${text}</p>`
const LINK = '<p>See <a href="https://partner.test/" data-service-protected="backlink">partner</a>.</p>'
const body = (...blocks: ReadonlyArray<string>): string => blocks.join("\n")
const side = (title: string, ...blocks: ReadonlyArray<string>) => ({ title, body: body(...blocks) })
const protectedCount = (html: string): number => extractProtectedBlocks(html).length

describe("bodyUnits", () => {
  it("should split a body into its top-level blocks, inline runs as one unit, and give the body back", () => {
    const html = 'lead <b>in</b>\n<p>a</p><h2>T</h2>\n\n<ul><li>x</li></ul>tail'
    const units = bodyUnits(html)
    expect(units.map((u) => u.key)).toEqual(["lead <b>in</b>", "<p>a</p>", "<h2>T</h2>", "<ul><li>x</li></ul>", "tail"])
    expect(units.map((u) => u.raw).join("")).toBe(html)
  })

  it("should list the protected blocks inside each unit", () => {
    const units = bodyUnits(body(P("a"), LINK))
    expect(units.map((u) => u.protectedKeys.length)).toEqual([0, 1])
  })
})

describe("mergeArticle", () => {
  const base = side("Title", P("one"), P("two"), P("three"), P("four"))

  it("should keep both sides' changes to different blocks, even neighbouring ones", () => {
    const theirs = side("Title", P("one"), P("TWO"), P("three"), P("four"))
    const mine = side("Title", P("one"), P("two"), P("THREE"), P("four"))
    const merge = mergeArticle(base, theirs, mine)
    expect(merge.conflicts).toEqual([])
    expect(merge.body).toBe(body(P("one"), P("TWO"), P("THREE"), P("four")))
    expect(merge.mergedUnits).toBe(1)
  })

  it("should settle neighbouring blocks replaced one for one block by block, not as one region", () => {
    const abc = side("Title", P("A"), P("B"), P("C"))
    // theirs changed A and B, mine B the same way and C: each block has one change, or the same one
    const clean = mergeArticle(abc, side("Title", P("A2"), P("B2"), P("C")), side("Title", P("A"), P("B2"), P("C2")))
    expect(clean.conflicts).toEqual([])
    expect(clean.body).toBe(body(P("A2"), P("B2"), P("C2")))
    expect(clean.mergedUnits).toBe(1)
    // theirs changed B, mine A and B differently: B alone is the conflict, mine's A is kept
    const narrow = mergeArticle(base, side("Title", P("one"), P("TWO"), P("three"), P("four")), side("Title", P("ONE"), P("deux"), P("three"), P("four")))
    expect(narrow.conflicts).toEqual([{ unit: "body/1", base: P("two"), theirs: P("TWO"), mine: P("deux") }])
    expect(settleMerge(narrow, new Map([["body/1", { take: "theirs" }]]))).toBe(body(P("ONE"), P("TWO"), P("three"), P("four")))
    // mine changed three blocks, theirs the last of them: only that one conflicts
    const last = mergeArticle(base, side("Title", P("one"), P("two"), P("3"), P("four")), side("Title", P("1"), P("2"), P("III"), P("four")))
    expect(last.conflicts.map((c) => c.unit)).toEqual(["body/2"])
  })

  it("should not count a block whose attributes one side only wrote in another order as changed; text stays as written", () => {
    const linked = (order: "href-first" | "title-first", text: string) =>
      order === "href-first" ? `<p><a href="https://e.test/" title="t">${text}</a></p>` : `<p><a title="t" href="https://e.test/">${text}</a></p>`
    const withLink = side("Title", linked("href-first", "l"), P("x"))
    // theirs changed the link's text; mine wrote the same link with its attributes the other way round, and changed x
    const merge = mergeArticle(withLink, side("Title", linked("href-first", "l2"), P("x")), side("Title", linked("title-first", "l"), P("X")))
    expect(merge.conflicts).toEqual([])
    expect(merge.body).toBe(body(linked("href-first", "l2"), P("X")))
    // whitespace inside a block is its content (a pre's is what it shows): two writers' whitespace differs, a conflict
    const pre = mergeArticle(side("Title", "<pre>a b</pre>"), side("Title", "<pre>a  b</pre>"), side("Title", "<pre>a b c</pre>"))
    expect(pre.conflicts.map((c) => c.unit)).toEqual(["body/0"])
  })

  it("should keep a run that adds or drops blocks as one region: which block became which is not known", () => {
    // mine replaced two blocks by three, theirs changed one of the two: one conflict over the run
    const merge = mergeArticle(base, side("Title", P("one"), P("TWO"), P("three"), P("four")), side("Title", P("one"), P("x"), P("y"), P("z"), P("four")))
    expect(merge.conflicts).toEqual([{ unit: "body/1", base: body(P("two"), P("three")), theirs: body(P("TWO"), P("three")), mine: body(P("x"), P("y"), P("z")) }])
  })

  it("should keep two runs of inline text the merge brings together apart, unless the first ends in whitespace", () => {
    // theirs drops the block between the two runs, mine turns the last block into text
    const merged = (lead: string) => mergeArticle(side("T", `${lead}<p>b</p><p>c</p>`), side("T", `${lead}<p>c</p>`), side("T", `${lead}<p>b</p>w`)).body
    expect(merged("x")).toBe("x\nw")
    expect(merged("x ")).toBe("x w")
    expect(merged("x\t")).toBe("x\tw")
  })

  it("should take the title from the side that changed it, and count it as merged when it was theirs", () => {
    const merge = mergeArticle(base, { ...base, title: "New" }, side("Title", P("one"), P("two"), P("three"), P("FOUR")))
    expect(merge.title).toBe("New")
    expect(merge.body).toBe(body(P("one"), P("two"), P("three"), P("FOUR")))
    expect(merge.mergedUnits).toBe(1)
  })

  it("should take a change made identically on both sides once", () => {
    const changed = side("Title", P("one"), P("2"), P("three"), P("four"), P("five"))
    const merge = mergeArticle(base, changed, changed)
    expect(merge.conflicts).toEqual([])
    expect(merge.body).toBe(changed.body)
    expect(merge.mergedUnits).toBe(0)
  })

  it("should take a block both sides inserted once, when one side also changed the block beside it", () => {
    // mine inserted "new" and changed "two" (one hunk: which of its blocks is the insertion is not
    // known); theirs inserted the same "new" alone. Before, "new" came back twice.
    const before = mergeArticle(base, side("Title", P("one"), P("new"), P("two"), P("three"), P("four")), side("Title", P("one"), P("new"), P("TWO"), P("three"), P("four")))
    expect(before.conflicts).toEqual([])
    expect(before.body).toBe(body(P("one"), P("new"), P("TWO"), P("three"), P("four")))
    expect(before.mergedUnits).toBe(0)
    // The same after the changed block, theirs the side that also changed it.
    const after = mergeArticle(base, side("Title", P("one"), P("two"), P("THREE"), P("new"), P("four")), side("Title", P("one"), P("two"), P("three"), P("new"), P("four")))
    expect(after.conflicts).toEqual([])
    expect(after.body).toBe(body(P("one"), P("two"), P("THREE"), P("new"), P("four")))
    expect(after.mergedUnits).toBe(1)
    // Different insertions beside that change stay as they were merged: both, once each.
    const different = mergeArticle(base, side("Title", P("one"), P("x"), P("two"), P("three"), P("four")), side("Title", P("one"), P("y"), P("TWO"), P("three"), P("four")))
    expect(different.body).toBe(body(P("one"), P("x"), P("y"), P("TWO"), P("three"), P("four")))
  })

  it("should take a block both sides inserted once, when each side also changed a different block beside it", () => {
    // mine changed "one" and inserted "new" after it; theirs inserted "new" and changed "two" after it.
    const merge = mergeArticle(base, side("Title", P("one"), P("new"), P("TWO"), P("three"), P("four")), side("Title", P("ONE"), P("new"), P("two"), P("three"), P("four")))
    expect(merge.conflicts).toEqual([])
    expect(merge.body).toBe(body(P("ONE"), P("new"), P("TWO"), P("three"), P("four")))
    expect(merge.mergedUnits).toBe(1)
    // A person's settlement of the same merge (a title conflict only) keeps it once too.
    const titled = mergeArticle(base, side("Theirs", P("one"), P("new"), P("TWO"), P("three"), P("four")), side("Mine", P("ONE"), P("new"), P("two"), P("three"), P("four")))
    expect(titled.conflicts.map((c) => c.unit)).toEqual(["title"])
    expect(settleMerge(titled, new Map())).toBe(body(P("ONE"), P("new"), P("TWO"), P("three"), P("four")))
  })

  it("should report a block changed differently on both sides as a conflict with each side's HTML", () => {
    const merge = mergeArticle(base, side("Title", P("one"), P("theirs"), P("three"), P("four")), side("Title", P("one"), P("mine"), P("three"), P("four")))
    expect(merge.body).toBeNull()
    expect(merge.conflicts).toEqual([{ unit: "body/1", base: P("two"), theirs: P("theirs"), mine: P("mine") }])
  })

  it("should report differing titles as the title's conflict", () => {
    const merge = mergeArticle(base, { ...base, title: "Theirs" }, { ...base, title: "Mine" })
    expect(merge.title).toBeNull()
    expect(merge.conflicts).toEqual([{ unit: "title", base: "Title", theirs: "Theirs", mine: "Mine" }])
  })

  it("should treat two different insertions at one place as a conflict, and one side's deletion beside the other's change as clean", () => {
    const insert = mergeArticle(base, side("Title", P("one"), P("x"), P("two"), P("three"), P("four")), side("Title", P("one"), P("y"), P("two"), P("three"), P("four")))
    expect(insert.conflicts).toEqual([{ unit: "body/1", base: "", theirs: P("x"), mine: P("y") }])
    const clean = mergeArticle(base, side("Title", P("one"), P("three"), P("four")), side("Title", P("one"), P("two"), P("three"), P("FOUR")))
    expect(clean.body).toBe(body(P("one"), P("three"), P("FOUR")))
  })

  it("should make a conflict of a protected link both sides moved to different places, rather than keep it twice", () => {
    // Enough text around the link that each side's alignment is a deletion and an insertion of it.
    const rest = [P("b1"), P("b2"), P("b3"), P("c1"), P("c2"), P("c3")]
    const withLink = side("Title", P("a"), LINK, ...rest)
    const theirs = side("Title", P("a"), ...rest, LINK)
    const mine = side("Title", P("a"), ...rest.slice(0, 3), LINK, ...rest.slice(3))
    const merge = mergeArticle(withLink, theirs, mine)
    expect(merge.body).toBeNull()
    expect(merge.conflicts.length).toBeGreaterThan(0)
    expect(merge.conflicts.every((c) => c.mine.includes("partner") || c.theirs.includes("partner"))).toBe(true)
  })

  it("should name each conflict once: an insertion and a change at one index made conflicts for a protected link are one conflict", () => {
    // Theirs moved the link to the top and dropped "a"; mine kept only the link. Theirs' insertion
    // before unit 0 and mine's deletion from unit 0 both become conflicts (the link would be doubled).
    const merge = mergeArticle(side("Title", P("c"), P("d"), P("a"), LINK), side("Title", LINK, P("c"), P("d")), side("Title", LINK))
    expect(merge.body).toBeNull()
    expect(merge.conflicts).toEqual([{ unit: "body/0", base: body(P("c"), P("d"), P("a"), LINK), theirs: body(LINK, P("c"), P("d")), mine: LINK }])
    // One choice settles the one part: no text is applied twice.
    expect(settleMerge(merge, new Map([["body/0", { html: P("settled") }]]))).toBe(P("settled"))
    expect(protectedCount(settleMerge(merge, new Map([["body/0", { take: "theirs" }]])))).toBe(1)
  })

  it("should keep the other side's whitespace when one side changed nothing", () => {
    const theirs = { title: "Title", body: "<p>one</p><p>TWO</p>\n\n<p>three</p>" }
    const merge = mergeArticle(base, theirs, base)
    expect(merge.body).toBe(theirs.body)
  })

  it("should compare a side's changed middle as one unit when aligning it would spend more than the budget, and say so", () => {
    const many = (n: number, tag: string) => Array.from({ length: n }, (_, i) => P(`${tag}${i}`))
    const big = side("Title", P("head"), ...many(200, "b"), P("tail"))
    const theirBlocks = many(200, "b")
    theirBlocks[5] = P("theirs")
    const theirs = side("Title", P("HEAD"), ...theirBlocks, P("tail"))
    const mine = side("Title", P("head"), ...many(200, "m"), P("TAIL"))
    const budget = makeDiffBudget(5_000)
    const merge = mergeArticle(big, theirs, mine, budget)
    expect(merge.coarse).toBe(true)
    expect(budget.used).toBeLessThanOrEqual(5_000)
    // Each side's changed middle is one unit (mine's from the second block to the last, theirs'
    // from the first to the sixth): they overlap, so they are one conflict holding both changes.
    expect(merge.conflicts).toHaveLength(1)
    expect(merge.conflicts[0]!.unit).toBe("body/0")
    expect(merge.conflicts[0]!.mine).toContain(P("m0"))
    expect(merge.conflicts[0]!.theirs).toContain(P("theirs"))
    // With the whole budget the same sides align block by block.
    const full = makeDiffBudget()
    expect(mergeArticle(big, theirs, mine, full).coarse).toBe(false)
    expect(full.used).toBeLessThanOrEqual(DIFF_BUDGET)
  })

  it("should spend at most one budget on the worst sides, whatever their size", () => {
    // Ten thousand blocks each, every one different: Myers would need about 4 x 10^8 steps.
    const many = (n: number, tag: string) => Array.from({ length: n }, (_, i) => P(`${tag}${i}`))
    const budget = makeDiffBudget()
    const merge = mergeArticle(side("T", ...many(10_000, "b")), side("T", ...many(10_000, "t")), side("T", ...many(10_000, "m")), budget)
    expect(budget.used).toBeLessThanOrEqual(DIFF_BUDGET)
    expect(budget.fallback).toBeLessThanOrEqual(2 * (10_000 + 1))
    expect(merge.coarse).toBe(true)
    expect(merge.conflicts).toHaveLength(1)
  })

  it("should merge a side that adds as many blocks as a body's parse budget allows, without overflowing the stack", () => {
    // 131 000 rules: within the parse budget of a PUT (2^17 elements), one hunk of that many units.
    const rules = "<hr>".repeat(131_000)
    const merge = mergeArticle(side("T", P("a"), P("z")), side("T", P("b"), P("z")), side("T", P("a"), P("z") + rules))
    expect(merge.conflicts).toEqual([])
    expect(merge.body).toBe(body(P("b"), P("z") + rules))
  })

  it("should settle conflicts as chosen, and keep mine where nothing was chosen", () => {
    const merge = mergeArticle(
      base,
      side("Title", P("one"), P("theirs 2"), P("three"), P("theirs 4")),
      side("Title", P("one"), P("mine 2"), P("three"), P("mine 4")),
    )
    expect(merge.conflicts.map((c) => c.unit)).toEqual(["body/1", "body/3"])
    expect(settleMerge(merge, new Map([["body/1", { take: "theirs" as const }]]))).toBe(body(P("one"), P("theirs 2"), P("three"), P("mine 4")))
    expect(settleMerge(merge, new Map([["body/3", { html: P("both 4") }]]))).toBe(body(P("one"), P("mine 2"), P("three"), P("both 4")))
  })
})

describe("mergeArticle properties", () => {
  // Bodies as lists of paragraphs drawn from a small alphabet (so sides share and repeat blocks), one of them protected.
  const block = fc.constantFrom(P("a"), P("b"), P("c"), P("d"), P("e"), "<h2>h</h2>", LINK)
  const blocks = fc.array(block, { maxLength: 8 })
  const title = fc.constantFrom("T", "U", "V")
  const article = fc.record({ title, blocks }).map(({ title, blocks }) => side(title, ...blocks))

  it("should give the other side when one side is unchanged", () => {
    fc.assert(
      fc.property(article, article, (base, other) => {
        const mineUnchanged = mergeArticle(base, other, base)
        expect(mineUnchanged.conflicts).toEqual([])
        expect(mineUnchanged.title).toBe(other.title)
        expect(mineUnchanged.body).toBe(other.body)
        const theirsUnchanged = mergeArticle(base, base, other)
        expect(theirsUnchanged.conflicts).toEqual([])
        expect(theirsUnchanged.body).toBe(other.body)
      }),
    )
  })

  it("should keep both sides' changes when they touch different blocks", () => {
    // Base of distinct blocks; each side rewrites its own half.
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 8 }), fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), (n, flips) => {
        const baseBlocks = Array.from({ length: n }, (_, i) => P(`base ${i}`))
        const half = Math.floor(n / 2)
        const theirs = baseBlocks.map((b, i) => (i < half && flips[i] ? P(`theirs ${i}`) : b))
        const mine = baseBlocks.map((b, i) => (i >= half && flips[i] ? P(`mine ${i}`) : b))
        const merge = mergeArticle(side("T", ...baseBlocks), side("T", ...theirs), side("T", ...mine))
        expect(merge.conflicts).toEqual([])
        expect(merge.body).toBe(body(...baseBlocks.map((b, i) => (i < half ? theirs[i]! : mine[i]!))))
      }),
    )
  })

  it("should never lose or double a protected link both sides keep", () => {
    fc.assert(
      fc.property(article, article, article, (base, theirs, mine) => {
        const merge = mergeArticle(base, theirs, mine)
        if (merge.body === null) return
        const t = protectedCount(theirs.body)
        if (t === protectedCount(mine.body)) expect(protectedCount(merge.body)).toBe(t)
      }),
      { numRuns: 500 },
    )
  })

  it("should name every conflict by a unit of its own", () => {
    fc.assert(
      fc.property(article, article, article, (base, theirs, mine) => {
        const units = mergeArticle(base, theirs, mine).conflicts.map((c) => c.unit)
        expect(new Set(units).size).toBe(units.length)
      }),
      { numRuns: 2000 },
    )
  })

  it("should be symmetric in which side is mine, up to conflicts", () => {
    fc.assert(
      fc.property(article, article, article, (base, a, b) => {
        const ab = mergeArticle(base, a, b)
        const ba = mergeArticle(base, b, a)
        expect(ab.conflicts.length === 0).toBe(ba.conflicts.length === 0)
        expect(ab.title).toBe(ba.title)
        expect(ab.conflicts.map((c) => [c.unit, c.base, c.theirs, c.mine])).toEqual(ba.conflicts.map((c) => [c.unit, c.base, c.mine, c.theirs]))
        // Same blocks, up to whitespace between them (each side keeps its own).
        if (ab.body !== null) expect(bodyUnits(ab.body).map((u) => u.key)).toEqual(bodyUnits(ba.body!).map((u) => u.key))
      }),
      { numRuns: 500 },
    )
  })
})

describe("hunkGroupEnds", () => {
  /** The grouping as first written: the next hunk joins while it overlaps any hunk of the group (quadratic). */
  const naive = (sorted: ReadonlyArray<Hunk>): Array<number> => {
    const overlaps = (a: Hunk, b: Hunk) => (a.oStart === a.oEnd && b.oStart === b.oEnd ? a.oStart === b.oStart : a.oStart < b.oEnd && b.oStart < a.oEnd)
    const ends: Array<number> = []
    let k = 0
    while (k < sorted.length) {
      const group = [sorted[k++]!]
      while (k < sorted.length && group.some((g) => overlaps(g, sorted[k]!))) group.push(sorted[k++]!)
      ends.push(k)
    }
    return ends
  }
  it("should group hunks as overlapping any hunk of the group does, in one pass", () => {
    const hunk = fc.tuple(fc.nat(30), fc.nat(4)).map(([oStart, length]): Hunk => ({ oStart, oEnd: oStart + length, units: [] }))
    fc.assert(
      fc.property(fc.array(hunk, { maxLength: 40 }), (hunks) => {
        const sorted = [...hunks].sort((a, b) => a.oStart - b.oStart || a.oEnd - b.oEnd)
        expect(hunkGroupEnds(sorted)).toEqual(naive(sorted))
      }),
      { numRuns: 2000 },
    )
    // a replacement reaching far ahead keeps the group open past hunks that overlap only it; an insertion at its end, and a replacement starting there, are groups of their own
    const sorted: Array<Hunk> = [
      { oStart: 0, oEnd: 10, units: [] },
      { oStart: 2, oEnd: 3, units: [] },
      { oStart: 9, oEnd: 9, units: [] },
      { oStart: 10, oEnd: 10, units: [] },
      { oStart: 10, oEnd: 12, units: [] },
    ]
    expect(hunkGroupEnds(sorted)).toEqual([3, 4, 5])
  })
})

describe("skipShared", () => {
  /** `units` behind a proxy that counts each unit read into `reads`. */
  const counted = (units: ReadonlyArray<number>, reads: { n: number }): ReadonlyArray<number> =>
    new Proxy(units as Array<number>, {
      get: (target, key, receiver) => {
        if (typeof key === "string" && /^\d+$/.test(key)) reads.n++
        return Reflect.get(target, key, receiver)
      },
    })
  const regions = (x: ReadonlyArray<number>, y: ReadonlyArray<number>) =>
    [
      { oStart: 0, oEnd: 1, mine: x, theirs: [0], resolution: "mine" as const },
      { oStart: 1, oEnd: 2, mine: [1], theirs: y, resolution: "theirs" as const },
    ] as const
  /** The longest run that ends x and begins y, by trying every length. */
  const longestShared = (x: ReadonlyArray<number>, y: ReadonlyArray<number>): number => {
    for (let k = Math.min(x.length, y.length); k > 0; k--) if (x.slice(x.length - k).join() === y.slice(0, k).join()) return k
    return 0
  }

  it("should find the longest run that ends the first region's units and begins the second's, as trying every length finds it", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 2, max: 4 }), { maxLength: 12 }), fc.array(fc.integer({ min: 2, max: 4 }), { maxLength: 12 }), (x, y) => {
        const [a, b] = regions(x, y)
        expect(skipShared(a, b).skip ?? 0).toBe(longestShared(x, y))
      }),
    )
  })

  it("should read the units a bounded number of times each (at most 8 times their count), for units a paste of one repeated paragraph makes", () => {
    // x = A..A B, y = A..A: every length shares all but its last unit, which trying each length
    // from the longest compared in full (n*n/2 reads)
    const n = 2000
    const reads = { n: 0 }
    const x = counted([...Array.from({ length: n }, () => 7), 9], reads)
    const y = counted(Array.from({ length: n }, () => 7), reads)
    const [a, b] = regions(x, y)
    expect(skipShared(a, b).skip ?? 0).toBe(0)
    expect(reads.n).toBeLessThanOrEqual(8 * (x.length + y.length))
  })
})
