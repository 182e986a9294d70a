import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  applyTextEdits,
  diffRevisions,
  editArticle,
  getArticle,
  getRevision,
  learnProtectedBlocks,
  MAX_BODY_BYTES,
  occurrences,
  restoreRevision,
  updateArticle,
} from "../../src/index.ts"
import { caller, failureOf, failureTag, makeWorld, recordingHtmlAnalyzer } from "./harness.ts"

const plain = { dryRun: false }

describe("applyTextEdits", () => {
  it("should apply edits in order, each on the result of the one before", () => {
    expect(applyTextEdits("a b c", [{ find: "b", replace: "x" }, { find: "x c", replace: "y" }])).toEqual({ text: "a y" })
  })

  it("should report every find found 0 or 2+ times with its count, overlapping ones included", () => {
    expect(occurrences("aaa", "aa")).toBe(2)
    expect(applyTextEdits("aaa b", [{ find: "aa", replace: "x" }, { find: "c", replace: "x" }, { find: "b", replace: "d" }])).toEqual({
      mismatches: [
        { path: "edits/0/find", message: expect.any(String), count: 2 },
        { path: "edits/1/find", message: expect.any(String), count: 0 },
      ],
    })
  })
})

describe("editArticle", () => {
  it("should edit by find and replace through the update pipeline, as one revision of the caller's origin", async () => {
    const w = await makeWorld()
    const out = await w.run(editArticle(caller(), "art_2", { edits: [{ find: "two", replace: "2" }], reason: "digits" }, plain))
    expect(out.result.article.body).toBe("<p>one 2 three</p>")
    expect(out.result.revision).toMatchObject({ number: 2, origin: "api", reason: "digits" })
  })

  it("should refuse edits that do not apply, and protected links removed, writing nothing", async () => {
    const w = await makeWorld()
    const missing = await w.exit(editArticle(caller(), "art_2", { edits: [{ find: "four", replace: "4" }] }, plain))
    expect(failureTag(missing)).toBe("EditNotApplicable")
    const removed = await w.exit(
      editArticle(caller(), "art_1", { edits: [{ find: '<a href="https://partner.test/x" data-service-protected="backlink">partner</a>', replace: "" }] }, plain),
    )
    expect(failureTag(removed)).toBe("ProtectedLinkChanged")
    expect((await w.run(getArticle(caller(), "art_1"))).revision).toBe(1)
  })

  it("should refuse a find or replace that a PUT's body would refuse (NUL, unpaired surrogate), naming the edit, writing nothing", async () => {
    const w = await makeWorld()
    for (const dryRun of [false, true]) {
      for (const [edits, paths] of [
        [[{ find: "two", replace: "\ud800" }], ["edits/0/replace"]],
        [[{ find: "two", replace: "a\u0000b" }], ["edits/0/replace"]],
        [[{ find: "one", replace: "1" }, { find: "two", replace: "x\udc00" }], ["edits/1/replace"]],
        // half of a pair found in a body would leave the other half unpaired
        [[{ find: "\ud83d", replace: "x" }], ["edits/0/find"]],
        [[{ find: "t\u0000", replace: "\ud83d" }], ["edits/0/find", "edits/0/replace"]],
      ] as const) {
        const exit = await w.exit(editArticle(caller(), "art_2", { edits }, { dryRun }))
        const error = failureOf(exit) as { _tag: string; errors: ReadonlyArray<{ path: string; message: string }> }
        expect(error._tag, JSON.stringify(edits)).toBe("InvalidRequest")
        expect(error.errors.map((e) => e.path), JSON.stringify(edits)).toEqual(paths)
        expect(error.errors[0]?.message).toMatch(/NUL .*unpaired surrogates/)
      }
    }
    const article = await w.run(getArticle(caller(), "art_2"))
    expect([article.revision, article.body]).toEqual([1, "<p>one two three</p>"])
    // a whole pair is text like any other
    const emoji = await w.run(editArticle(caller(), "art_2", { edits: [{ find: "two", replace: "\ud83d\ude00" }] }, plain))
    expect(emoji.result.article.body).toBe("<p>one \ud83d\ude00 three</p>")
  })

  it("should refuse as a PUT's body would (400, not 413) edits that make the body larger than 1 MiB, and accept 1 MiB exactly", async () => {
    const w = await makeWorld()
    // 1 MiB less one byte of UTF-8
    const big = `<p>x${"a".repeat(MAX_BODY_BYTES - 9)}</p>`
    await w.run(updateArticle(caller(), "art_2", { body: big }, plain))
    const revision = (await w.run(getArticle(caller(), "art_2"))).revision
    for (const dryRun of [true, false]) {
      // "é" is two bytes of UTF-8 and one UTF-16 code unit: 1 MiB and 1 byte
      const over = failureOf(await w.exit(editArticle(caller(), "art_2", { edits: [{ find: "x", replace: "éé" }] }, { dryRun }))) as {
        _tag: string
        detail: string
        errors: ReadonlyArray<{ path: string; message: string }>
      }
      expect(over._tag).toBe("InvalidRequest")
      expect(over.detail).toMatch(/edits would make the body larger than 1 MiB/)
      expect(over.errors).toEqual([{ path: "body", message: expect.stringMatching(/larger than 1 MiB/) }])
    }
    expect((await w.run(getArticle(caller(), "art_2"))).revision).toBe(revision)
    const exact = await w.run(editArticle(caller(), "art_2", { edits: [{ find: "x", replace: "é" }] }, plain))
    expect(new TextEncoder().encode(exact.result.article.body).byteLength).toBe(MAX_BODY_BYTES)
    expect(exact.result.revision?.number).toBe(revision + 1)
  })

  it("should answer PreconditionFailed for a stale if_revision and refuse a read-only caller", async () => {
    const w = await makeWorld()
    const stale = await w.exit(editArticle(caller(), "art_2", { edits: [{ find: "two", replace: "2" }] }, { dryRun: false, expectedRevisions: [5] }))
    expect(failureOf(stale)).toMatchObject({ _tag: "PreconditionFailed", expected: [5], current: 1 })
    const none = await w.exit(editArticle(caller(), "art_2", { edits: [{ find: "two", replace: "2" }] }, { dryRun: false, expectedRevisions: [] }))
    expect(failureOf(none)).toMatchObject({ _tag: "PreconditionFailed", expected: [], current: 1 })
    const any = await w.run(editArticle(caller(), "art_2", { edits: [{ find: "two", replace: "2" }] }, { dryRun: false, expectedRevisions: [4, 1] }))
    expect(any.result.revision?.number).toBe(2)
    const restore = await w.exit(restoreRevision(caller(), "art_2", 1, undefined, { expectedRevisions: [] }))
    expect(failureOf(restore)).toMatchObject({ _tag: "PreconditionFailed", expected: [], current: 2 })
    const restored = await w.run(restoreRevision(caller(), "art_2", 1, undefined, { expectedRevisions: [1, 2] }))
    expect(restored.result.revision?.restored_from).toBe(1)
    const ro = await w.exit(editArticle({ ...caller(), scope: "read-only" }, "art_2", { title: "x" }, plain))
    expect(failureTag(ro)).toBe("InsufficientScope")
  })
})

