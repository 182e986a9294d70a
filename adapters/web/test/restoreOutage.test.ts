/**
 * What the revision page says of a restore the database did not confirm: its change may have
 * committed before the connection dropped. Restoring again makes no second revision: the
 * article, if restored, is the same as the revision and nothing changes (or, from the first form,
 * the restore is refused as over an older revision).
 */
import { InvalidRequest, Unavailable } from "@content-site/core"
import { describe, expect, it } from "vitest"
import { restoreRefusalOf } from "../src/pages/revision.routes.ts"
import { revisionContent } from "../src/pages/revision.ts"

const outage = new Unavailable({ detail: "The database cannot answer now." })

describe("a restore during a database outage", () => {
  it("should say the revision may or may not have been restored, how to check, and that restoring again makes no second revision", () => {
    const refusal = restoreRefusalOf(3, outage, outage.detail, "why")
    expect(refusal.message).toContain("may or may not have been restored")
    expect(refusal.message).toContain("revisions")
    expect(refusal.message).toContain("restoring it again is safe")
    expect(refusal.message).not.toMatch(/not restored/i)
    expect(refusal.reason).toBe("why")
  })

  it("should not head the page's message with \"Not restored.\"", () => {
    const revision = { number: 1, title: "T", body: "<p>x</p>", reason: null, origin: "editor", actor: { type: "user", id: "u", name: "One" }, created_at: "2026-11-01T09:00:00Z", restored_from: null, "featured image": null }
    const article = { id: "a", site_id: "s", title: "T", body: "<p>x</p>", revision: 1, "featured image": null }
    const page = revisionContent({ article: article as never, siteName: "S", revision: revision as never, comparison: null, csrf: "c", refusal: restoreRefusalOf(1, outage, outage.detail, "") }).value
    expect(page).not.toContain("Not restored.")
    expect(page).toContain("may or may not have been restored")
  })

  it("should still say a refused restore was not restored", () => {
    const refusal = restoreRefusalOf(3, new InvalidRequest({ detail: "Bad reason.", errors: [] }), "Bad reason.", "")
    expect(refusal.message).toBe("Bad reason.")
  })
})
