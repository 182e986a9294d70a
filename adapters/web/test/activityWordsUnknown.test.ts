/** The activity page's words for a call the service does not have: plain words, never the raw call. */
import { describe, expect, it } from "vitest"
import { actionWords } from "../src/activityWords.ts"

describe("actionWords for a call no table row names", () => {
  it("should say in words that an unknown API address or method was called, not show `DELETE /api/v1/sites`", () => {
    for (const action of ["GET /api/v1/nope", "DELETE /api/v1/sites", "POST /api/v1/articles/{id}/nope"]) {
      const words = actionWords(action)
      expect(words, action).toBe("Called an API address or method the service does not offer")
      expect(words).not.toContain("/api/")
    }
  })

  it("should say in words that something unknown was called (a tool that does not exist)", () => {
    expect(actionWords("no_such_tool")).toBe("Called something the service does not offer")
  })

  it("should keep the words of known calls, a HEAD as its GET", () => {
    expect(actionWords("GET /api/v1/sites")).toBe("Listed sites")
    expect(actionWords("HEAD /api/v1/sites")).toBe("Listed sites")
  })
})
