import { ArticleRepository, ArticleWriter, DataImporter, IdempotencyStore, LimitStore } from "@content-site/core"
import { openDatabase, type OrmDatabase } from "@content-site/orm"
import { Cause, Effect, Exit, ManagedRuntime, type Layer } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, databaseUrl } from "../support/databases.ts"
import { eventually } from "../support/eventually.ts"
import { spawnNode, waitForLine } from "../support/processes.ts"
import { detailOf, tagOf } from "../support/exits.ts"
import { startPostgresProxy, type TcpProxy } from "../support/tcpProxy.ts"
import { bigBudget, changeOf, worldPlan } from "./fixtures/world.ts"


describe("database faults", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let proxy: TcpProxy
  let db: OrmDatabase
  let runtime: ManagedRuntime.ManagedRuntime<Layer.Success<OrmDatabase["layer"]>, never>

  beforeAll(async () => {
    database = await createTestDatabase()
    let viaProxy: string
    ;({ proxy, url: viaProxy } = await startPostgresProxy(database.url))
    db = await openDatabase({ databaseUrl: viaProxy, connectTimeoutMs: 1000, statementTimeoutMs: 2000 })
    runtime = ManagedRuntime.make(db.layer)
    await runtime.runPromise(DataImporter.use((i) => i.apply(worldPlan("acc_fault", 4))))
  })
  afterAll(async () => {
    await runtime?.dispose()
    await db?.close()
    await proxy?.close()
    await database?.drop()
  })

  const read = () => runtime.runPromiseExit(ArticleRepository.use((r) => r.get("acc_fault", "acc_fault_art0")))
  const edit = (title: string) =>
    runtime.runPromiseExit(
      ArticleWriter.use((w) => w.change("acc_fault", "acc_fault_art0", bigBudget, (c) => Effect.succeed(changeOf(c, title)))),
    )
  /** Polls until it succeeds: the first calls after a return may still meet a connection the outage broke. */
  const recovered = async (f: () => Promise<Exit.Exit<unknown, unknown>>) => eventually(async () => tagOf(await f()), (tag) => tag === "success", 10_000)

  it("should answer Unavailable while the database refuses connections and recover without a restart", async () => {
    expect(tagOf(await read())).toBe("success")
    await proxy.cut("refuse")
    try {
      const refused = await read()
      expect(tagOf(refused)).toBe("Unavailable")
      // the answer says to retry, not where the database is (the driver's message names its address)
      expect(detailOf(refused)).toBe("The database cannot answer now; nothing was changed. Retry in a few seconds.")
      const editRefused = await edit("during outage")
      expect(tagOf(editRefused)).toBe("Unavailable")
      // (a change's commit may be written with its answer lost: never "nothing was changed")
      expect(detailOf(editRefused)).toBe("The database cannot answer now; the change was saved whole or not at all. Retry in a few seconds: with the same Idempotency-Key (or If-Match), a retry cannot apply it twice.")
      expect(tagOf(await runtime.runPromiseExit(LimitStore.use((l) => l.hit("k", 5, 60))))).toBe("Unavailable")
      expect(await db.ready()).toBe(false)
    } finally {
      await proxy.restore()
    }
    expect(await recovered(read)).toBe("success")
    expect(tagOf(await edit("after outage"))).toBe("success")
    expect(await db.ready()).toBe(true)
    const article = await runtime.runPromise(ArticleRepository.use((r) => r.get("acc_fault", "acc_fault_art0")))
    expect(article).toMatchObject({ title: "after outage", revision: 2 })
  })

  it("should free an idempotency key whose release met the outage once the database returns, so that the retry the 503 invites runs", async () => {
    // reserved, then the request's change met the outage (503, nothing applied) and so did the
    // release of its key: the retry with the same key a few seconds later must run, not be told for
    // the key's whole lease (5 minutes) that its request "is still being processed"
    const times = () => ({ nowMs: Date.now(), leaseUntilMs: Date.now() + 5 * 60_000, expiresAtMs: Date.now() + 24 * 3_600_000 })
    const reserve = () => runtime.runPromise(IdempotencyStore.use((s) => s.reserve("acc_fault", "key-outage", "fp-1", times())))
    const first = await reserve()
    expect(first.kind).toBe("reserved")
    const token = first.kind === "reserved" ? first.token : ""
    await proxy.cut("refuse")
    try {
      expect(tagOf(await runtime.runPromiseExit(IdempotencyStore.use((s) => s.release("acc_fault", "key-outage", token))))).toBe("Unavailable")
    } finally {
      await proxy.restore()
    }
    const again = async () => {
      const exit = await runtime.runPromiseExit(IdempotencyStore.use((s) => s.reserve("acc_fault", "key-outage", "fp-1", times())))
      return Exit.isSuccess(exit) ? exit.value.kind : tagOf(exit)
    }
    expect(await eventually(again, (kind) => kind === "reserved", 15_000)).toBe("reserved")
  })

  it("should keep the answer of a request whose keeping met the outage once the database returns, so that a retry with its key gets it", async () => {
    // the request's change was made and answered, then keeping its answer met the outage: a retry
    // with the same key must get that answer once the database is back, not a 409 "still being
    // processed" for the key's whole lease
    const times = () => ({ nowMs: Date.now(), leaseUntilMs: Date.now() + 5 * 60_000, expiresAtMs: Date.now() + 24 * 3_600_000 })
    const first = await runtime.runPromise(IdempotencyStore.use((s) => s.reserve("acc_fault", "key-kept", "fp-1", times())))
    expect(first.kind).toBe("reserved")
    const token = first.kind === "reserved" ? first.token : ""
    const answer = { status: 422, headers: { "Content-Type": "application/problem+json" }, body: '{"code":"protected_link_changed"}' }
    await proxy.cut("refuse")
    try {
      expect(tagOf(await runtime.runPromiseExit(IdempotencyStore.use((s) => s.complete("acc_fault", "key-kept", token, answer))))).toBe("Unavailable")
    } finally {
      await proxy.restore()
    }
    const again = async () => {
      const exit = await runtime.runPromiseExit(IdempotencyStore.use((s) => s.reserve("acc_fault", "key-kept", "fp-1", times())))
      return Exit.isSuccess(exit) ? exit.value : { kind: tagOf(exit) }
    }
    const kept = await eventually(again, (r) => r.kind === "completed", 15_000)
    expect(kept).toMatchObject({ kind: "completed", answer })
  })

  it("should answer Unavailable within the connect timeout when the database never answers", async () => {
    await proxy.cut("blackhole")
    try {
      expect(tagOf(await read())).toBe("Unavailable")
      expect(tagOf(await edit("into the void"))).toBe("Unavailable")
    } finally {
      await proxy.restore()
    }
    expect(await recovered(read)).toBe("success")
    const article = await runtime.runPromise(ArticleRepository.use((r) => r.get("acc_fault", "acc_fault_art0")))
    expect(article.title).not.toBe("into the void")
  })

  it("should answer a value the database refuses as a defect, not Unavailable, and stay ready", async () => {
    // Input the core failed to validate: PostgreSQL has no year 0, and a text value holds no NUL.
    const list = await runtime.runPromiseExit(
      ArticleRepository.use((r) => r.list("acc_fault", { siteId: "acc_fault_site", from: "0000-01-01T00:00:00.000Z" }, undefined)),
    )
    expect(tagOf(list)).toBe("defect")
    expect(Exit.isFailure(list) && Cause.pretty(list.cause)).toMatch(/out of range/)
    const nul = await edit("a\u0000b")
    expect(tagOf(nul)).toBe("defect")
    expect(await db.ready()).toBe(true)
    const article = await runtime.runPromise(ArticleRepository.use((r) => r.get("acc_fault", "acc_fault_art0")))
    expect(article.title).not.toContain("\u0000")
  })

  it("should write nothing of an import whose last row the database refuses", async () => {
    // A plan the core would not make (an id past its column's 128 characters), so that the
    // database refuses the very last statement of the transaction: the account, its sites,
    // articles and first revisions written before it are rolled back with it.
    const plan = worldPlan("acc_half", 2)
    const refused = { ...plan, backlinks: [{ id: "b".repeat(200), account_id: "acc_half", site_id: plan.sites[0]!.id, date_acquired: "2026-11-01", source_domain: "x.test", source_url: "https://x.test/a", target_url: "https://y.test/b", anchor_text: "a", anchor_type: "exact", category: "blog" }] }
    expect(tagOf(await runtime.runPromiseExit(DataImporter.use((i) => i.apply(refused as typeof plan))))).toBe("defect")
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      const counts = await client.query<{ accounts: number; sites: number; articles: number; revisions: number }>(
        `select (select count(*)::int from accounts where id = 'acc_half') as accounts,
                (select count(*)::int from sites where account_id = 'acc_half') as sites,
                (select count(*)::int from articles where account_id = 'acc_half') as articles,
                (select count(*)::int from revisions r join articles a on a.id = r.article_id where a.account_id = 'acc_half') as revisions`,
      )
      expect(counts.rows[0]).toEqual({ accounts: 0, sites: 0, articles: 0, revisions: 0 })
    } finally {
      await client.end()
    }
    // the same plan without the refused row imports whole
    expect(await runtime.runPromise(DataImporter.use((i) => i.apply(plan)))).toMatchObject({ created: { accounts: 1, articles: 2 } })
  })

  it("should leave no partial state when a process is killed in the middle of edits", async () => {
    const articles = ["acc_fault_art1", "acc_fault_art2", "acc_fault_art3"]
    const child = spawnNode("test/persistence/fixtures/edit-loop.ts", [databaseUrl(database.name), "acc_fault", ...articles])
    try {
      await waitForLine(child, /^committed 30$/)
    } finally {
      child.kill("SIGKILL")
      await new Promise((r) => child.once("exit", r))
    }
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      // an uncommitted transaction of the killed process is invisible here and rolled back by the server
      const rows = await client.query<{ id: string; revision: number; title: string; max: number; n: number; last_title: string }>(
        `select a.id, a.revision, a.title, max(r.number)::int as max, count(r.*)::int as n,
                (select title from revisions x where x.article_id = a.id order by number desc limit 1) as last_title
           from articles a join revisions r on r.article_id = a.id
          where a.id = any($1) group by a.id`,
        [articles],
      )
      let edits = 0
      for (const row of rows.rows) {
        expect(row.revision).toBe(row.max) // the article points at its newest revision
        expect(row.n).toBe(row.max) // numbers 1..max, no gaps
        expect(row.title).toBe(row.last_title) // and holds that revision's content
        edits += row.max - 1
      }
      expect(edits).toBeGreaterThanOrEqual(30)
      const activity = await client.query("select count(*)::int as n from activity where article_id = any($1)", [articles])
      expect(activity.rows[0].n).toBe(edits)
    } finally {
      await client.end()
    }
  })
})

