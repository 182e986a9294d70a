import { Effect } from "effect"
import { ArticleWriter } from "../../src/ports/ArticleWriter.ts"
import { ImageFetcher } from "../../src/ports/Media.ts"
import { describe, expect, it } from "vitest"
import {
  editArticle,
  getArticle,
  listActivity,
  listRevisions,
  type ProtectedLinkChanged,
  replaceFeaturedImage,
  restoreRevision,
  toProblem,
  updateArticle,
  type DailyEditLimit,
  type PreconditionFailed,
  DailyEditLimit as DailyEditLimitError,
  RateLimited as RateLimitedError,
  Unavailable as UnavailableError,
} from "../../src/index.ts"
import { caller, failureOf, failureTag, makeWorld, NOW, pngHeader, recordingHtmlAnalyzer } from "./harness.ts"

const plain = { dryRun: false }

describe("updateArticle", () => {
  it("should check the article (scope, existence, owner, revision) before any HTML work", async () => {
    const seen: Array<string> = []
    const w = await makeWorld({}, new Map(), recordingHtmlAnalyzer(seen))
    const body = "<p><b><i><u>".repeat(1000)
    const refusals = await Promise.all([
      w.exit(updateArticle(caller({ scope: "read-only" }), "art_1", { body }, { dryRun: true })),
      w.exit(updateArticle(caller(), "art_missing", { body }, { dryRun: true })),
      w.exit(updateArticle(caller(), "art_missing", { body }, plain)),
      w.exit(updateArticle(caller(), "art_b", { body }, plain)),
      w.exit(updateArticle(caller(), "art_2", { body }, { dryRun: false, expectedRevisions: [7] })),
    ])
    expect(refusals.map(failureTag)).toEqual(["InsufficientScope", "NotFound", "NotFound", "NotFound", "PreconditionFailed"])
    expect(seen).toEqual([])
    await w.run(updateArticle(caller(), "art_2", { body: "<p>ok</p>" }, plain))
    expect(seen).toContain("<p>ok</p>")
  })

  it("should refuse with PayloadTooLarge a body whose sanitised form is over 1 MiB, and write nothing", async () => {
    const w = await makeWorld()
    const exit = await w.exit(updateArticle(caller(), "art_2", { body: "<p><b><i><u>".repeat(20_000) }, plain))
    expect(failureTag(exit)).toBe("PayloadTooLarge")
    expect((await w.run(getArticle(caller(), "art_2"))).revision).toBe(1)
  })

  it("should sanitise the body, keep protected blocks, and write one api revision", async () => {
    const w = await makeWorld()
    const before = await w.run(getArticle(caller(), "art_1"))
    const body = `${before.body}<p>More <script>alert(1)</script>words here</p>`
    const out = await w.run(updateArticle(caller(), "art_1", { body, reason: "expand" }, plain))
    expect(out.result.article.body).not.toContain("script")
    expect(out.result.sanitized.changed).toBe(true)
    expect(out.result.sanitized.removed).toContainEqual({ what: "script", count: 1 })
    expect(out.result.revision).toMatchObject({ number: 2, origin: "api", reason: "expand", restored_from: null })
    expect(out.result.article.revision).toBe(2)
    expect(out.editsRemaining).toBe(199)
  })

  it("should tag revisions by channel: mcp and editor", async () => {
    const w = await makeWorld()
    const m = await w.run(updateArticle(caller({ channel: "mcp" }), "art_2", { title: "By MCP" }, plain))
    const e = await w.run(updateArticle(caller({ channel: "web" }), "art_2", { title: "By editor" }, plain))
    expect([m.result.revision?.origin, e.result.revision?.origin]).toEqual(["mcp", "editor"])
  })

  it("should refuse removing a protected link, naming the block, and write nothing", async () => {
    const w = await makeWorld()
    const exit = await w.exit(updateArticle(caller(), "art_1", { body: "<p>Intro text about gardens.</p>" }, plain))
    const error = failureOf(exit) as ProtectedLinkChanged
    expect(error._tag).toBe("ProtectedLinkChanged")
    expect(error.blocks.map((b) => [b.kind, b.href])).toEqual([
      ["removed", "https://partner.test/x"],
      ["removed", "/internal"],
    ])
    expect((await w.run(getArticle(caller(), "art_1"))).revision).toBe(1)
  })

  it("should refuse a forged protected link", async () => {
    const w = await makeWorld()
    const exit = await w.exit(
      updateArticle(caller(), "art_2", { body: '<p>x <a href="https://evil.test" data-service-protected="backlink">e</a></p>' }, plain),
    )
    expect((failureOf(exit) as ProtectedLinkChanged).blocks.map((b) => b.kind)).toEqual(["forged"])
  })

  it("should make no revision and count no edit for an edit identical to the article", async () => {
    const w = await makeWorld()
    const before = await w.run(getArticle(caller(), "art_1"))
    const out = await w.run(updateArticle(caller(), "art_1", { title: `  ${before.title} `, body: before.body }, plain))
    expect(out.result.revision).toBeNull()
    expect(out.editsRemaining).toBe(200)
    const revs = await w.run(listRevisions(caller(), "art_1", {}))
    expect(revs.pagination.total).toBe(1)
  })

  it("should run every check on a dry run, write nothing and count nothing", async () => {
    const w = await makeWorld()
    const out = await w.run(updateArticle(caller(), "art_2", { title: "Dry", body: "<p>dry</p><script>x</script>" }, { dryRun: true }))
    expect(out.result.dry_run).toBe(true)
    expect(out.result.article).toMatchObject({ title: "Dry", body: "<p>dry</p>", "word count": 1 })
    expect(out.result.sanitized.removed).toEqual([{ what: "script", count: 1 }])
    expect(out.result.revision).toBeNull()
    expect((await w.run(getArticle(caller(), "art_2"))).revision).toBe(1)
    expect(out.editsRemaining).toBe(200)
  })

  it("should fail a dry run with the error the real call would fail with, writing nothing", async () => {
    const w = await makeWorld()
    const removed = failureOf(await w.exit(updateArticle(caller(), "art_1", { body: "<p>gone</p>" }, { dryRun: true }))) as ProtectedLinkChanged
    expect(removed._tag).toBe("ProtectedLinkChanged")
    expect(removed.blocks.map((b) => b.kind)).toEqual(["removed", "removed"])
    const stale = failureOf(await w.exit(updateArticle(caller(), "art_2", { title: "x" }, { dryRun: true, expectedRevisions: [7] })))
    expect(stale._tag).toBe("PreconditionFailed")
    expect((await w.run(getArticle(caller(), "art_1"))).revision).toBe(1)
    expect((await w.run(listRevisions(caller(), "art_1", {}))).pagination.total).toBe(1)
  })

  it("should refuse a stale expected revision with PreconditionFailed", async () => {
    const w = await makeWorld()
    await w.run(updateArticle(caller(), "art_2", { title: "Second" }, plain))
    const error = failureOf(await w.exit(updateArticle(caller(), "art_2", { title: "Third" }, { dryRun: false, expectedRevisions: [1] }))) as PreconditionFailed
    expect([error._tag, error.expected, error.current]).toEqual(["PreconditionFailed", [1], 2])
    expect(toProblem(error, "req_1", "https://cs.test").detail).toMatch(/revision 2, not 1:/)
    const ok = await w.run(updateArticle(caller(), "art_2", { title: "Third" }, { dryRun: false, expectedRevisions: [2] }))
    expect(ok.result.revision?.number).toBe(3)
  })

  it("should apply when the article is at any one of the expected revisions, and never when none is named", async () => {
    const w = await makeWorld()
    // If-Match: "art_2-r3", "art_2-r1" at revision 1
    const ok = await w.run(updateArticle(caller(), "art_2", { title: "Second" }, { dryRun: false, expectedRevisions: [3, 1] }))
    expect(ok.result.revision?.number).toBe(2)
    const stale = failureOf(await w.exit(updateArticle(caller(), "art_2", { title: "x" }, { dryRun: true, expectedRevisions: [3, 1] }))) as PreconditionFailed
    expect([stale.expected, stale.current]).toEqual([[3, 1], 2])
    expect(toProblem(stale, "req_1", "https://cs.test").detail).toMatch(/revision 2, not 3 or 1:/)
    // tags of another article, weak tags or a revision past any number: nothing can match
    for (const dryRun of [true, false]) {
      const none = failureOf(await w.exit(updateArticle(caller(), "art_2", { title: "x" }, { dryRun, expectedRevisions: [] }))) as PreconditionFailed
      expect([none._tag, none.expected, none.current]).toEqual(["PreconditionFailed", [], 2])
      const detail = toProblem(none, "req_1", "https://cs.test").detail
      expect(detail).toMatch(/names no revision of this article/)
      expect(detail).not.toMatch(/not 0|not\s*:/)
    }
    expect((await w.run(getArticle(caller(), "art_2"))).revision).toBe(2)
  })

  it("should refuse a read-only key", async () => {
    const w = await makeWorld()
    expect(failureTag(await w.exit(updateArticle(caller({ scope: "read-only" }), "art_2", { title: "x" }, plain)))).toBe("InsufficientScope")
  })

  it("should refuse another account's article as NotFound", async () => {
    const w = await makeWorld()
    expect(failureTag(await w.exit(updateArticle(caller(), "art_b", { title: "x" }, plain)))).toBe("NotFound")
  })

  it("should keep revision numbers gapless and unique under concurrent edits", async () => {
    const w = await makeWorld()
    const edits = Array.from({ length: 20 }, (_, i) => updateArticle(caller(), "art_2", { title: `Title ${i}` }, plain))
    const results = await w.run(Effect.all(edits, { concurrency: "unbounded" }))
    const numbers = results.map((r) => r.result.revision?.number).sort((a, b) => (a ?? 0) - (b ?? 0))
    expect(numbers).toEqual(Array.from({ length: 20 }, (_, i) => i + 2))
    const revs = await w.run(listRevisions(caller(), "art_2", { per_page: 100 }))
    expect(revs.data.map((r) => r.number)).toEqual(Array.from({ length: 21 }, (_, i) => 21 - i))
  })

  it("should write the change's activity entry with the change, once", async () => {
    const w = await makeWorld()
    const c = caller({ action: "PUT /api/v1/articles/{id}" })
    await w.run(updateArticle(c, "art_2", { title: "Logged" }, plain))
    const log = await w.run(listActivity(caller(), {}))
    const entries = log.data.filter((e) => e.request_id === c.requestId)
    expect(entries).toHaveLength(1)
    expect(entries[0]).toMatchObject({ status: 200, channel: "api", article_id: "art_2", site_id: "site_a" })
  })
})

