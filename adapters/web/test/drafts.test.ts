/**
 * Drafts as they are stored on PostgreSQL: a draft is its body and a bounded rest (a refusal that
 * names huge forged links is kept cut), and text a JSON column cannot hold (NUL, a lone surrogate)
 * is kept as U+FFFD rather than failing the request and losing the text.
 */
import type { HttpDeps, WebSession } from "@content-site/http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Draft, dropDraft, findDraft, keepable, keepDraft, MAX_DRAFTS } from "../src/drafts.ts"
import { openTestStore, type TestStore } from "../../../test/support/testStore.ts"

describe("drafts kept in the database", () => {
  let store: TestStore
  let deps: HttpDeps
  const session: WebSession = { key: "session-of-drafts-test", accountId: "acc_x", csrf: "c", createdAt: Date.now(), flash: null }

  beforeAll(async () => {
    store = await openTestStore()
    // (drafts use the store's OAuthStore only)
    deps = { runtime: store.runtime, publicUrl: "http://127.0.0.1", env: {} } as unknown as HttpDeps
  })
  afterAll(async () => {
    await store?.close()
  })

  const draft = (over: Partial<Draft> = {}): Draft => ({
    articleId: "art_x",
    title: "T",
    body: "<p>b</p>",
    reason: "",
    revision: 1,
    refusal: { message: "Not saved.", blocks: [], details: [] },
    ...over,
  })

  it("should keep a refusal's forged links cut, so that a draft is its body and a few KiB more", async () => {
    const forged = { kind: "forged" as const, href: `https://z.test/${"h".repeat(250_000)}`, text: "t".repeat(250_000) }
    const body = `<p>${"x".repeat(500_000)}</p>`
    const id = await keepDraft(deps, session, draft({ body, refusal: { message: "m".repeat(10_000), blocks: Array.from({ length: 30 }, () => forged), details: ["d".repeat(5_000)] } }))
    const kept = await findDraft(deps, session, "art_x", id!)
    expect(kept!.body).toBe(body)
    expect(kept!.refusal.blocks).toHaveLength(20)
    expect(kept!.refusal.blocks[0]!.href!.length).toBeLessThanOrEqual(301)
    expect(kept!.refusal.blocks[0]!.text.endsWith("…")).toBe(true)
    const rest = JSON.stringify({ ...kept, body: "" })
    expect(Buffer.byteLength(rest)).toBeLessThan(32 * 1024)
  })

  it("should find nothing at an overwritten draft's address, and not drop the newer draft in its slot when its form is saved", async () => {
    const own: WebSession = { ...session, key: "session-of-slots-test" }
    const ids: Array<string> = []
    for (let i = 0; i <= MAX_DRAFTS; i++) ids.push((await keepDraft(deps, own, draft({ title: `Slot ${i}` })))!)
    // the sixth took the first's place: the first's address finds nothing, not the sixth's text
    expect(await findDraft(deps, own, "art_x", ids[0])).toBeNull()
    expect((await findDraft(deps, own, "art_x", ids[MAX_DRAFTS]))!.title).toBe(`Slot ${MAX_DRAFTS}`)
    // a save from the first's form drops its draft: gone already, and the sixth stays
    await dropDraft(deps, own, ids[0])
    expect((await findDraft(deps, own, "art_x", ids[MAX_DRAFTS]))!.title).toBe(`Slot ${MAX_DRAFTS}`)
    await dropDraft(deps, own, ids[MAX_DRAFTS])
    expect(await findDraft(deps, own, "art_x", ids[MAX_DRAFTS])).toBeNull()
    expect((await findDraft(deps, own, "art_x", ids[1]))!.title).toBe("Slot 1")
  })

  it("should keep an edit holding a NUL or a lone surrogate, those characters as U+FFFD and the rest as typed", async () => {
    const id = await keepDraft(deps, session, draft({ title: "NUL\u0000TITLE", body: "<p>no\u0000link \ud800 here</p>", reason: "why\udc00" }))
    const kept = await findDraft(deps, session, "art_x", id!)
    expect([kept!.title, kept!.body, kept!.reason]).toEqual(["NUL\ufffdTITLE", "<p>no\ufffdlink \ufffd here</p>", "why\ufffd"])
  })

  it("should not keep a title and reason together over 16 KiB, as it keeps no body over 1 MiB", () => {
    expect(keepable(draft({ title: "t".repeat(16 * 1024) }))).toBe(true)
    expect(keepable(draft({ title: "t".repeat(16 * 1024), reason: "r" }))).toBe(false)
    expect(keepable(draft({ body: "b".repeat(1024 * 1024 + 1) }))).toBe(false)
  })

  it("should hold a draft to its bounds as it is stored: a NUL kept as U+FFFD takes three bytes, not one", async () => {
    // 0.5 MiB of NUL is 0.5 MiB sent, 1.5 MiB once each is kept as U+FFFD
    const body = "\u0000".repeat(512 * 1024)
    expect(keepable(draft({ body }))).toBe(false)
    expect(await keepDraft(deps, session, draft({ body }))).toBeNull()
    expect(keepable(draft({ title: "\u0000".repeat(8 * 1024) }))).toBe(false)
    // at the bound as stored: kept
    expect(keepable(draft({ body: "\u0000".repeat((1024 * 1024) / 3) }))).toBe(true)
  })

  it("should count what was typed on the conflict page within the body's 1 MiB, and keep no more than 1 000 units of it", () => {
    const half = "b".repeat(512 * 1024)
    const settling = (typed: Record<string, string>) => ({ theirs: 2, chosen: { "body/0": "edit" as const }, typed })
    expect(keepable(draft({ body: half, settling: settling({ "body/0": "t".repeat(512 * 1024 - 100) }) }))).toBe(true)
    expect(keepable(draft({ body: half, settling: settling({ "body/0": "t".repeat(512 * 1024) }) }))).toBe(false)
    const many = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`body/${i}`, ""]))
    expect(keepable(draft({ settling: settling(many) }))).toBe(false)
  })
})
