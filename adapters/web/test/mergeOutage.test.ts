/**
 * What a conflict page's save the database did not confirm lands on: its settled text kept as a
 * draft on the article page. Its commit may have landed, so the page is not headed "Not saved".
 * Saving the kept text again is safe: it is sent on the revision it was settled against, and the
 * core finds a settled edit saved already by its first post (`savedAlready`), no second revision.
 */
import { InvalidRequest, Unavailable } from "@content-site/core"
import type { HttpDeps } from "@content-site/http"
import { describe, expect, it } from "vitest"
import type { Ctx } from "../src/pageKit.ts"
import { refusalHeading } from "../src/drafts.ts"
import { refusalOf } from "../src/pages/editOutcome.ts"

describe("a conflict page's save during a database outage", () => {
  it("should mark the kept draft's refusal as unconfirmed, and head it and the page's title so, not \"Not saved\"", () => {
    const refusal = refusalOf({} as Ctx, {} as HttpDeps, new Unavailable({ detail: "The database cannot answer now." }))
    expect(refusal?.uncertain).toBe(true)
    expect(refusalHeading(refusal ?? null)).toEqual({ notice: "Not confirmed.", title: "Not confirmed: " })
    expect(refusal?.message).toContain("saving it again is safe")
  })

  it("should still head a refused save \"Not saved\"", () => {
    const refusal = refusalOf({} as Ctx, {} as HttpDeps, new InvalidRequest({ detail: "Bad.", errors: [] }))
    expect(refusal?.uncertain).toBeUndefined()
    expect(refusalHeading(refusal ?? null)).toEqual({ notice: "Not saved.", title: "Not saved: " })
  })
})