describe("daily edit limit", () => {
  it("should refuse the edit past the limit with seconds to UTC midnight, and reset the next day", async () => {
    const w = await makeWorld({ dailyEdits: 2 })
    await w.run(updateArticle(caller(), "art_2", { title: "one" }, plain))
    const second = await w.run(updateArticle(caller(), "art_2", { title: "two" }, plain))
    expect(second.editsRemaining).toBe(0)
    const error = failureOf(await w.exit(updateArticle(caller(), "art_2", { title: "three" }, plain))) as DailyEditLimit
    expect([error._tag, error.limit, error.retryAfterSeconds]).toEqual(["DailyEditLimit", 2, 12 * 3600])
    expect((await w.run(getArticle(caller(), "art_2"))).title).toBe("two")
    w.clock.set(NOW + 12 * 3600 * 1000)
    const next = await w.run(updateArticle(caller(), "art_2", { title: "three" }, plain))
    expect(next.result.revision?.number).toBe(4)
  })

  it("should count featured images and restores as edits", async () => {
    const png = pngHeader(10, 10)
    const w = await makeWorld({ dailyEdits: 2 })
    await w.run(replaceFeaturedImage(caller(), "art_2", { kind: "bytes", bytes: png }, "alt"))
    await w.run(restoreRevision(caller({ channel: "web" }), "art_2", 1, undefined))
    expect(failureTag(await w.exit(updateArticle(caller(), "art_2", { title: "x" }, plain)))).toBe("DailyEditLimit")
  })

  it("should refuse a featured image at another revision than expected (If-Match, if_revision) without storing its file", async () => {
    const w = await makeWorld({})
    await w.run(replaceFeaturedImage(caller(), "art_2", { kind: "bytes", bytes: pngHeader(10, 10) }, "alt", { expectedRevisions: [1] }))
    expect(w.state.media.size).toBe(1)
    expect(failureTag(await w.exit(replaceFeaturedImage(caller(), "art_2", { kind: "bytes", bytes: pngHeader(20, 20) }, "again", { expectedRevisions: [1] })))).toBe(
      "PreconditionFailed",
    )
    expect(w.state.media.size).toBe(1)
    expect((await w.run(getArticle(caller(), "art_2"))).revision).toBe(2)
  })

  it("should refuse a featured image past the limit without storing its file", async () => {
    const w = await makeWorld({ dailyEdits: 1 })
    await w.run(replaceFeaturedImage(caller(), "art_2", { kind: "bytes", bytes: pngHeader(10, 10) }, "alt"))
    expect(w.state.media.size).toBe(1)
    for (let i = 0; i < 3; i++) {
      expect(failureTag(await w.exit(replaceFeaturedImage(caller(), "art_2", { kind: "bytes", bytes: pngHeader(20, 20) }, "again")))).toBe("DailyEditLimit")
    }
    // a refused change references no image: none was kept for it
    expect(w.state.media.size).toBe(1)
    expect((await w.run(getArticle(caller(), "art_2"))).revision).toBe(2)
  })

  it("should refuse a featured image past the limit before fetching or decoding it", async () => {
    const w = await makeWorld({ dailyEdits: 1 })
    await w.run(replaceFeaturedImage(caller(), "art_2", { kind: "bytes", bytes: pngHeader(10, 10) }, "alt"))
    // neither fetched (no such image to fetch) nor decoded (no image at all): refused for the limit first
    expect(failureTag(await w.exit(replaceFeaturedImage(caller(), "art_2", { kind: "url", url: "https://img.test/never-fetched.png" }, "alt")))).toBe("DailyEditLimit")
    expect(failureTag(await w.exit(replaceFeaturedImage(caller(), "art_2", { kind: "bytes", bytes: new TextEncoder().encode("not an image") }, "alt")))).toBe("DailyEditLimit")
  })
})

