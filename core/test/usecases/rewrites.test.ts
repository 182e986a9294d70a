import { describe, expect, it } from "vitest"
import {
  editsRemaining,
  getArticle,
  getRevision,
  listActivity,
  makeRewriteBatch,
  type RewriteLineResult,
  type RewriteOutcome,
  updateArticle,
} from "../../src/index.ts"
import { caller, makeWorld } from "./harness.ts"

type World = Awaited<ReturnType<typeof makeWorld>>

const PARTNER = '<a href="https://partner.test/x" data-service-protected="backlink">partner</a>'
const GUIDE = '<a href="/internal" data-service-protected="internal">our guide</a>'

/** Runs every line of a batch and returns the results and the summary. */
const runBatch = async (w: World, lines: ReadonlyArray<string>, dryRun = false) => {
  const batch = makeRewriteBatch({ dryRun })
  const results: Array<RewriteLineResult> = []
  for (const line of lines) results.push(await w.run(batch.apply(line)))
  return { results, summary: batch.summary() }
}

const line = (o: Record<string, unknown>) => JSON.stringify(o)
const kinds = (results: ReadonlyArray<RewriteLineResult>) => results.map((r) => r.outcome.kind)
const refusal = (o: RewriteOutcome) => (o.kind === "refused" ? o.error._tag : `(${o.kind})`)