// Paragraphs of distinct fresh words, so that what an edit changes is known exactly.
const paragraphs = fc.uniqueArray(fc.stringMatching(/^[a-z]{3,8}$/), { minLength: 4, maxLength: 30 }).map((words) => {
  const out: Array<Array<string>> = []
  for (let i = 0; i < words.length; i += 4) out.push(words.slice(i, i + 4))
  return out
})

describe("agent editing properties", () => {
  it("should show in the diff exactly the words the edits replaced", async () => {
    const w = await makeWorld()
    let article = 0
    await fc.assert(
      fc.asyncProperty(paragraphs, fc.array(fc.nat(), { minLength: 1, maxLength: 4 }), async (blocks, picks) => {
        const id = "art_2"
        const body = blocks.map((words) => `<p>${words.join(" ")}</p>`).join("")
        const start = (await w.run(updateArticle(caller(), id, { body }, plain))).result.article
        const words = blocks.flat()
        const chosen = [...new Set(picks.map((n) => words[n % words.length]!))]
        // A word with the delimiters around it (a space or its paragraph's tag) occurs exactly once.
        const edits = chosen.map((word, i) => {
          const block = blocks.find((b) => b.includes(word))!
          const j = block.indexOf(word)
          const before = j === 0 ? "<p>" : " "
          const after = j === block.length - 1 ? "</p>" : " "
          return { find: `${before}${word}${after}`, replace: `${before}new${article}x${i} more${i}${after}` }
        })
        article++
        const edited = await w.run(editArticle(caller(), id, { edits }, plain))
        const diff = await w.run(diffRevisions(caller(), id, start.revision, undefined))
        expect(diff.to).toBe(edited.result.article.revision)
        expect(diff.body.removed_words).toBe(chosen.length)
        expect(diff.body.added_words).toBe(2 * chosen.length)
        const changedLines = new Set(chosen.map((word) => blocks.findIndex((b) => b.includes(word))))
        expect(diff.body.unified.split("\n").filter((l) => l.startsWith("-<p>"))).toHaveLength(changedLines.size)
        expect(diff.body.unified.split("\n").filter((l) => l.startsWith("+<p>"))).toHaveLength(changedLines.size)
      }),
      { numRuns: 40 },
    )
  })

  it("should bring back revision n's title and body when revision n is restored", async () => {
    const w = await makeWorld()
    await fc.assert(
      fc.asyncProperty(fc.array(fc.stringMatching(/^[a-z ]{1,20}$/), { minLength: 1, maxLength: 5 }), fc.nat(), async (texts, pick) => {
        for (const text of texts) await w.run(updateArticle(caller(), "art_2", { body: `<p>x ${text}</p>`, title: `T ${text}` }, plain))
        const current = await w.run(getArticle(caller(), "art_2"))
        const n = 1 + (pick % current.revision)
        const target = await w.run(getRevision(caller(), "art_2", n))
        const out = await w.run(restoreRevision(caller(), "art_2", n, undefined))
        const after = await w.run(getArticle(caller(), "art_2"))
        expect(after.body).toBe(target.body)
        expect(after.title).toBe(target.title)
        if (out.result.revision !== null) expect(out.result.revision.restored_from).toBe(n)
        else expect(current.body === target.body && current.title === target.title).toBe(true)
      }),
      { numRuns: 40 },
    )
  })

  it("should never let PATCH or restore remove a protected link", async () => {
    const w = await makeWorld()
    const link = '<a href="https://partner.test/x" data-service-protected="backlink">partner</a>'
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: link.length }), fc.integer({ min: 0, max: link.length }), fc.string({ maxLength: 5 }), async (len, at, replace) => {
        const start = Math.min(at, link.length - len)
        const find = link.slice(start, start + len)
        const body = (await w.run(getArticle(caller(), "art_1"))).body
        const exit = await w.exit(editArticle(caller(), "art_1", { edits: [{ find: body.includes(`${find}`) && body.split(find).length === 2 ? find : link, replace }] }, plain))
        const after = await w.run(getArticle(caller(), "art_1"))
        expect(after.protected_links).toContainEqual({ type: "backlink", href: "https://partner.test/x", text: "partner" })
        if (exit._tag === "Failure") expect(["ProtectedLinkChanged", "EditNotApplicable"]).toContain(failureTag(exit))
      }),
      { numRuns: 60 },
    )
    expect(failureTag(await w.exit(restoreRevision(caller(), "art_1", 1, undefined)))).not.toBe("ProtectedLinkChanged")
  })
})

