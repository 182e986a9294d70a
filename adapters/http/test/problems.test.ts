/** The headers a problem answer carries beside its body. */
import { EditConflict, RateLimited, Unavailable } from "@content-site/core"
import { describe, expect, it } from "vitest"
import { problemHeaders } from "../src/problems.ts"

describe("problemHeaders", () => {
  it("should say when to retry a refusal for load, and a conflict that only needs a moment, not one that needs a new edit", () => {
    expect(problemHeaders(new RateLimited({ limit: 60, retryAfterSeconds: 12 }))).toEqual({ "Retry-After": "12" })
    expect(problemHeaders(new Unavailable({ detail: "busy" }))).toEqual({ "Retry-After": "5" })
    expect(problemHeaders(new EditConflict({ detail: "still being processed", retryAfterSeconds: 1 }))).toEqual({ "Retry-After": "1" })
    expect(problemHeaders(new EditConflict({ detail: "changed differently" }))).toEqual({})
  })
})