describe("replaceFeaturedImage", () => {
  it("should store a valid image and reference it from the article as a revision", async () => {
    const w = await makeWorld()
    const out = await w.run(replaceFeaturedImage(caller(), "art_2", { kind: "bytes", bytes: pngHeader(800, 600) }, "A tulip"))
    expect(out.result.article["featured image"]?.url).toMatch(/^https:\/\/cs\.test\/media\/.+\.png$/)
    expect(out.result.article["featured image"]?.alt).toBe("A tulip")
    expect(out.result.revision?.number).toBe(2)
  })

  it("should refuse bytes that are not an accepted image, and images over 8000 px a side", async () => {
    const w = await makeWorld()
    const svg = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"></svg>')
    expect(failureTag(await w.exit(replaceFeaturedImage(caller(), "art_2", { kind: "bytes", bytes: svg }, undefined)))).toBe("UnsupportedImage")
    expect(failureTag(await w.exit(replaceFeaturedImage(caller(), "art_2", { kind: "bytes", bytes: pngHeader(8001, 10) }, undefined)))).toBe("PayloadTooLarge")
    expect((await w.run(getArticle(caller(), "art_2"))).revision).toBe(1)
  })

  it("should fetch by URL through the fetcher port", async () => {
    const w = await makeWorld({}, new Map([["https://img.test/a.png", pngHeader(5, 5)]]))
    const out = await w.run(replaceFeaturedImage(caller(), "art_2", { kind: "url", url: "https://img.test/a.png" }, undefined))
    expect(out.result.revision?.number).toBe(2)
    expect(failureTag(await w.exit(replaceFeaturedImage(caller(), "art_2", { kind: "url", url: "http://img.test/a.png" }, undefined)))).toBe("UnsafeUrl")
  })

  it("should fetch for the caller's account and pass on the fetcher's refusal of that account", async () => {
    const w = await makeWorld()
    const owners: Array<string> = []
    const busyAccount = Effect.provideService(ImageFetcher, {
      fetch: (_url, owner) => (owners.push(owner), Effect.fail(new RateLimitedError({ limit: 2, retryAfterSeconds: 1, counted: "image fetches" }))),
    })
    const refused = await w.exit(replaceFeaturedImage(caller(), "art_2", { kind: "url", url: "https://img.test/a.png" }, undefined).pipe(busyAccount))
    expect(failureTag(refused)).toBe("RateLimited")
    expect(owners).toEqual(["acc_a"])
    expect(w.state.media.size).toBe(0)
  })

  it("should remove the stored image when the change naming it is refused, and keep it when the database's answer is unknown", async () => {
    const w = await makeWorld()
    const refusing = (error: DailyEditLimit | UnavailableError) =>
      Effect.provideService(ArticleWriter, { change: () => Effect.fail(error), editsUsed: () => Effect.succeed(0) })
    const limit = new DailyEditLimitError({ limit: 200, retryAfterSeconds: 60 })
    const refused = await w.exit(replaceFeaturedImage(caller(), "art_2", { kind: "bytes", bytes: pngHeader(10, 10) }, "alt").pipe(refusing(limit)))
    expect(failureTag(refused)).toBe("DailyEditLimit")
    expect(w.state.media.size).toBe(0)
    // the commit may have landed: the file stays for the revision that may name it
    const unknown = await w.exit(replaceFeaturedImage(caller(), "art_2", { kind: "bytes", bytes: pngHeader(10, 10) }, "alt").pipe(refusing(new UnavailableError({ detail: "gone" }))))
    expect(failureTag(unknown)).toBe("Unavailable")
    expect(w.state.media.size).toBe(1)
  })

  it("should answer a missing article with NotFound before fetching anything", async () => {
    const w = await makeWorld({}, new Map([["https://img.test/a.png", pngHeader(5, 5)]]))
    expect(failureTag(await w.exit(replaceFeaturedImage(caller(), "art_missing", { kind: "url", url: "http://img.test/a.png" }, undefined)))).toBe("NotFound")
  })
})