describe("rewrite batch", () => {
  it("should apply a line as a revision of origin rewrite by the platform, sanitised like an API edit", async () => {
    const w = await makeWorld()
    const body = `<p>Rewritten with ${PARTNER} and ${GUIDE}.<script>alert(1)</script></p>`
    const { results, summary } = await runBatch(w, [line({ rewrite_id: "rw-1", article_id: "art_1", body, reason: "Refresh" })])
    expect(results[0]).toEqual({ line: 1, rewrite_id: "rw-1", article_id: "art_1", outcome: { kind: "applied", revision: 2 } })
    expect(summary).toEqual({ lines: 1, applied: 1, unchanged: 0, already_applied: 0, would_apply: 0, refused: 0 })
    const revision = await w.run(getRevision(caller(), "art_1", 2))
    expect(revision).toMatchObject({ origin: "rewrite", reason: "Refresh", actor: { type: "platform", id: "rewrite", name: "Rewrite job" } })
    expect(revision.body).not.toContain("script")
    expect(revision.body).toContain(PARTNER)
  })

  it("should write an activity entry on the article's account with channel platform and action rewrite", async () => {
    const w = await makeWorld()
    await runBatch(w, [line({ rewrite_id: "rw-act", article_id: "art_b", title: "Sourdough" })])
    const entries = await w.run(listActivity(caller({ accountId: "acc_b" }), { channel: "platform", page: 1, per_page: 20 }))
    expect(entries.data).toHaveLength(1)
    expect(entries.data[0]).toMatchObject({
      account_id: "acc_b",
      channel: "platform",
      action: "rewrite",
      actor: { type: "platform", id: "rewrite", name: "Rewrite job" },
      site_id: "site_b",
      article_id: "art_b",
      status: "ok",
      error_code: null,
    })
    const other = await w.run(listActivity(caller({ accountId: "acc_a" }), { channel: "platform", page: 1, per_page: 20 }))
    expect(other.data).toHaveLength(0)
  })

  it("should not count against the daily edit limit, even when it is used up", async () => {
    const w = await makeWorld({ dailyEdits: 1 })
    const spent = await w.run(updateArticle(caller(), "art_2", { title: "Last edit today" }, { dryRun: false }))
    expect(spent.editsRemaining).toBe(0)
    const counters = new Map(w.state.editCounters)
    const { results } = await runBatch(w, [
      line({ rewrite_id: "rw-a", article_id: "art_2", title: "Rewritten" }),
      line({ rewrite_id: "rw-b", article_id: "art_3", body: "<p>new draft</p>" }),
    ])
    expect(kinds(results)).toEqual(["applied", "applied"])
    expect(w.state.editCounters).toEqual(counters)
    expect(await w.run(editsRemaining(caller()))).toBe(0)
  })

  it("should apply nothing twice: a second run reports every line as already applied", async () => {
    const w = await makeWorld()
    const lines = [
      line({ rewrite_id: "rw-1", article_id: "art_2", title: "Tulips, rewritten" }),
      line({ rewrite_id: "rw-2", article_id: "art_2", title: "Tulips" }),
      line({ rewrite_id: "rw-3", article_id: "art_b", body: "<p>bread</p>" }),
    ]
    const first = await runBatch(w, lines)
    // rw-3 asks for the body art_b already has: nothing to write, yet the line counts as applied
    expect(first.results.map((r) => r.outcome)).toEqual([
      { kind: "applied", revision: 2 },
      { kind: "applied", revision: 3 },
      { kind: "unchanged" },
    ])
    const second = await runBatch(w, lines)
    expect(second.results.map((r) => r.outcome)).toEqual([
      { kind: "already_applied", revision: 2 },
      { kind: "already_applied", revision: 3 },
      { kind: "already_applied", revision: null },
    ])
    expect(second.summary.already_applied).toBe(3)
    expect((await w.run(getArticle(caller(), "art_2"))).revision).toBe(3)
  })

  it("should refuse each bad line alone and apply the others", async () => {
    const w = await makeWorld()
    const lines = [
      line({ rewrite_id: "ok-1", article_id: "art_2", title: "Applied" }),
      line({ rewrite_id: "bad-protected", article_id: "art_1", body: `<p>Only ${GUIDE}</p>` }),
      line({ rewrite_id: "bad-stale", article_id: "art_3", title: "Stale", if_revision: 7 }),
      line({ rewrite_id: "bad-missing", article_id: "art_nope", title: "Nobody" }),
      '{"rewrite_id": "bad-json", "article_id": ',
      line({ rewrite_id: "bad-key", article_id: "art_3", title: "x", status: "draft" }),
      line({ rewrite_id: "bad-empty", article_id: "art_3" }),
      line({ rewrite_id: "ok-1", article_id: "art_3", title: "Same id again" }),
      line({ rewrite_id: "ok-2", article_id: "art_3", title: "Also applied", if_revision: 1 }),
    ]
    const { results, summary } = await runBatch(w, lines)
    expect(results.map((r) => refusal(r.outcome))).toEqual([
      "(applied)",
      "ProtectedLinkChanged",
      "PreconditionFailed",
      "NotFound",
      "InvalidRequest",
      "InvalidRequest",
      "InvalidRequest",
      "InvalidRequest",
      "(applied)",
    ])
    expect(results[4]).toMatchObject({ line: 5, rewrite_id: null, article_id: null })
    expect(results[1]).toMatchObject({ rewrite_id: "bad-protected", article_id: "art_1" })
    expect(summary).toMatchObject({ lines: 9, applied: 2, refused: 7 })
    expect((await w.run(getArticle(caller(), "art_1"))).revision).toBe(1)
    expect((await w.run(getArticle(caller(), "art_3"))).title).toBe("Also applied")
    expect(w.state.rewrites.has("bad-protected")).toBe(false)
    // a refusal on a known article is in its account's log; the refused lines are tried again next run
    const log = await w.run(listActivity(caller(), { channel: "platform", page: 1, per_page: 50 }))
    expect(log.data.filter((e) => e.error_code === "protected_link_changed")).toHaveLength(1)
    const again = await runBatch(w, [lines[1]!])
    expect(refusal(again.results[0]!.outcome)).toBe("ProtectedLinkChanged")
  })

  it("should check every line in a dry run as the real run would, and write nothing", async () => {
    const w = await makeWorld()
    const lines = [
      line({ rewrite_id: "dry-1", article_id: "art_2", title: "Would change" }),
      line({ rewrite_id: "dry-2", article_id: "art_1", body: "<p>no links</p>" }),
      line({ rewrite_id: "dry-3", article_id: "art_b", body: "<p>bread</p>" }),
      line({ rewrite_id: "dry-4", article_id: "art_3", title: "x", if_revision: 2 }),
    ]
    const revisionsBefore = w.state.revisions.size
    const activityBefore = w.state.activity.length
    const dry = await runBatch(w, lines, true)
    expect(dry.results.map((r) => r.outcome.kind === "refused" ? r.outcome.error._tag : r.outcome)).toEqual([
      { kind: "would_apply", changed: true },
      "ProtectedLinkChanged",
      { kind: "would_apply", changed: false },
      "PreconditionFailed",
    ])
    expect(w.state.revisions.size).toBe(revisionsBefore)
    expect(w.state.activity.length).toBe(activityBefore)
    expect(w.state.rewrites.size).toBe(0)
    const real = await runBatch(w, lines)
    expect(kinds(real.results)).toEqual(["applied", "refused", "unchanged", "refused"])
  })

  it("should take a line as bytes and refuse one that is not UTF-8, replacing nothing", async () => {
    const w = await makeWorld()
    const batch = makeRewriteBatch({ dryRun: true })
    const good = new TextEncoder().encode(line({ rewrite_id: "rw-bytes-1", article_id: "art_2", title: "Tulipes é" }))
    expect((await w.run(batch.apply(good))).outcome.kind).toBe("would_apply")
    const bad = new Uint8Array([...new TextEncoder().encode('{"rewrite_id": "rw-bytes-2", "article_id": "art_2", "title": "a'), 0xff, 0x22, 0x7d])
    const refused = await w.run(batch.apply(bad))
    expect(refused).toMatchObject({ rewrite_id: null, outcome: { kind: "refused", error: { _tag: "InvalidRequest", detail: "The line is not valid UTF-8." } } })
    expect(batch.summary()).toMatchObject({ lines: 2, would_apply: 1, refused: 1 })
  })

  it("should refuse HTML nested too deep as an invalid line, like an API edit", async () => {
    const w = await makeWorld()
    const deep = `${"<div>".repeat(300)}x${"</div>".repeat(300)}`
    const { results } = await runBatch(w, [line({ rewrite_id: "deep", article_id: "art_2", body: deep })])
    expect(refusal(results[0]!.outcome)).toBe("InvalidRequest")
  })
})
