import { describe, expect, it } from "vitest"
import {
  replayedProblemText,
  claimIdempotencyKey,
  editArticle,
  getArticle,
  IDEMPOTENCY_LEASE_MS,
  type IdempotencyClaim,
  keptAnswerOf,
  MAX_KEPT_ANSWER_BYTES,
  recordIdempotentAnswer,
  updateArticle,
} from "../../src/index.ts"
import { caller, failureOf, failureTag, fixture, makeWorld } from "./harness.ts"

const readOnly = () => caller({ actor: { type: "api_key", id: "key_ro", name: "ro" }, scope: "read-only" })
const stored = (w: Awaited<ReturnType<typeof makeWorld>>, key: string) => w.state.idempotency.get(`acc_a#${key}`)
/** The key a claim that answered `run` holds. */
const holdOf = (claim: IdempotencyClaim) => {
  if (claim.kind !== "run" || claim.hold === undefined) throw new Error(`the claim holds no key: ${JSON.stringify(claim)}`)
  return claim.hold
}
const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength

describe("claimIdempotencyKey", () => {
  it("should refuse a read-only caller before looking the key up, even one a write key answered", async () => {
    const w = await makeWorld()
    const writer = caller()
    const claim = await w.run(claimIdempotencyKey(writer, "k-1", "fp"))
    expect(claim).toMatchObject({ kind: "run", hold: { key: "k-1", fingerprint: "fp" } })
    await w.run(recordIdempotentAnswer(writer, holdOf(claim), { status: 400, headers: {}, value: { secret: "answer" }, dryRun: false }))
    expect(failureTag(await w.exit(claimIdempotencyKey(readOnly(), "k-1", "fp")))).toBe("InsufficientScope")
    // nor does it take a free key, which a write would then find answered with its 403
    expect(failureTag(await w.exit(claimIdempotencyKey(readOnly(), "k-2", "fp")))).toBe("InsufficientScope")
    expect(await w.run(claimIdempotencyKey(writer, "k-2", "fp"))).toMatchObject({ kind: "run" })
  })

  it("should keep a write's answer in a few KiB whatever the article's size, and answer it again in full from its revision", async () => {
    const w = await makeWorld()
    // art_1 has protected links: the replay's protected_links are read from the revision too
    const big = `${fixture.accounts[0]!.sites[0]!.articles[0]!.body}<p>${"word ".repeat(200_000)}</p>`
    const first = await w.run(updateArticle(caller(), "art_1", { body: big }, { dryRun: false }))
    const who = caller()
    const claim = await w.run(claimIdempotencyKey(who, "k-big", "fp-edit"))
    expect(claim).toMatchObject({ kind: "run" })
    const edit = await w.run(editArticle(who, "art_1", { edits: [{ find: "Intro text", replace: "Intro words" }] }, { dryRun: false }))
    expect(edit.result.article.protected_links).toHaveLength(2)
    expect(edit.result.article.revision).toBe(first.result.article.revision + 1)
    const sent = { status: 200, headers: { ETag: '"art_1-r3"' }, value: edit.result }
    expect(bytes(sent.value)).toBeGreaterThan(1_000_000)
    await w.run(recordIdempotentAnswer(who, holdOf(claim), { ...sent, dryRun: false }))
    const kept = stored(w, "k-big")
    expect(bytes(kept)).toBeLessThan(MAX_KEPT_ANSWER_BYTES)
    expect(kept?.answer).toMatchObject({ revision: { articleId: "art_1", number: edit.result.article.revision } })
    // the article moves on; the replay still answers the revision the first answer named
    await w.run(updateArticle(caller(), "art_1", { body: fixture.accounts[0]!.sites[0]!.articles[0]!.body }, { dryRun: false }))
    const replay = await w.run(claimIdempotencyKey(caller(), "k-big", "fp-edit"))
    expect(replay).toEqual({ kind: "replay", rebuilt: true, answer: { status: 200, headers: sent.headers, body: JSON.stringify(edit.result) } })
  })

  it("should not run again a request whose change was made but whose answer was never kept (the service stopped between): a conflict naming its revision", async () => {
    const w = await makeWorld()
    const claim = await w.run(claimIdempotencyKey(caller(), "k-died", "fp-edit"))
    // the call holds the key (as the transports set it once the claim answers run), makes its change, then dies
    const held = caller({ idempotency: holdOf(claim) })
    const edit = await w.run(editArticle(held, "art_1", { edits: [{ find: "Intro text", replace: "Intro words" }] }, { dryRun: false }))
    // while its lease lasts it could still be answering: retry in a moment
    expect(failureOf(await w.exit(claimIdempotencyKey(caller(), "k-died", "fp-edit")))).toMatchObject({ _tag: "EditConflict", retryAfterSeconds: 1 })
    w.clock.advance(IDEMPOTENCY_LEASE_MS)
    const retried = failureOf(await w.exit(claimIdempotencyKey(caller(), "k-died", "fp-edit")))
    expect(retried).toMatchObject({ _tag: "EditConflict" })
    expect((retried as { detail: string }).detail).toContain(`article 'art_1', revision ${edit.result.article.revision}`)
    // nothing ran twice: the article is at the change's revision, its text changed once
    const now = await w.run(getArticle(caller(), "art_1"))
    expect(now.revision).toBe(edit.result.article.revision)
    // another request with the key is still the reused-key refusal
    expect(failureTag(await w.exit(claimIdempotencyKey(caller(), "k-died", "fp-other")))).toBe("IdempotencyKeyReused")
  })

  it("should keep nothing of a dry run: the same request runs again, another is still refused", async () => {
    const w = await makeWorld()
    const big = `<p>${"word ".repeat(200_000)}</p>`
    const claim = await w.run(claimIdempotencyKey(caller(), "k-dry", "fp-dry"))
    const dry = await w.run(updateArticle(caller(), "art_2", { body: big }, { dryRun: true }))
    await w.run(recordIdempotentAnswer(caller(), holdOf(claim), { status: 200, headers: {}, value: dry.result, dryRun: true }))
    expect(stored(w, "k-dry")?.answer).toEqual({ rerun: true })
    expect(await w.run(claimIdempotencyKey(caller(), "k-dry", "fp-dry"))).toMatchObject({ kind: "run" })
    // taken over by its own request: held again while it runs, its answer kept once it ends
    // (the answer says when to retry: the request holding the key is still running)
    expect(failureOf(await w.exit(claimIdempotencyKey(caller(), "k-dry", "fp-dry")))).toMatchObject({ _tag: "EditConflict", retryAfterSeconds: 1 })
    expect(failureTag(await w.exit(claimIdempotencyKey(caller(), "k-dry", "fp-other")))).toBe("IdempotencyKeyReused")
  })

  it("should keep a small refusal as sent and only the request of one past the bound", () => {
    const small = { status: 422, headers: { "Content-Type": "application/problem+json" }, value: { code: "edit_not_applicable", errors: [{ path: "edits/0/find" }] }, dryRun: false }
    expect(keptAnswerOf(small)).toEqual({ status: 422, headers: small.headers, body: JSON.stringify(small.value) })
    const large = { ...small, value: { code: "protected_link_changed", blocks: Array.from({ length: 200 }, (_, i) => ({ kind: "removed", href: `https://p.test/${i}`, text: "a link" })) } }
    expect(keptAnswerOf(large)).toEqual({ rerun: true })
    // a success that names no revision is kept whole: a change is never run twice
    const success = { status: 200, headers: {}, value: { done: "x".repeat(2 * MAX_KEPT_ANSWER_BYTES) }, dryRun: false }
    expect(keptAnswerOf(success)).toMatchObject({ status: 200, body: JSON.stringify(success.value) })
  })
})

describe("replayedProblemText", () => {
  it("should give a kept problem this request's id, and leave any other text as it is", () => {
    const problem = { type: "https://x/problems/edit_not_applicable", title: "t", status: 422, code: "edit_not_applicable", detail: "d", request_id: "req_first" }
    expect(JSON.parse(replayedProblemText(JSON.stringify(problem), "req_now"))).toEqual({ ...problem, request_id: "req_now" })
    // the keys in their order
    expect(Object.keys(JSON.parse(replayedProblemText(JSON.stringify(problem), "req_now")))).toEqual(Object.keys(problem))
    for (const text of ["not json", "[1,2]", '"a string"', "null", '{"code":"x"}']) expect(replayedProblemText(text, "req_now")).toBe(text)
  })
})
