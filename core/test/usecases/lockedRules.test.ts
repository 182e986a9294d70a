/**
 * Rules a use case must apply to the article as it is under the lock, not as it was read before:
 * each race is staged by a hook the test controls (an HtmlAnalyzer that lets another writer in at
 * the moment the use case works outside the lock), never by timing. Also the retry limits, the
 * restore of a title-only difference and a stored body the input limits refuse.
 */
import { inlineHtmlAnalyzer } from "@content-site/memory"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import {
  editArticle,
  getArticle,
  getRevision,
  HtmlAnalyzer,
  listRevisions,
  type ProtectedLinkChanged,
  restoreRevision,
  updateArticle,
} from "../../src/index.ts"
import { caller, failureOf, makeWorld } from "./harness.ts"

const plain = { dryRun: false }
const link = '<a href="https://partner.test/new" data-service-protected="backlink">partner</a>'

type Hooks = { onAnalyze?: (html: string) => Promise<void>; onReadStored?: (html: string) => Promise<void>; onApplyEdits?: () => Promise<void>; onMerge?: () => Promise<void> }

/** The inline analyzer, calling the test's hooks before it does each piece of work. */
const hookedAnalyzer = (hooks: Hooks): Layer.Layer<HtmlAnalyzer> => {
  const inner = Effect.runSync(Effect.provide(HtmlAnalyzer.use((a) => Effect.succeed(a)), inlineHtmlAnalyzer))
  const before = <A, E>(hook: (() => Promise<void>) | undefined, work: Effect.Effect<A, E>) =>
    hook === undefined ? work : Effect.flatMap(Effect.promise(hook), () => work)
  return Layer.succeed(HtmlAnalyzer, {
    ...inner,
    analyze: (html, account) => before(hooks.onAnalyze && (() => hooks.onAnalyze!(html)), inner.analyze(html, account)),
    readStored: (html, account) => before(hooks.onReadStored && (() => hooks.onReadStored!(html)), inner.readStored(html, account)),
    applyEdits: (text, edits, account) => before(hooks.onApplyEdits, inner.applyEdits(text, edits, account)),
    merge: (base, theirs, mine, account) => before(hooks.onMerge, inner.merge(base, theirs, mine, account)),
  })
}

/** A world whose analyzer calls `hooks`; the hooks may use the world (set them after it is made). */
const hookedWorld = async () => {
  const hooks: Hooks = {}
  const w = await makeWorld({}, new Map(), hookedAnalyzer(hooks))
  return { w, hooks }
}

/** What the platform does between a use case's read and its lock: a protected link added to art_2, as a new revision. */
const platformInsertsLink = (w: Awaited<ReturnType<typeof makeWorld>>) => {
  const record = w.state.articles.get("art_2")!
  const body = `${record.body}<p>${link}</p>`
  const revision = record.revision + 1
  w.state.articles.set("art_2", { ...record, body, revision })
  w.state.revisions.set(`art_2#${revision}`, { ...w.state.revisions.get(`art_2#${record.revision}`)!, number: revision, body, id: `rev_platform_${revision}` })
}

describe("the protected-link check under the lock", () => {
  it("should refuse a PUT without If-Match that would delete a link the platform inserted after the body was read", async () => {
    const { w, hooks } = await hookedWorld()
    const sent = "<p>my new text</p>"
    hooks.onAnalyze = async (html) => {
      // the article was read before this (the body had no protected link); the lock comes after
      if (html === sent) platformInsertsLink(w)
    }
    const error = failureOf(await w.exit(updateArticle(caller(), "art_2", { body: sent }, plain))) as ProtectedLinkChanged
    expect(error._tag).toBe("ProtectedLinkChanged")
    expect(error.blocks).toEqual([{ kind: "removed", href: "https://partner.test/new", text: "partner" }])
    expect((await w.run(getArticle(caller(), "art_2"))).body).toContain(link)
  })

  it("should refuse a restore that would delete a link the platform inserted after the bodies were read", async () => {
    const { w, hooks } = await hookedWorld()
    await w.run(updateArticle(caller(), "art_2", { body: "<p>second version</p>" }, plain))
    const target = (await w.run(getRevision(caller(), "art_2", 1))).body
    hooks.onReadStored = async (html) => {
      if (html === target) platformInsertsLink(w)
    }
    const error = failureOf(await w.exit(restoreRevision(caller(), "art_2", 1, undefined))) as ProtectedLinkChanged
    expect(error._tag).toBe("ProtectedLinkChanged")
    expect(error.blocks.map((b) => [b.kind, b.href])).toEqual([["removed", "https://partner.test/new"]])
    expect((await w.run(getArticle(caller(), "art_2"))).body).toContain(link)
  })

  it("should accept an edit that keeps a link inserted after the read, and write it under the newer revision", async () => {
    const { w, hooks } = await hookedWorld()
    const sent = `<p>one two three</p><p>${link}</p><p>more</p>`
    hooks.onAnalyze = async (html) => {
      if (html === sent) platformInsertsLink(w)
    }
    const out = await w.run(updateArticle(caller(), "art_2", { body: sent }, plain))
    expect(out.result.revision?.number).toBe(3)
    expect(out.result.article.body).toBe(sent)
  })
})

