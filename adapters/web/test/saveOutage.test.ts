/**
 * What the pages say of a save the database did not confirm: its commit may have landed before
 * the connection dropped, so neither "saved" nor "not saved" would be true.
 */
import { Unavailable } from "@content-site/core"
import type { HttpDeps } from "@content-site/http"
import { describe, expect, it } from "vitest"
import type { Ctx } from "../src/pageKit.ts"
import { errorPage } from "../src/pages/errorPage.ts"
import { refusalOf } from "../src/pages/editOutcome.ts"

describe("a save during a database outage", () => {
  it("should say the edit may or may not have been saved, that its text is kept below, and that saving again is safe", () => {
    const refusal = refusalOf({} as Ctx, {} as HttpDeps, new Unavailable({ detail: "The database cannot answer now." }))
    const message = refusal?.message ?? ""
    expect(message).toContain("may or may not have been saved")
    expect(message).toContain("Your text is kept below")
    expect(message).toContain("saving it again is safe")
    expect(message).not.toMatch(/\bwas not saved\b/)
  })

  it("should not tell the text on the error page (no draft could be kept) that it was not saved, and say how to find out", () => {
    const page = errorPage({
      status: 503,
      title: "Service unavailable",
      message: "The database cannot answer now.",
      requestId: "req_x",
      account: null,
      csrf: "c",
      typed: [{ label: "Body", text: "<p>Typed</p>" }],
    }).value
    expect(page).not.toContain("Your text, not saved")
    expect(page).toContain("may or may not have been saved")
    expect(page).toContain("saving an edit again is safe")
    expect(page).toContain("&lt;p&gt;Typed&lt;/p&gt;</textarea>")
  })
})
