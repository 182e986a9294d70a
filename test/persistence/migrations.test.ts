import { AccountRepository } from "@content-site/core"
import { DataDirLocked, openDatabase, processStartTime } from "@content-site/orm"
import { ManagedRuntime } from "effect"
import { mkdirSync, writeFileSync } from "node:fs"
import pg from "pg"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTempDir, createTestDatabase } from "../support/databases.ts"
import { runNode, spawnNode, waitForLine } from "../support/processes.ts"

const account = (id: string) => ({ id, email: `${id}@example.test`, name: id, password_hash: "h", created_at: "2026-11-01T00:00:00.000Z" })

// Each case starts Node processes or opens a database: on a shared, loaded 2-core machine (CI is one)
// that alone has taken 20 s, so a case gets 120 s. A wait for work to finish, not a speed check.
describe("migrations on PostgreSQL", { timeout: 120_000 }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterAll(async () => {
    await database?.drop()
  })

  it("should migrate on open to a schema with no pending diff, and migrate again as a no-op", async () => {
    const db = await openDatabase({ databaseUrl: database.url })
    try {
      expect(await db.schemaDiff()).toBe("")
      await db.migrate()
      expect(await db.schemaDiff()).toBe("")
      expect(await db.ready()).toBe(true)
      // no account yet: what the demo seeding asks (AccountRepository.hasAny)
      const rt = ManagedRuntime.make(db.layer)
      expect(await rt.runPromise(AccountRepository.use((r) => r.hasAny))).toBe(false)
      await rt.dispose()
    } finally {
      await db.close()
    }
  })

  it("should open a database this release migrated whatever its migrations are recorded as: with a file extension, or under a name a migration had before a rename", async () => {
    const sql = new pg.Client({ connectionString: database.url })
    await sql.connect()
    try {
      await (await openDatabase({ databaseUrl: database.url })).close()
      await sql.query("update mikro_orm_migrations set name = name || '.ts' where name = 'Migration20261129220000_searchSoftHyphen'")
      // the name the release of 4b9adf2 recorded (the same statements, renamed in 0367bfc)
      await sql.query("update mikro_orm_migrations set name = 'Migration20261124090000_partitionedActivity' where name = 'Migration20261124000000_partitionedActivity'")
      const db = await openDatabase({ databaseUrl: database.url })
      try {
        expect(await db.schemaDiff()).toBe("")
        await db.migrate()
      } finally {
        await db.close()
      }
      const names = (await sql.query<{ name: string }>("select name from mikro_orm_migrations where name like '%partitionedActivity%'")).rows.map((r) => r.name)
      expect(names).toEqual(["Migration20261124000000_partitionedActivity"])
    } finally {
      await sql.end()
    }
  })

  it("should report a search column that is missing, not generated or generated from something else (they are not entity properties)", async () => {
    const db = await openDatabase({ databaseUrl: database.url })
    const sql = new pg.Client({ connectionString: database.url })
    await sql.connect()
    try {
      await sql.query("alter table articles drop column title_vector")
      expect(await db.schemaDiff()).toMatch(/^-- articles\.title_vector should be a tsvector generated from .*; found no column$/m)
      await sql.query("alter table articles add column title_vector tsvector")
      expect(await db.schemaDiff()).toMatch(/^-- articles\.title_vector should be .*; found tsvector not generated$/m)
      await sql.query("alter table articles drop column title_vector")
      await sql.query("alter table articles add column title_vector tsvector generated always as (to_tsvector('simple'::regconfig, title)) stored")
      expect(await db.schemaDiff()).toMatch(/^-- articles\.title_vector should be .*; found tsvector to_tsvector\('simple'::regconfig, title\) stored$/m)
      // beside it, only the title's index (dropped with its column) is missing: the other search
      // column, and the rest of the schema, still compare equal
      expect((await db.schemaDiff()).split("\n").slice(1)).toEqual([expect.stringMatching(/^create index "articles_title_search_index" on "articles" using gin \("title_vector"\);?$/)])
      await sql.query("alter table articles drop column title_vector")
      await sql.query("alter table articles add column title_vector tsvector generated always as (to_tsvector('cs_search'::regconfig, cs_search_plain(title))) stored")
      await sql.query(`create index "articles_title_search_index" on "articles" using gin ("title_vector")`)
      expect(await db.schemaDiff()).toBe("")
    } finally {
      await sql.end()
      await db.close()
    }
  })
})

