/**
 * The smaller rules of PUT, PATCH, merge and restore that a mutation run found unasserted: dry runs
 * at the daily limit, no HTML work for a title-only edit, the merge's reasons and refusals, the
 * refusals' words.
 */
import { describe, expect, it } from "vitest"
import { editArticle, type EditConflict, getArticle, listActivity, restoreRevision, updateArticle } from "../../src/index.ts"
import { MAX_REASON_LENGTH } from "../../src/schema/writes.ts"
import { caller, failureOf, makeWorld, recordingHtmlAnalyzer } from "./harness.ts"

const plain = { dryRun: false }
const dry = { dryRun: true }
const noReport = { changed: false, removed: [] }

describe("updateArticle: dry runs and the daily limit", () => {
  it("should answer a dry run of a change with no edits left today with DailyEditLimit, and a dry run that changes nothing with the article", async () => {
    const w = await makeWorld({ dailyEdits: 1 })
    await w.run(updateArticle(caller(), "art_2", { title: "Used the one edit" }, plain))
    expect(failureOf(await w.exit(updateArticle(caller(), "art_2", { title: "Another" }, dry)))).toMatchObject({ _tag: "DailyEditLimit", limit: 1, retryAfterSeconds: 43_200 })
    const same = await w.run(updateArticle(caller(), "art_2", { title: "Used the one edit" }, dry))
    expect(same).toEqual({ result: { article: expect.objectContaining({ title: "Used the one edit", revision: 2 }), revision: null, sanitized: noReport, dry_run: true }, editsRemaining: 0 })
  })

  it("should refuse a new body with no edits left today before sanitising it, the dry run alike, and still answer the current body sent again", async () => {
    const seen: Array<string> = []
    const w = await makeWorld({ dailyEdits: 1 }, new Map(), recordingHtmlAnalyzer(seen))
    await w.run(updateArticle(caller(), "art_2", { title: "Used the one edit" }, plain))
    const body = "<p>a new body <script>x()</script></p>"
    for (const options of [plain, dry]) {
      expect(failureOf(await w.exit(updateArticle(caller(), "art_2", { body }, options)))).toMatchObject({ _tag: "DailyEditLimit", limit: 1, retryAfterSeconds: 43_200 })
    }
    // the current body with another title: a change all the same, refused before the body is read
    expect(failureOf(await w.exit(updateArticle(caller(), "art_2", { title: "Another", body: "<p>one two three</p>" }, plain)))).toMatchObject({ _tag: "DailyEditLimit" })
    expect(seen).toEqual([])
    const same = await w.run(updateArticle(caller(), "art_2", { body: "<p>one two three</p>" }, plain))
    expect(same).toMatchObject({ result: { revision: null }, editsRemaining: 0 })
  })

  it("should refuse a restore with no edits left today before reading either body, and still answer restoring the current state", async () => {
    const seen: Array<string> = []
    const w = await makeWorld({ dailyEdits: 1 }, new Map(), recordingHtmlAnalyzer(seen))
    await w.run(updateArticle(caller(), "art_2", { title: "Used the one edit" }, plain))
    expect(failureOf(await w.exit(restoreRevision(caller(), "art_2", 1, undefined)))).toMatchObject({ _tag: "DailyEditLimit", limit: 1, retryAfterSeconds: 43_200 })
    expect(seen).toEqual([])
    expect(await w.run(restoreRevision(caller(), "art_2", 2, undefined))).toMatchObject({ result: { revision: null }, editsRemaining: 0 })
  })

  it("should answer a dry run with the article as the change would leave it, counting nothing", async () => {
    const w = await makeWorld({ dailyEdits: 5 })
    const out = await w.run(updateArticle(caller(), "art_2", { title: "Would be", body: "<p>would be <b>bold</b></p>" }, dry))
    expect(out.result.article).toMatchObject({ title: "Would be", body: "<p>would be <b>bold</b></p>", revision: 1, "word count": 3 })
    expect(out.editsRemaining).toBe(5)
    expect((await w.run(getArticle(caller(), "art_2"))).title).toBe("Tulips")
  })

  it("should not count the platform's dry run against the account's edits of today", async () => {
    const w = await makeWorld({ dailyEdits: 1 })
    await w.run(updateArticle(caller(), "art_2", { title: "Used the one edit" }, plain))
    const out = await w.run(updateArticle(caller({ channel: "platform" }), "art_2", { title: "A rewrite" }, dry))
    expect(out.result).toMatchObject({ article: { title: "A rewrite", revision: 2 }, revision: null, dry_run: true })
  })

  it("should do no HTML work for a title-only edit, and report nothing sanitised", async () => {
    const seen: Array<string> = []
    const w = await makeWorld({}, new Map(), recordingHtmlAnalyzer(seen))
    const out = await w.run(updateArticle(caller(), "art_1", { title: "Roses, renamed" }, plain))
    expect(out.result.sanitized).toStrictEqual(noReport)
    expect(out.result.revision?.number).toBe(2)
    expect(seen).toEqual([])
  })

  it("should record the change's activity entry with an act_ id", async () => {
    const w = await makeWorld()
    await w.run(updateArticle(caller({ action: "PUT /api/v1/articles/{id}" }), "art_2", { title: "Logged" }, plain))
    const log = await w.run(listActivity(caller(), {}))
    expect(log.data[0]).toMatchObject({ action: "PUT /api/v1/articles/{id}", article_id: "art_2" })
    expect(log.data[0]?.id).toMatch(/^act_/)
  })
})

