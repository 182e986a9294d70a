/**
 * Activity entries of calls answered while PostgreSQL is away or refuses writes: spooled to local disk before the
 * call is answered, written when the database returns (and the spool emptied), and written by the
 * next instance to start when the process was killed during the outage. Only into their own
 * database.
 */
import { ActivityLog } from "@content-site/core"
import { openDatabase } from "@content-site/orm"
import { ManagedRuntime } from "effect"
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase } from "../support/databases.ts"
import { tagOf } from "../support/exits.ts"
import { nodeBin, repoRoot, waitForLine } from "../support/processes.ts"
import { eventually } from "../support/eventually.ts"
import { startPostgresProxy, type TcpProxy } from "../support/tcpProxy.ts"
import { refusedCallEntry } from "./fixtures/world.ts"

/** Every line of every spool file under `dataDir`. */
const spooledLines = (dataDir: string): Array<string> => {
  const root = join(dataDir, "activity-spool")
  if (!existsSync(root)) return []
  return readdirSync(root).flatMap((db) =>
    readdirSync(join(root, db)).flatMap((f) => readFileSync(join(root, db, f), "utf8").split("\n").filter((l) => l !== "")),
  )
}

const until = (check: () => Promise<boolean> | boolean) => eventually(check, (ok) => ok, 10_000)

describe("activity spool during a PostgreSQL outage", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let proxy: TcpProxy
  let viaProxy: string
  let admin: pg.Client
  let dataDir: string
  const stored = async (prefix: string) =>
    (await admin.query<{ n: number }>("select count(*)::int as n from activity where request_id like $1", [`${prefix}%`])).rows[0]!.n

  beforeAll(async () => {
    database = await createTestDatabase()
    ;({ proxy, url: viaProxy } = await startPostgresProxy(database.url))
    admin = new pg.Client({ connectionString: database.url })
    await admin.connect()
    dataDir = mkdtempSync(join(tmpdir(), "cs-spool-"))
  })
  afterAll(async () => {
    await admin?.end()
    await proxy?.restore()
    await proxy?.close()
    await database?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it("should spool each entry before the call is answered, write them when the database returns and empty the spool", async () => {
    const db = await openDatabase({ databaseUrl: viaProxy, dataDir, connectTimeoutMs: 1000, statementTimeoutMs: 2000, housekeepingIntervalMs: 0 })
    const runtime = ManagedRuntime.make(db.layer)
    try {
      await proxy.cut("refuse")
      for (let i = 0; i < 3; i++) {
        expect(tagOf(await runtime.runPromiseExit(ActivityLog.use((l) => l.record(refusedCallEntry(`live_${i}`)))))).toBe("Unavailable")
        // answered: its entry is on disk already
        expect(spooledLines(dataDir).filter((l) => l.includes(`"live_${i}"`))).toHaveLength(1)
      }
      expect(await stored("live_")).toBe(0)
      await proxy.restore()
      expect(await until(async () => (await stored("live_")) === 3)).toBe(true)
      expect(await until(() => spooledLines(dataDir).length === 0)).toBe(true)
    } finally {
      await proxy.restore()
      await runtime.dispose()
      await db.close()
    }
  })

  it("should write the entries of a process killed during the outage when the next instance starts, once", async () => {
    const child = spawn(nodeBin, ["test/persistence/fixtures/record-during-outage.ts", viaProxy, dataDir, "killed", "5"], {
      cwd: repoRoot,
      stdio: ["pipe", "pipe", "pipe"],
    })
    try {
      await waitForLine(child, /^ready$/)
      await proxy.cut("refuse")
      child.stdin!.write("record\n")
      await waitForLine(child, /^answered 5$/)
      child.kill("SIGKILL")
      await new Promise((r) => child.once("exit", r))
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      await proxy.restore()
    }
    expect(await stored("killed_")).toBe(0)
    expect(spooledLines(dataDir).filter((l) => l.includes('"killed_'))).toHaveLength(5)

    // an instance of another database on the same DATA_DIR leaves them alone
    const other = await createTestDatabase()
    try {
      const elsewhere = await openDatabase({ databaseUrl: other.url, dataDir, housekeepingIntervalMs: 0 })
      await elsewhere.close()
      expect(spooledLines(dataDir).filter((l) => l.includes('"killed_'))).toHaveLength(5)
    } finally {
      await other.drop()
    }

    // the next instance of this database writes them on start
    const next = await openDatabase({ databaseUrl: viaProxy, dataDir, housekeepingIntervalMs: 0 })
    await next.close()
    expect(await stored("killed_")).toBe(5)
    expect(spooledLines(dataDir)).toEqual([])
    // and a second start changes nothing
    const again = await openDatabase({ databaseUrl: viaProxy, dataDir, housekeepingIntervalMs: 0 })
    await again.close()
    expect(await stored("killed_")).toBe(5)
  }, 30_000)

  it("should spool entries while the database answers reads but refuses writes (a read-only failover), and write them after", async () => {
    const db = await openDatabase({ databaseUrl: database.url, dataDir, connectTimeoutMs: 1000, statementTimeoutMs: 2000, housekeepingIntervalMs: 0 })
    const runtime = ManagedRuntime.make(db.layer)
    const reconnect = () =>
      admin.query("select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()", [database.name])
    try {
      await admin.query(`alter database ${database.name} set default_transaction_read_only = on`)
      await reconnect()
      // the pool reconnects read-only: the first attempts may meet a connection that was just cut
      let tag = ""
      let attempts = 0
      while (attempts < 20 && tag !== "Unavailable") {
        tag = tagOf(await runtime.runPromiseExit(ActivityLog.use((l) => l.record(refusedCallEntry(`readonly_${attempts++}`)))))
      }
      expect(tag).toBe("Unavailable")
      expect(spooledLines(dataDir).some((l) => l.includes('"readonly_'))).toBe(true)
      await admin.query(`alter database ${database.name} reset default_transaction_read_only`)
      await reconnect()
      // every entry recorded is written in the end, and the spool is empty
      expect(await until(async () => (await stored("readonly_")) === attempts && spooledLines(dataDir).length === 0)).toBe(true)
    } finally {
      await admin.query(`alter database ${database.name} reset default_transaction_read_only`)
      await runtime.dispose()
      await db.close()
    }
  })
})