describe("the connection pool through outages", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let proxy: TcpProxy
  let db: OrmDatabase | undefined
  let runtime: ManagedRuntime.ManagedRuntime<Layer.Success<OrmDatabase["layer"]>, never>

  beforeAll(async () => {
    database = await createTestDatabase()
    let viaProxy: string
    ;({ proxy, url: viaProxy } = await startPostgresProxy(database.url))
    // a pool of 3: three connections kept for ever would leave no statement a connection
    db = await openDatabase({ databaseUrl: viaProxy, connectTimeoutMs: 1000, statementTimeoutMs: 2000, poolMax: 3 })
    runtime = ManagedRuntime.make(db.layer)
    await runtime.runPromise(DataImporter.use((i) => i.apply(worldPlan("acc_pool", 4))))
  })
  afterAll(async () => {
    await runtime?.dispose()
    await db?.close()
    await proxy?.close()
    await database?.drop()
  })

  let titles = 0
  const edit = (i: number) =>
    runtime.runPromiseExit(ArticleWriter.use((w) => w.change("acc_pool", `acc_pool_art${i % 4}`, bigBudget, (c) => Effect.succeed(changeOf(c, `title ${titles++}`)))))

  it("should give back the connections of transactions an outage ended, so that writes recover and the database closes", async () => {
    // Eight outages, each while twelve edits are in their transactions: every transaction whose
    // BEGIN, COMMIT or ROLLBACK met the cut kept its connection before (kysely-org/kysely#1990).
    const tags: Array<string> = []
    for (let round = 0; round < 8; round++) {
      const running = Array.from({ length: 12 }, (_, i) => edit(i))
      await new Promise((resolve) => setTimeout(resolve, 5 + round * 3))
      await proxy.cut("refuse")
      for (const exit of await Promise.all(running)) tags.push(tagOf(exit))
      await proxy.restore()
    }
    // the outages met edits in flight (else this case would prove nothing)
    expect(tags).toContain("Unavailable")
    // every article can be written again, without a restart
    for (let i = 0; i < 4; i++) expect(await eventually(async () => tagOf(await edit(i)), (tag) => tag === "success", 10_000)).toBe("success")
    const reads = await Promise.all(Array.from({ length: 6 }, (_, i) => runtime.runPromiseExit(ArticleRepository.use((r) => r.get("acc_pool", `acc_pool_art${i % 4}`)))))
    expect(reads.map(tagOf)).toEqual(Array.from({ length: 6 }, () => "success"))
    // and the pool ends: no connection is still lent out
    await runtime.dispose()
    const closing = db!.close().then(() => "closed")
    db = undefined
    expect(await Promise.race([closing, new Promise((resolve) => setTimeout(() => resolve("still waiting for a lent connection"), 8_000))])).toBe("closed")
  })
})