describe("retry limits when another writer keeps changing the article", () => {
  it("should apply a PATCH's edits at most three times, then answer EditConflict and write nothing", async () => {
    const { w, hooks } = await hookedWorld()
    let attempts = 0
    hooks.onApplyEdits = async () => {
      attempts++
      await w.run(updateArticle(caller({ channel: "mcp" }), "art_2", { title: `Other writer ${attempts}` }, plain))
    }
    const exit = await w.exit(editArticle(caller(), "art_2", { edits: [{ find: "two", replace: "2" }] }, plain))
    expect(failureOf(exit)).toMatchObject({
      _tag: "EditConflict",
      detail: "The article kept changing while the edits were applied; nothing was changed. Retry.",
    })
    expect(attempts).toBe(3)
    const after = await w.run(getArticle(caller(), "art_2"))
    expect([after.revision, after.title, after.body]).toEqual([4, "Other writer 3", "<p>one two three</p>"])
  })

  it("should apply a PATCH again on the newer body when another writer came in once, and keep both changes", async () => {
    const { w, hooks } = await hookedWorld()
    let attempts = 0
    hooks.onApplyEdits = async () => {
      if (++attempts === 1) await w.run(updateArticle(caller({ channel: "mcp" }), "art_2", { body: "<p>one two three four</p>" }, plain))
    }
    const out = await w.run(editArticle(caller(), "art_2", { edits: [{ find: "two", replace: "2" }] }, plain))
    expect(attempts).toBe(2)
    expect(out.result.article.body).toBe("<p>one 2 three four</p>")
    expect(out.result.revision?.number).toBe(3)
  })

  it("should answer a PATCH with If-Match PreconditionFailed at once when the article changed after it was read", async () => {
    const { w, hooks } = await hookedWorld()
    let attempts = 0
    hooks.onApplyEdits = async () => {
      attempts++
      await w.run(updateArticle(caller({ channel: "mcp" }), "art_2", { title: `Other writer ${attempts}` }, plain))
    }
    const exit = await w.exit(editArticle(caller(), "art_2", { edits: [{ find: "two", replace: "2" }] }, { dryRun: false, expectedRevisions: [1] }))
    expect(failureOf(exit)).toMatchObject({ _tag: "PreconditionFailed", expected: [1], current: 2 })
    expect(attempts).toBe(1)
  })

  it("should refuse a PUT whose If-None-Match names the revision another writer made after the read", async () => {
    const { w, hooks } = await hookedWorld()
    const sent = "<p>my new text</p>"
    hooks.onAnalyze = async (html) => {
      if (html === sent) platformInsertsLink(w)
    }
    const exit = await w.exit(updateArticle(caller(), "art_2", { body: sent }, { dryRun: false, unexpectedRevisions: [2] }))
    expect(failureOf(exit)).toMatchObject({ _tag: "PreconditionFailed", current: 2, noneMatch: [2] })
    expect((await w.run(getArticle(caller(), "art_2"))).revision).toBe(2)
  })

  it("should answer a PATCH with If-None-Match PreconditionFailed when another writer made the revision it names after the read", async () => {
    const { w, hooks } = await hookedWorld()
    let attempts = 0
    hooks.onApplyEdits = async () => {
      attempts++
      if (attempts === 1) await w.run(updateArticle(caller({ channel: "mcp" }), "art_2", { title: "Other writer" }, plain))
    }
    const exit = await w.exit(editArticle(caller(), "art_2", { edits: [{ find: "two", replace: "2" }] }, { dryRun: false, unexpectedRevisions: [2] }))
    expect(failureOf(exit)).toMatchObject({ _tag: "PreconditionFailed", current: 2, noneMatch: [2] })
    expect((await w.run(getArticle(caller(), "art_2"))).revision).toBe(2)
  })

  it("should refuse a restore whose If-None-Match names the revision another writer made after the bodies were read", async () => {
    const { w, hooks } = await hookedWorld()
    await w.run(updateArticle(caller(), "art_2", { title: "Second" }, plain))
    let once = false
    hooks.onReadStored = async () => {
      if (once) return
      once = true
      await w.run(updateArticle(caller({ channel: "mcp" }), "art_2", { title: "Other writer" }, plain))
    }
    const exit = await w.exit(restoreRevision(caller(), "art_2", 1, undefined, { unexpectedRevisions: [3] }))
    expect(failureOf(exit)).toMatchObject({ _tag: "PreconditionFailed", current: 3, noneMatch: [3] })
    expect((await w.run(getArticle(caller(), "art_2"))).revision).toBe(3)
  })

  it("should merge at most three times, then answer EditConflict and write nothing", async () => {
    const { w, hooks } = await hookedWorld()
    await w.run(updateArticle(caller(), "art_2", { body: "<p>one</p><p>two</p>" }, plain))
    await w.run(updateArticle(caller({ channel: "mcp" }), "art_2", { body: "<p>ONE</p><p>two</p>" }, plain))
    let merges = 0
    hooks.onMerge = async () => {
      merges++
      await w.run(updateArticle(caller({ channel: "mcp" }), "art_2", { title: `Other writer ${merges}` }, plain))
    }
    const exit = await w.exit(updateArticle(caller(), "art_2", { body: "<p>one</p><p>TWO</p>", base_revision: 2 }, plain))
    expect(failureOf(exit)).toMatchObject({ _tag: "EditConflict", detail: expect.stringContaining("kept changing") })
    expect(merges).toBe(3)
    expect((await w.run(getArticle(caller(), "art_2"))).body).toBe("<p>ONE</p><p>two</p>")
  })

  it("should merge again when another writer came in once, and keep all three changes", async () => {
    const { w, hooks } = await hookedWorld()
    await w.run(updateArticle(caller(), "art_2", { body: "<p>one</p><p>two</p>" }, plain))
    await w.run(updateArticle(caller({ channel: "mcp" }), "art_2", { body: "<p>ONE</p><p>two</p>" }, plain))
    let merges = 0
    hooks.onMerge = async () => {
      if (++merges === 1) await w.run(updateArticle(caller({ channel: "mcp" }), "art_2", { title: "Other title" }, plain))
    }
    const out = await w.run(updateArticle(caller(), "art_2", { body: "<p>one</p><p>TWO</p>", base_revision: 2 }, plain))
    expect(merges).toBe(2)
    expect([out.result.article.title, out.result.article.body]).toEqual(["Other title", "<p>ONE</p><p>TWO</p>"])
    expect(out.result.merge).toEqual({ base: 2, theirs: 4, merged_units: 2 })
  })
})

