import { ActivityLog, ArticleRepository, DataImporter, RevisionRepository } from "@content-site/core"
import { openDatabase } from "@content-site/orm"
import { ManagedRuntime } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { spawnNode, waitForLine } from "../support/processes.ts"
import { worldPlan } from "./fixtures/world.ts"

/** The embedded database (PGlite) must survive a SIGKILL in the middle of edits like PostgreSQL does. */
describe("embedded database killed mid-edit", () => {
  let dataDir: string
  const account = "acc_pgkill"
  const articles = [`${account}_art1`, `${account}_art2`]

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "cs-pglite-kill-"))
    const db = await openDatabase({ dataDir })
    const runtime = ManagedRuntime.make(db.layer)
    await runtime.runPromise(DataImporter.use((i) => i.apply(worldPlan(account, 3))))
    await runtime.dispose()
    await db.close()
  }, 60_000)
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true })
  })

  it("should reopen after the kill with every article at its newest whole revision and one activity entry per edit", async () => {
    const child = spawnNode("test/persistence/fixtures/edit-loop.ts", [dataDir, account, ...articles])
    try {
      await waitForLine(child, /^committed 20$/)
    } finally {
      child.kill("SIGKILL")
      await new Promise((r) => child.once("exit", r))
    }
    // The killed process's lock is stale (its pid is gone): the directory opens again.
    const db = await openDatabase({ dataDir })
    const runtime = ManagedRuntime.make(db.layer)
    try {
      let edits = 0
      for (const id of articles) {
        const article = await runtime.runPromise(ArticleRepository.use((r) => r.get(account, id)))
        const revisions = await runtime.runPromise(RevisionRepository.use((r) => r.list(account, id, { offset: 0, limit: 1000 })))
        expect(revisions.total).toBe(article.revision) // numbers 1..n, no gaps
        expect(revisions.items[0]?.number).toBe(article.revision) // the article points at its newest revision
        expect(revisions.items[0]?.title).toBe(article.title) // and holds that revision's content
        edits += article.revision - 1
      }
      expect(edits).toBeGreaterThanOrEqual(20)
      let logged = 0
      for (const id of articles) {
        logged += (await runtime.runPromise(ActivityLog.use((l) => l.list(account, { articleId: id }, { offset: 0, limit: 1 })))).total
      }
      expect(logged).toBe(edits)
    } finally {
      await runtime.dispose()
      await db.close()
    }
  }, 120_000)
})