// Each case starts Node processes or opens a database: on a shared, loaded 2-core machine (CI is one)
// that alone has taken 20 s, so a case gets 120 s. A wait for work to finish, not a speed check.
describe("embedded PGlite database", { timeout: 120_000 }, () => {
  const temp = createTempDir()
  afterAll(() => temp.remove())

  it("should migrate to a schema with no pending diff and keep data across restarts", async () => {
    const dir = join(temp.dir, "restart")
    const first = await openDatabase({ dataDir: dir })
    expect(await first.schemaDiff()).toBe("")
    const rt = ManagedRuntime.make(first.layer)
    await rt.runPromise(AccountRepository.use((r) => r.insert(account("acc_persisted"))))
    await rt.dispose()
    await first.close()

    const second = await openDatabase({ dataDir: dir })
    try {
      const rt2 = ManagedRuntime.make(second.layer)
      expect(await rt2.runPromise(AccountRepository.use((r) => r.hasAny))).toBe(true)
      const found = await rt2.runPromise(AccountRepository.use((r) => r.get("acc_persisted")))
      await rt2.dispose()
      expect(found.email).toBe("acc_persisted@example.test")
      expect(await second.schemaDiff()).toBe("")
    } finally {
      await second.close()
    }
  })

  it("should refuse a second opening of the same data directory in this process", async () => {
    const dir = join(temp.dir, "restart")
    const db = await openDatabase({ dataDir: dir })
    try {
      const error = await openDatabase({ dataDir: dir }).then(
        () => null,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(DataDirLocked)
    } finally {
      await db.close()
    }
  })

  it("should make a second process refuse the data directory with a clear message", async () => {
    const dir = join(temp.dir, "shared")
    const holder = spawnNode("test/persistence/fixtures/open-data-dir.ts", [dir, "hold"])
    try {
      await waitForLine(holder, /^opened$/)
      const second = await runNode("test/persistence/fixtures/open-data-dir.ts", [dir])
      expect(second.code).toBe(3)
      expect(second.stderr).toContain(`in use by process ${holder.pid}`)
    } finally {
      holder.kill("SIGKILL")
      await new Promise((r) => holder.once("exit", r))
    }
    // the holder was killed without releasing its lock: the lock is stale and taken over
    const third = await runNode("test/persistence/fixtures/open-data-dir.ts", [dir])
    expect(third.stderr).toBe("")
    expect(third.code).toBe(0)
    // three processes each open the embedded database: generous on a loaded machine (a wait, not a speed check)
  }, 120_000)

  it("should take over a lock file left by a process that is gone", async () => {
    const dir = join(temp.dir, "shared")
    const gone = spawnNode("-e", ["0"])
    await new Promise((r) => gone.once("exit", r))
    writeFileSync(join(dir, "LOCK"), `${gone.pid}\n`)
    const db = await openDatabase({ dataDir: dir })
    expect(await db.ready()).toBe(true)
    await db.close()
  })

  it("should take over a lock whose pid now belongs to another process, and respect one whose owner still runs", async () => {
    const dir = join(temp.dir, "reused")
    const other = spawnNode("-e", ["setTimeout(() => {}, 60_000)"])
    try {
      await new Promise((r) => other.once("spawn", r))
      const started = processStartTime(other.pid!)
      expect(started).toMatch(/^\d+$/)
      // the lock names a live pid that started at another time: the lock's owner is gone, its pid reused
      mkdirSync(dir, { recursive: true })
      writeFileSync(join(dir, "LOCK"), `${other.pid} ${Number(started) - 1}\n`)
      const db = await openDatabase({ dataDir: dir })
      expect(await db.ready()).toBe(true)
      await db.close()
      // the same pid with its real start time: the owner runs, so the directory is refused
      writeFileSync(join(dir, "LOCK"), `${other.pid} ${started}\n`)
      const error = await openDatabase({ dataDir: dir }).then(
        () => null,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(DataDirLocked)
    } finally {
      other.kill("SIGKILL")
      await new Promise((r) => other.once("exit", r))
    }
  })
})
