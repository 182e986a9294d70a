import { describe, expect, it } from "vitest"
import { type EditConflict, getArticle, getRevision, type InvalidRequest, toProblem, updateArticle } from "../../src/index.ts"
import { caller, failureOf, failureTag, makeWorld, recordingHtmlAnalyzer } from "./harness.ts"

const plain = { dryRun: false }
const body = (...paragraphs: ReadonlyArray<string>): string => paragraphs.map((p) => `<p>${p}</p>`).join("\n")

/** A world where art_2 is at revision 2 (four paragraphs) and then revision 3 (theirs: the first paragraph changed by an agent). */
const twoWriters = async () => {
  const w = await makeWorld()
  await w.run(updateArticle(caller(), "art_2", { body: body("one", "two", "three", "four") }, plain))
  await w.run(updateArticle(caller({ channel: "mcp" }), "art_2", { body: body("ONE by agent", "two", "three", "four") }, plain))
  return w
}

describe("updateArticle with base_revision", () => {
  it("should answer a missing or another account's article before any HTML work, and sanitise an edit at the current revision once", async () => {
    const seen: Array<string> = []
    const w = await makeWorld({}, new Map(), recordingHtmlAnalyzer(seen))
    const deep = "<p><b><i><u>".repeat(1000)
    for (const id of ["art_missing", "art_b"]) {
      expect(failureTag(await w.exit(updateArticle(caller(), id, { body: deep, base_revision: 1 }, { dryRun: true })))).toBe("NotFound")
    }
    expect(seen).toEqual([])
    // at the current revision there is nothing to merge: the edit is analysed once, as without base_revision
    await w.run(updateArticle(caller(), "art_2", { body: "<p>at one</p>", base_revision: 1 }, plain))
    expect(seen.filter((html) => html === "<p>at one</p>")).toHaveLength(1)
  })

  it("should merge an edit written against an older revision with the change made since, and say so", async () => {
    const w = await twoWriters()
    const out = await w.run(
      updateArticle(caller({ channel: "web" }), "art_2", { body: body("one", "two", "three", "FOUR by person"), base_revision: 2, reason: "fix ending" }, plain),
    )
    expect(out.result.article.body).toBe(body("ONE by agent", "two", "three", "FOUR by person"))
    expect(out.result.merge).toEqual({ base: 2, theirs: 3, merged_units: 1 })
    expect(out.result.revision).toMatchObject({ number: 4, origin: "editor", reason: "fix ending (merged with revision 3)" })
    expect((await w.run(getArticle(caller(), "art_2"))).revision).toBe(4)
  })

  it("should refuse a conflicting edit with EditConflict listing each side, and write nothing", async () => {
    const w = await twoWriters()
    const exit = await w.exit(updateArticle(caller(), "art_2", { body: body("one mine", "two", "three", "four"), base_revision: 2 }, plain))
    const error = failureOf(exit) as EditConflict
    expect(error._tag).toBe("EditConflict")
    expect(error.conflicts).toEqual([{ unit: "body/0", base: "<p>one</p>", theirs: "<p>ONE by agent</p>", mine: "<p>one mine</p>" }])
    expect(toProblem(error, "req_1", "https://x.test")).toMatchObject({ status: 409, code: "edit_conflict", conflicts: error.conflicts })
    expect((await w.run(getArticle(caller(), "art_2"))).revision).toBe(3)
  })

  it("should answer a dry run exactly as the call, writing nothing", async () => {
    const w = await twoWriters()
    const clean = await w.run(updateArticle(caller(), "art_2", { body: body("one", "two", "THREE"), base_revision: 2 }, { dryRun: true }))
    expect(clean.result).toMatchObject({ revision: null, dry_run: true, merge: { base: 2, theirs: 3, merged_units: 1 } })
    expect(clean.result.article.body).toBe(body("ONE by agent", "two", "THREE"))
    const conflict = await w.exit(updateArticle(caller(), "art_2", { title: "x", body: body("uno", "two"), base_revision: 2 }, { dryRun: true }))
    expect(failureTag(conflict)).toBe("EditConflict")
    expect((await w.run(getArticle(caller(), "art_2"))).revision).toBe(3)
  })

  it("should tell an edit sent again on its base, found saved already, from an edit that changes nothing (savedAlready)", async () => {
    const w = await twoWriters()
    const edit = { body: body("ONE by agent", "two", "three", "four, mine"), base_revision: 3 }
    const first = await w.run(updateArticle(caller(), "art_2", edit, plain))
    expect(first.result.revision?.number).toBe(4)
    expect(first.savedAlready).toBeUndefined()
    await w.run(updateArticle(caller({ channel: "mcp" }), "art_2", { body: body("ONE by agent", "two, theirs", "three", "four, mine") }, plain))
    for (const dryRun of [true, false]) {
      const again = await w.run(updateArticle(caller(), "art_2", edit, { dryRun }))
      expect(again.result.revision).toBeNull()
      expect(again.savedAlready).toBe(true)
    }
    // sent again with what the sanitiser removes: the answer says so, as the first one did
    const withScript = { body: `${body("ONE by agent", "two", "three", "four, mine")}<script>x()</script>`, base_revision: 3 }
    for (const dryRun of [true, false]) {
      const again = await w.run(updateArticle(caller(), "art_2", withScript, { dryRun }))
      expect(again.savedAlready).toBe(true)
      expect(again.result.sanitized).toEqual({ changed: true, removed: [{ what: "script", count: 1 }] })
    }
    // the article as it is, sent at its own revision: nothing changed, not "saved already"
    const same = await w.run(updateArticle(caller(), "art_2", { body: body("ONE by agent", "two, theirs", "three", "four, mine"), base_revision: 5 }, plain))
    expect(same.result.revision).toBeNull()
    expect(same.savedAlready).toBeUndefined()
  })

  it("should say in a conflict when the merge fell back to a coarser comparison past its budget, and not otherwise", async () => {
    const w = await makeWorld()
    const n = 4000
    const paragraphs = Array.from({ length: n }, (_, i) => `p${i}`)
    await w.run(updateArticle(caller(), "art_2", { body: body(...paragraphs) }, plain))
    // theirs changes every even paragraph, mine every odd one: too many to align within the budget
    await w.run(updateArticle(caller({ channel: "mcp" }), "art_2", { body: body(...paragraphs.map((p, i) => (i % 2 === 0 ? `${p} theirs` : p))) }, plain))
    const coarse = failureOf(await w.exit(updateArticle(caller(), "art_2", { body: body(...paragraphs.map((p, i) => (i % 2 === 1 ? `${p} mine` : p))), base_revision: 2 }, plain))) as EditConflict
    expect(coarse._tag).toBe("EditConflict")
    expect(coarse.detail).toContain("budget of work")
    // one paragraph changed on each side since revision 3: compared block by block, no such note
    const atThree = paragraphs.map((p, i) => (i % 2 === 0 ? `${p} theirs` : p))
    await w.run(updateArticle(caller({ channel: "mcp" }), "art_2", { body: body(...atThree.map((p, i) => (i === 1 ? "p1 theirs again" : p))) }, plain))
    const fine = failureOf(await w.exit(updateArticle(caller(), "art_2", { body: body(...atThree.map((p, i) => (i === 1 ? "p1 mine" : p))), base_revision: 3 }, plain))) as EditConflict
    expect(fine.conflicts).toHaveLength(1)
    expect(fine.detail).not.toContain("budget of work")
  })

  it("should merge a title-only edit with a body changed since, and conflict on two different titles", async () => {
    const w = await twoWriters()
    const out = await w.run(updateArticle(caller(), "art_2", { title: "New title", base_revision: 2 }, plain))
    expect(out.result.article).toMatchObject({ title: "New title", body: body("ONE by agent", "two", "three", "four") })
    const exit = await w.exit(updateArticle(caller(), "art_2", { title: "Another", base_revision: 3 }, plain))
    expect((failureOf(exit) as EditConflict).conflicts).toEqual([{ unit: "title", base: "Tulips", theirs: "New title", mine: "Another" }])
  })

  it("should apply an edit at the current revision as a plain edit, with no merge", async () => {
    const w = await twoWriters()
    const out = await w.run(updateArticle(caller(), "art_2", { body: body("x"), base_revision: 3 }, plain))
    expect(out.result.merge).toBeUndefined()
    expect(out.result.revision?.reason).toBeNull()
  })

  it("should refuse base_revision with a precondition, and one newer than the article, naming base_revision", async () => {
    const w = await twoWriters()
    const both = failureOf(await w.exit(updateArticle(caller(), "art_2", { title: "x", base_revision: 2 }, { dryRun: false, expectedRevisions: [3] }))) as InvalidRequest
    expect(both.errors.map((e) => e.path)).toEqual(["base_revision"])
    const ahead = failureOf(await w.exit(updateArticle(caller(), "art_2", { title: "x", base_revision: 9 }, plain))) as InvalidRequest
    expect(ahead._tag).toBe("InvalidRequest")
    expect(ahead.errors.map((e) => e.path)).toEqual(["base_revision"])
    expect(failureTag(await w.exit(updateArticle(caller({ scope: "read-only" }), "art_2", { title: "x", base_revision: 2 }, plain)))).toBe("InsufficientScope")
  })

  it("should check protected links against the current body after merging", async () => {
    const w = await makeWorld()
    const start = await w.run(getArticle(caller(), "art_1"))
    // Theirs adds a closing paragraph; mine, written before it, changes the intro.
    await w.run(updateArticle(caller({ channel: "mcp" }), "art_1", { body: `${start.body}\n<p>Closing words.</p>` }, plain))
    const out = await w.run(updateArticle(caller(), "art_1", { body: start.body.replace("Intro text", "Better intro"), base_revision: 1 }, plain))
    expect(out.result.article.body).toContain("Better intro")
    expect(out.result.article.body).toContain("Closing words.")
    expect(out.result.article.protected_links.map((l) => l.href)).toEqual(["https://partner.test/x", "/internal"])
    // Mine, written against revision 1, removes a protected link theirs kept: refused as any PUT would be.
    const removes = await w.exit(updateArticle(caller(), "art_1", { body: "<p>Intro text about gardens.</p>", base_revision: 1 }, plain))
    expect(failureTag(removes)).toBe("ProtectedLinkChanged")
  })

  it("should merge a title-only edit without sending the current body again, so a body stored over today's input limits stays as it is", async () => {
    const w = await makeWorld()
    // Stored before today's limits (over 1 MiB): revision 1, then revision 2 made by others with the same title and body.
    const big = `<p>keep</p><p>${"x".repeat(1_100_000)}</p>`
    const first = w.state.revisions.get("art_2#1")!
    w.state.revisions.set("art_2#1", { ...first, body: big })
    w.state.revisions.set("art_2#2", { ...first, id: "rev_theirs", number: 2, body: big })
    w.state.articles.set("art_2", { ...w.state.articles.get("art_2")!, body: big, revision: 2 })
    for (const dryRun of [true, false]) {
      const out = await w.run(updateArticle(caller(), "art_2", { title: "Renamed", base_revision: 1 }, { dryRun }))
      expect(out.result.merge).toEqual({ base: 1, theirs: 2, merged_units: 0 })
      expect(out.result.article).toMatchObject({ title: "Renamed", body: big })
    }
    expect((await w.run(getRevision(caller(), "art_2", 3))).body).toBe(big)
  })

  it("should keep the merged result's revision readable with the reason saying what it merged", async () => {
    const w = await twoWriters()
    await w.run(updateArticle(caller(), "art_2", { body: body("one", "TWO"), base_revision: 2 }, plain))
    const revision = await w.run(getRevision(caller(), "art_2", 4))
    expect(revision.reason).toBe("Merged with revision 3")
    expect(revision.body).toBe(body("ONE by agent", "TWO"))
  })
})