describe("restoreRevision", () => {
  it("should restore an earlier version as a new editor revision with restored_from", async () => {
    const w = await makeWorld()
    await w.run(updateArticle(caller(), "art_2", { title: "Changed", body: "<p>new words</p>" }, plain))
    const out = await w.run(restoreRevision(caller({ channel: "web", actor: { type: "user", id: "acc_a", name: "Alice" } }), "art_2", 1, undefined))
    expect(out.result.revision).toMatchObject({ number: 3, origin: "editor", restored_from: 1 })
    expect(out.result.article).toMatchObject({ title: "Tulips", body: "<p>one two three</p>", "word count": 3 })
  })

  it("should refuse a restore that would remove a protected block of the current body", async () => {
    const w = await makeWorld()
    const current = await w.run(getArticle(caller(), "art_2"))
    await w.run(
      updateArticle(caller(), "art_2", { body: `${current.body}` }, plain),
    )
    // Give the article a protected block through the platform (import), then try to restore the version without it.
    const record = w.state.articles.get("art_2")!
    const withBlock = `${record.body}<p><a href="https://x.test" data-service-protected="backlink">x</a></p>`
    w.state.articles.set("art_2", { ...record, body: withBlock, revision: 2 })
    w.state.revisions.set("art_2#2", { ...w.state.revisions.get("art_2#1")!, number: 2, body: withBlock, id: "rev_x" })
    const error = failureOf(await w.exit(restoreRevision(caller({ channel: "web" }), "art_2", 1, undefined))) as ProtectedLinkChanged
    expect(error._tag).toBe("ProtectedLinkChanged")
    expect(error.blocks.map((b) => b.kind)).toEqual(["removed"])
  })

  it("should answer a missing revision with NotFound", async () => {
    const w = await makeWorld()
    expect(failureTag(await w.exit(restoreRevision(caller({ channel: "web" }), "art_2", 7, undefined)))).toBe("NotFound")
  })
})