describe("restoreRevision of a revision that differs only in its title", () => {
  it("should write a new revision bringing the title back", async () => {
    const w = await makeWorld()
    await w.run(updateArticle(caller(), "art_2", { title: "Tulips, renamed" }, plain))
    const out = await w.run(restoreRevision(caller(), "art_2", 1, undefined))
    expect(out.result.revision).toMatchObject({ number: 3, restored_from: 1, reason: "Restored revision 1" })
    expect(out.result.article).toMatchObject({ title: "Tulips", body: "<p>one two three</p>", revision: 3 })
    expect((await w.run(listRevisions(caller(), "art_2", {}))).pagination.total).toBe(3)
  })

  it("should write nothing when the article is already in the revision's state", async () => {
    const w = await makeWorld()
    const out = await w.run(restoreRevision(caller(), "art_2", 1, undefined))
    expect(out.result.revision).toBeNull()
    expect(out.editsRemaining).toBe(200)
  })
})

describe("an article whose stored body the input limits refuse", () => {
  it("should stay editable, its protected blocks read with the stored form's bound, and keep them protected", async () => {
    // Stored before today's limits: its sanitised form is over 1 MiB, which a new body may not be.
    const protectedPart = `<p>${link}</p>`
    const w = await makeWorld()
    const record = w.state.articles.get("art_2")!
    w.state.articles.set("art_2", { ...record, body: `${protectedPart}<p>${"x".repeat(1_100_000)}</p>` })
    const error = failureOf(await w.exit(updateArticle(caller(), "art_2", { body: "<p>short now</p>" }, plain))) as ProtectedLinkChanged
    expect(error.blocks.map((b) => [b.kind, b.href])).toEqual([["removed", "https://partner.test/new"]])
    const out = await w.run(updateArticle(caller(), "art_2", { body: `${protectedPart}<p>short now</p>` }, plain))
    expect(out.result.article.body).toBe(`${protectedPart}<p>short now</p>`)
  })
})
