/** The activity page's words for a refused or failed call: what was tried, never words that say it happened. */
import type { ActivityEntry } from "@content-site/core"
import { describe, expect, it } from "vitest"
import { actionWords, CHANGE_ACTIONS } from "../src/activityWords.ts"
import { toString } from "../src/html.ts"
import { activityTable } from "../src/pages/activity.ts"

const entry = (action: string, status: ActivityEntry["status"], error_code: string | null): ActivityEntry => ({
  id: "act_1",
  account_id: "acc_1",
  at: "2026-11-01T09:00:00.000Z",
  channel: action.includes("/") ? (action.startsWith("POST /api/") || action.startsWith("GET /api/") || action.startsWith("PUT /api/") || action.startsWith("PATCH /api/") ? "api" : "web") : "mcp",
  actor: { type: "user", id: "acc_1", name: "One" },
  action,
  site_id: null,
  article_id: null,
  status,
  error_code,
  duration_ms: 3,
  request_id: "req_1",
  count: 1,
}) as ActivityEntry

/** The headline of the one entry's row. */
const headline = (e: ActivityEntry): string =>
  /<strong>([^<]*)<\/strong>/.exec(toString(activityTable({ data: [e], pagination: { page: 1, per_page: 50, total: 1, total_pages: 1 } }, new Map(), false)))![1]!

const READS = ["GET /api/v1/sites", "GET /api/v1/articles/{id}", "list_articles", "get_article", "resources/read", "prompts/get", "POST / (sign in)", "GET /api/v1/activity"]

describe("activity words of a refused call", () => {
  it("should say a refused key creation was tried and refused, never “Created an API key”, for 400, 403 and 429", () => {
    for (const [status, code] of [[400, "invalid_request"], [403, "invalid_request"], [429, "rate_limited"]] as const) {
      const words = headline(entry("POST /connect/keys", status, code))
      expect(words, String(status)).not.toContain("Created an API key")
      expect(words, String(status)).toMatch(/^Tried to create an API key \(refused: .+\)$/)
    }
  })

  it("should say what was tried for every change and read the table names, refused or failed, and what was done when done", () => {
    for (const action of [...CHANGE_ACTIONS, ...READS]) {
      const done = actionWords(action)
      const refused = headline(entry(action, 403, "forbidden"))
      expect(refused, action).not.toContain(done.replace(/&/g, "&amp;"))
      expect(refused, action).toMatch(/^(Tried to|The platform tried to) .+ \(refused: .+\)$/)
      const failedCall = headline(entry(action, 503, "unavailable"))
      expect(failedCall, action).toMatch(/\(failed: .+\)$/)
      expect(headline(entry(action, 200, null)), action).toBe(done.replace(/&/g, "&amp;"))
    }
  })

  it("should say an MCP tool call that ended in `error` was tried", () => {
    expect(headline(entry("edit_article", "error", "edit_conflict"))).toMatch(/^Tried to edit \(refused: /)
  })

  it("should keep the name a key's entry carries: “Tried to revoke an API key: “Reporting script””", () => {
    expect(headline(entry("POST /connect/keys/{id}/revoke “Reporting script”", 404, "not_found"))).toMatch(/^Tried to revoke an API key: “Reporting script” \(refused: /)
    expect(headline(entry("POST /connect/keys/{id}/revoke “Reporting script”", 303, null))).toBe("Revoked an API key: “Reporting script”")
  })

  it("should keep a wrong password's words, which say already that it was refused", () => {
    expect(headline(entry("POST / (sign in, wrong password)", 401, "unauthenticated"))).toBe("Sign-in with your email and a wrong password")
  })
})