describe("diffs and restores through the HtmlAnalyzer port", () => {
  it("should compare two revisions where the analyzer runs, as one comparison saying its granularity", async () => {
    const seen: Array<string> = []
    const w = await makeWorld({}, new Map(), recordingHtmlAnalyzer(seen))
    await w.run(updateArticle(caller(), "art_2", { body: "<p>one 2 three</p>" }, plain))
    const diff = await w.run(diffRevisions(caller(), "art_2", 1, undefined))
    expect(diff.body).toMatchObject({ added_words: 1, removed_words: 1, granularity: "word", note: null })
    expect(seen.filter((s) => s.startsWith("compare: "))).toEqual(["compare: <p>one two three</p> | <p>one 2 three</p>"])
  })

  it("should read both bodies of a restore where the analyzer runs, after the precondition", async () => {
    const seen: Array<string> = []
    const w = await makeWorld({}, new Map(), recordingHtmlAnalyzer(seen))
    await w.run(updateArticle(caller(), "art_2", { body: "<p>one 2 three</p>" }, plain))
    seen.length = 0
    const stale = await w.exit(restoreRevision(caller(), "art_2", 1, undefined, { expectedRevisions: [7] }))
    expect(failureTag(stale)).toBe("PreconditionFailed")
    expect(seen).toEqual([])
    const out = await w.run(restoreRevision(caller(), "art_2", 1, undefined))
    expect(out.result.article).toMatchObject({ body: "<p>one two three</p>", "word count": 3 })
    expect(seen).toContain("readStored: <p>one two three</p>")
  })

  it("should refuse a restore or an edit that hides a protected link (kind hidden)", async () => {
    const w = await makeWorld()
    const link = '<a href="https://partner.test/x" data-service-protected="backlink">partner</a>'
    const edit = await w.exit(editArticle(caller(), "art_1", { edits: [{ find: link, replace: `<del>${link}</del>` }] }, plain))
    expect(failureOf(edit)).toMatchObject({ _tag: "ProtectedLinkChanged", blocks: [{ kind: "hidden", href: "https://partner.test/x", text: "partner" }] })
    const summary = await w.run(editArticle(caller(), "art_1", { edits: [{ find: link, replace: `<details><summary>${link}</summary>more</details>` }] }, plain))
    expect(summary.result.revision?.number).toBe(2)
    const hidden = await w.exit(
      editArticle(caller(), "art_1", { edits: [{ find: `<summary>${link}</summary>more`, replace: `<summary>more</summary>${link}` }] }, plain),
    )
    expect(failureOf(hidden)).toMatchObject({ blocks: [{ kind: "hidden" }] })
  })
})

