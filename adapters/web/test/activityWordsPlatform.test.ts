/** The activity page's words for what the platform's operator did on an account (`npm run admin -- key ...`). */
import type { ActivityEntry } from "@content-site/core"
import { describe, expect, it } from "vitest"
import { CHANGE_ACTIONS, entryWords, whoWords } from "../src/activityWords.ts"

const entry = (action: string): ActivityEntry => ({
  id: "act_1",
  account_id: "acc_1",
  at: "2026-11-30T01:00:00Z",
  channel: "platform",
  actor: { type: "platform", id: "admin", name: "Administrator" },
  action,
  site_id: null,
  article_id: null,
  status: "ok",
  error_code: null,
  duration_ms: 0,
  request_id: "adm_1",
  count: 1,
})

describe("activity words for the administrator's key changes", () => {
  it("should say in words that the administrator created or revoked a key, with its name", () => {
    expect(entryWords(entry("key create “deploy”"))).toBe("Created an API key: “deploy”")
    expect(entryWords(entry("key revoke “deploy”"))).toBe("Revoked an API key: “deploy”")
    expect(whoWords(entry("key create “deploy”"))).toBe("Administrator")
  })

  it("should count them as changes (the page's \"changes only\" filter)", () => {
    expect(CHANGE_ACTIONS).toContain("key create")
    expect(CHANGE_ACTIONS).toContain("key revoke")
  })
})