describe("If-None-Match on writes (unexpectedRevisions)", () => {
  it("should refuse an edit when the article is at a revision If-None-Match names, or for *, writing and counting nothing", async () => {
    const w = await makeWorld({ dailyEdits: 5 })
    for (const unexpectedRevisions of [[1], [3, 1], "*"] as const) {
      for (const dryRun of [true, false]) {
        const error = failureOf(await w.exit(updateArticle(caller(), "art_2", { title: "x" }, { dryRun, unexpectedRevisions }))) as PreconditionFailed
        expect([error._tag, error.current, error.noneMatch]).toEqual(["PreconditionFailed", 1, unexpectedRevisions])
        expect(toProblem(error, "req_1", "https://cs.test").detail).toMatch(/If-None-Match/)
      }
    }
    const article = await w.run(getArticle(caller(), "art_2"))
    expect([article.revision, article.title]).toEqual([1, "Tulips"])
    const ok = await w.run(updateArticle(caller(), "art_2", { title: "Second" }, plain))
    expect(ok.editsRemaining).toBe(4)
  })

  it("should apply an edit when If-None-Match names other revisions only", async () => {
    const w = await makeWorld()
    const ok = await w.run(updateArticle(caller(), "art_2", { title: "Second" }, { dryRun: false, unexpectedRevisions: [2, 7] }))
    expect(ok.result.revision?.number).toBe(2)
    const none = await w.run(updateArticle(caller(), "art_2", { title: "Third" }, { dryRun: false, unexpectedRevisions: [] }))
    expect(none.result.revision?.number).toBe(3)
  })

  it("should check If-Match before If-None-Match", async () => {
    const w = await makeWorld()
    // If-Match fails: its error, not If-None-Match's
    const stale = failureOf(await w.exit(updateArticle(caller(), "art_2", { title: "x" }, { dryRun: false, expectedRevisions: [7], unexpectedRevisions: "*" }))) as PreconditionFailed
    expect([stale.expected, stale.current, stale.noneMatch]).toEqual([[7], 1, undefined])
    // If-Match holds, If-None-Match names the same revision: refused by If-None-Match
    const both = failureOf(await w.exit(updateArticle(caller(), "art_2", { title: "x" }, { dryRun: false, expectedRevisions: [1], unexpectedRevisions: [1] }))) as PreconditionFailed
    expect([both.current, both.noneMatch]).toEqual([1, [1]])
    expect((await w.run(getArticle(caller(), "art_2"))).revision).toBe(1)
  })

  it("should refuse a refused If-None-Match before the daily edit limit", async () => {
    const w = await makeWorld({ dailyEdits: 1 })
    await w.run(updateArticle(caller(), "art_2", { title: "one" }, plain))
    expect(failureTag(await w.exit(updateArticle(caller(), "art_2", { title: "two" }, { dryRun: false, unexpectedRevisions: "*" })))).toBe("PreconditionFailed")
  })

  it("should answer PreconditionFailed, not a merge or a retry, for a PATCH and a merged PUT at a revision If-None-Match names", async () => {
    const w = await makeWorld()
    await w.run(updateArticle(caller(), "art_2", { title: "Second" }, plain))
    const patch = failureOf(await w.exit(editArticle(caller(), "art_2", { edits: [{ find: "two", replace: "2" }] }, { dryRun: false, unexpectedRevisions: [2] })))
    expect(patch).toMatchObject({ _tag: "PreconditionFailed", current: 2, noneMatch: [2] })
    const merged = failureOf(await w.exit(updateArticle(caller(), "art_2", { body: "<p>one two three 4</p>", base_revision: 1 }, { dryRun: false, unexpectedRevisions: "*" })))
    expect(merged).toMatchObject({ _tag: "PreconditionFailed", current: 2, noneMatch: "*" })
    expect((await w.run(getArticle(caller(), "art_2"))).revision).toBe(2)
    const ok = await w.run(editArticle(caller(), "art_2", { edits: [{ find: "two", replace: "2" }] }, { dryRun: false, unexpectedRevisions: [1] }))
    expect(ok.result.revision?.number).toBe(3)
  })

  it("should refuse a restore and a featured image at a revision If-None-Match names, storing no file", async () => {
    const w = await makeWorld()
    await w.run(updateArticle(caller(), "art_2", { title: "Second" }, plain))
    expect(failureOf(await w.exit(restoreRevision(caller(), "art_2", 1, undefined, { unexpectedRevisions: [2] })))).toMatchObject({ _tag: "PreconditionFailed", noneMatch: [2] })
    const image = await w.exit(replaceFeaturedImage(caller(), "art_2", { kind: "bytes", bytes: pngHeader(10, 10) }, "alt", { unexpectedRevisions: "*" }))
    expect(failureOf(image)).toMatchObject({ _tag: "PreconditionFailed", noneMatch: "*" })
    expect(w.state.media.size).toBe(0)
    expect((await w.run(getArticle(caller(), "art_2"))).revision).toBe(2)
    const restored = await w.run(restoreRevision(caller(), "art_2", 1, undefined, { unexpectedRevisions: [1] }))
    expect(restored.result.revision?.number).toBe(3)
    const replaced = await w.run(replaceFeaturedImage(caller(), "art_2", { kind: "bytes", bytes: pngHeader(10, 10) }, "alt", { unexpectedRevisions: [2] }))
    expect(replaced.result.revision?.number).toBe(4)
  })
})