describe("editArticle through the HtmlAnalyzer port", () => {
  it("should make the edits where the analyzer runs, after the precondition", async () => {
    const seen: Array<string> = []
    const w = await makeWorld({}, new Map(), recordingHtmlAnalyzer(seen))
    const stale = await w.exit(editArticle(caller(), "art_2", { edits: [{ find: "two", replace: "2" }] }, { dryRun: false, expectedRevisions: [7] }))
    expect(failureTag(stale)).toBe("PreconditionFailed")
    expect(seen).toEqual([])
    await w.run(editArticle(caller(), "art_2", { edits: [{ find: "two", replace: "2" }] }, plain))
    expect(seen[0]).toBe("applyEdits: 1")
  })
})

describe("learnProtectedBlocks", () => {
  it("should read an unknown stored body's protected links where the analyzer runs, once", async () => {
    const seen: Array<string> = []
    const w = await makeWorld({}, new Map(), recordingHtmlAnalyzer(seen))
    const body = `<p><a href="https://learn.test/${Date.now()}" data-service-protected="backlink">learn</a></p>`
    await w.run(learnProtectedBlocks(body, "acc_a"))
    await w.run(learnProtectedBlocks(body, "acc_a"))
    await w.run(learnProtectedBlocks("<p>no links</p>", "acc_a"))
    expect(seen).toEqual([`readStored: ${body}`])
  })
})