describe("updateArticle with base_revision: reasons and refusals", () => {
  const twoWriters = async () => {
    const w = await makeWorld()
    await w.run(updateArticle(caller(), "art_2", { body: "<p>one</p><p>two</p>" }, plain))
    await w.run(updateArticle(caller({ channel: "mcp" }), "art_2", { body: "<p>ONE</p><p>two</p>" }, plain))
    return w
  }

  it("should say the merge in the reason: alone, after the caller's reason, or after as much of a long reason as fits", async () => {
    const reasons: Array<string | null | undefined> = []
    for (const reason of [undefined, "  ", "fix", "x".repeat(MAX_REASON_LENGTH)]) {
      const w = await twoWriters()
      const out = await w.run(updateArticle(caller(), "art_2", { body: "<p>one</p><p>TWO</p>", base_revision: 2, ...(reason !== undefined ? { reason } : {}) }, plain))
      reasons.push(out.result.revision?.reason)
    }
    const note = " (merged with revision 3)"
    expect(reasons.slice(0, 3)).toEqual(["Merged with revision 3", "Merged with revision 3", `fix${note}`])
    // room for the reason: the limit less the note and its three characters of framing; one of it for "…"
    expect(reasons[3]).toBe(`${"x".repeat(MAX_REASON_LENGTH - "merged with revision 3".length - 3 - 1)}…${note}`)
    expect([...reasons[3]!].length).toBe(MAX_REASON_LENGTH)
  })

  it("should keep whole a reason that just fits beside the merge's note", async () => {
    const w = await twoWriters()
    const fits = "y".repeat(MAX_REASON_LENGTH - "merged with revision 3".length - 3)
    const out = await w.run(updateArticle(caller(), "art_2", { body: "<p>one</p><p>TWO</p>", base_revision: 2, reason: fits }, plain))
    expect(out.result.revision?.reason).toBe(`${fits} (merged with revision 3)`)
  })

  it("should read a title sent with spaces around it as the title it is when merging", async () => {
    const w = await twoWriters()
    await w.run(updateArticle(caller({ channel: "mcp" }), "art_2", { title: "Their title" }, plain))
    // base revision 2's title, sent with spaces: unchanged on this side, so theirs is kept
    const kept = await w.run(updateArticle(caller(), "art_2", { title: "  Tulips ", body: "<p>one</p><p>TWO</p>", base_revision: 2 }, plain))
    expect([kept.result.article.title, kept.result.article.body]).toEqual(["Their title", "<p>ONE</p><p>TWO</p>"])
  })

  it("should make a dry run of an edit whose base is the current revision, writing nothing", async () => {
    const w = await twoWriters()
    const out = await w.run(updateArticle(caller(), "art_2", { title: "Only tried", base_revision: 3 }, dry))
    expect(out.result).toMatchObject({ article: { title: "Only tried", revision: 3 }, revision: null, dry_run: true })
    expect((await w.run(getArticle(caller(), "art_2"))).title).toBe("Tulips")
  })

  it("should report nothing sanitised for a merged title-only edit, and the body's report for a merged body", async () => {
    const w = await twoWriters()
    const out = await w.run(updateArticle(caller(), "art_2", { title: "Merged title", base_revision: 2 }, plain))
    expect(out.result.sanitized).toStrictEqual(noReport)
    expect(out.result.article.title).toBe("Merged title")
    const w2 = await twoWriters()
    const body = await w2.run(updateArticle(caller(), "art_2", { title: "  Trimmed  ", body: "<p>one</p><p>TWO<script>x</script></p>", base_revision: 2 }, plain))
    expect(body.result.sanitized).toStrictEqual({ changed: true, removed: [{ what: "script", count: 1 }] })
    expect(body.result.article.title).toBe("Trimmed")
  })

  it("should refuse base_revision with a precondition, and one newer than the article, naming base_revision", async () => {
    const w = await twoWriters()
    const both = failureOf(await w.exit(updateArticle(caller(), "art_2", { title: "x", base_revision: 2 }, { dryRun: false, expectedRevisions: [3] })))
    expect(both).toMatchObject({ _tag: "InvalidRequest", detail: expect.stringMatching(/^base_revision and If-Match/), errors: [{ path: "base_revision", message: "Not together with If-Match or if_revision" }] })
    const newer = failureOf(await w.exit(updateArticle(caller(), "art_2", { title: "x", base_revision: 4 }, plain)))
    expect(newer).toMatchObject({
      _tag: "InvalidRequest",
      detail: "base_revision 4 is newer than the article, which is at revision 3.",
      errors: [{ path: "base_revision", message: "Expected at most 3, the current revision" }],
    })
  })

  it("should apply an edit whose base is the current revision as a plain edit under that precondition", async () => {
    const w = await twoWriters()
    const out = await w.run(updateArticle(caller(), "art_2", { title: "On top", base_revision: 3 }, plain))
    expect([out.result.revision?.number, out.result.merge]).toEqual([4, undefined])
  })

  it("should say that the merge, not the edit, is over a body's limits when both sides' additions together are", async () => {
    const w = await twoWriters()
    // theirs (revision 4) adds 0.6 MB before; mine, written against 3, adds 0.6 MB after: each within 1 MiB, not both
    const big = (c: string) => `<p>${c.repeat(600_000)}</p>`
    await w.run(updateArticle(caller({ channel: "mcp" }), "art_2", { body: `${big("t")}<p>ONE</p><p>two</p>` }, plain))
    for (const options of [plain, dry]) {
      const refused = failureOf(await w.exit(updateArticle(caller(), "art_2", { body: `<p>ONE</p><p>two</p>${big("m")}`, base_revision: 3 }, options)))
      expect(refused).toMatchObject({ _tag: "PayloadTooLarge", detail: expect.stringMatching(/^Your edit merged with the changes of revision 4 makes a body over a body's limits .* though your edit alone is within them; nothing was changed\./) })
    }
    expect((await w.run(getArticle(caller(), "art_2"))).revision).toBe(4)
  })

  it("should count the conflicting parts in the refusal's words", async () => {
    const w = await twoWriters()
    const one = failureOf(await w.exit(updateArticle(caller(), "art_2", { body: "<p>uno</p><p>two</p>", base_revision: 2 }, plain))) as EditConflict
    expect(one.detail).toMatch(/^Revision 3 changed a part of the article that your edit \(written against revision 2\) changed differently/)
    await w.run(updateArticle(caller({ channel: "mcp" }), "art_2", { title: "Theirs", body: "<p>ONE</p><p>TWO</p>" }, plain))
    const two = failureOf(await w.exit(updateArticle(caller(), "art_2", { title: "Mine", body: "<p>uno</p><p>dos</p>", base_revision: 2 }, plain))) as EditConflict
    // the title, and each of the two blocks both replaced differently
    expect(two.detail).toMatch(/^Revision 4 changed 3 parts of the article/)
  })
})

describe("editArticle: fields and refusals", () => {
  it("should apply a title sent with the edits, and a title sent alone", async () => {
    const w = await makeWorld()
    const both = await w.run(editArticle(caller(), "art_2", { title: "With edits", reason: "why", edits: [{ find: "two", replace: "2" }] }, plain))
    expect(both.result.article).toMatchObject({ title: "With edits", body: "<p>one 2 three</p>" })
    expect(both.result.revision?.reason).toBe("why")
    const alone = await w.run(editArticle(caller(), "art_2", { title: "Alone" }, plain))
    expect(alone.result.article).toMatchObject({ title: "Alone", body: "<p>one 2 three</p>" })
    const bodyOnly = await w.run(editArticle(caller(), "art_2", { edits: [{ find: "three", replace: "3" }] }, plain))
    expect(bodyOnly.result.article).toMatchObject({ title: "Alone", body: "<p>one 2 3</p>" })
  })

  it("should do no HTML work for a title sent without edits, and write it as a PUT of the title would", async () => {
    const seen: Array<string> = []
    const w = await makeWorld({}, new Map(), recordingHtmlAnalyzer(seen))
    const out = await w.run(editArticle(caller(), "art_1", { title: "Roses, renamed", reason: "shorter" }, plain))
    expect(seen).toEqual([])
    expect(out.result).toMatchObject({ revision: { number: 2, reason: "shorter" }, sanitized: noReport, article: { title: "Roses, renamed" } })
  })

  it("should name every unstorable text in the refusal's detail, one after another", async () => {
    const w = await makeWorld()
    const edits = [
      { find: "one", replace: "a\u0000" },
      { find: "two", replace: "2" },
      { find: "three", replace: "b\uD800" },
    ]
    const refused = failureOf(await w.exit(editArticle(caller(), "art_2", { edits }, plain)))
    const why = "Expected text without NUL (U+0000) characters or unpaired surrogates"
    expect(refused).toMatchObject({ _tag: "InvalidRequest", detail: `Edits: edits/0/replace: ${why}; edits/2/replace: ${why}.` })
  })

  it("should name each unstorable text in the refusal's detail, and each find that does not apply", async () => {
    const w = await makeWorld()
    const unstorable = failureOf(await w.exit(editArticle(caller(), "art_2", { edits: [{ find: "two", replace: "a\u0000" }] }, plain)))
    expect(unstorable).toMatchObject({ _tag: "InvalidRequest", detail: "Edits: edits/0/replace: Expected text without NUL (U+0000) characters or unpaired surrogates." })
    const missing = failureOf(await w.exit(editArticle(caller(), "art_2", { edits: [{ find: "four", replace: "4" }] }, plain)))
    expect(missing).toMatchObject({ _tag: "EditNotApplicable", errors: [{ path: "edits/0/find", count: 0 }] })
  })
})

describe("restoreRevision: the reason", () => {
  it("should refuse a reason a revision cannot hold, naming it, and keep one it can", async () => {
    const w = await makeWorld()
    await w.run(updateArticle(caller(), "art_2", { title: "Second" }, plain))
    const refused = failureOf(await w.exit(restoreRevision(caller(), "art_2", 1, "x".repeat(MAX_REASON_LENGTH + 1))))
    expect(refused).toMatchObject({ _tag: "InvalidRequest", detail: expect.stringMatching(/^Restore: reason: /), errors: [expect.objectContaining({ path: "reason" })] })
    const out = await w.run(restoreRevision(caller(), "art_2", 1, "back to the start"))
    expect(out.result.revision).toMatchObject({ reason: "back to the start", restored_from: 1 })
  })
})
