import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { json, startTestServer, type TestServer } from "./helpers.ts"

// A writer that holds the article longer than EDIT_LOCK_TIMEOUT_MS makes the next edit lose the
// race: it must get 409 edit_conflict, never a 500 and never a half-written change.
let t: TestServer
beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PER_MINUTE: "100000", EDIT_LOCK_TIMEOUT_MS: "300" })
})
afterAll(async () => {
  await t?.close()
})

describe("PUT /articles/{id} against a concurrent writer", () => {
  it("should answer 409 edit_conflict when the article stays locked, write nothing, then apply once it is free", async () => {
    const holder = new pg.Client({ connectionString: t.databaseUrl })
    await holder.connect()
    try {
      await holder.query("begin")
      const locked = await holder.query("select id from articles where id = $1 for update", ["art_a03"])
      expect(locked.rowCount).toBe(1)
      const res = await t.api("/api/v1/articles/art_a03", {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ title: "Loser" }),
      })
      expect(res.status).toBe(409)
      const problem = await json(res)
      expect(problem.code).toBe("edit_conflict")
      expect(problem.request_id).toBe(res.headers.get("x-request-id"))
    } finally {
      await holder.query("rollback").catch(() => {})
      await holder.end()
    }
    const after = await json(await t.api("/api/v1/articles/art_a03"))
    expect(after.title).not.toBe("Loser")
    expect(after.revision).toBe(1)
    const revisions = await json(await t.api("/api/v1/articles/art_a03/revisions"))
    expect(revisions.pagination.total).toBe(1)
    const log = await json(await t.api("/api/v1/activity?per_page=100"))
    expect(log.data.some((e: { status: number; error_code: string | null }) => e.status === 409 && e.error_code === "edit_conflict")).toBe(true)
    const retry = await t.api("/api/v1/articles/art_a03", {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ title: "Winner" }),
    })
    expect(retry.status).toBe(200)
    expect((await json(retry)).revision.number).toBe(2)
  })
})
