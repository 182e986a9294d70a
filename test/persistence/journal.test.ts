/**
 * The activity journal on PostgreSQL: a call is answered once its entry is in this instance's
 * journal file; entries reach the table in background batches, through outages and read-only
 * failovers; a process killed under load leaves a journal that the next instance of the same
 * database writes, so every answered call has exactly one entry; two instances each list their own
 * entries at once and the other's once shipped. Only into their own database.
 */
import { ActivityLog, type ActivityRecord } from "@content-site/core"
import { openDatabase } from "@content-site/orm"
import { ManagedRuntime } from "effect"
import { spawn, type ChildProcess } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase } from "../support/databases.ts"
import { eventually } from "../support/eventually.ts"
import { nodeBin, repoRoot, waitForLine } from "../support/processes.ts"
import { startPostgresProxy, type TcpProxy } from "../support/tcpProxy.ts"
import { refusedCallEntry } from "./fixtures/world.ts"

/** Every line of every journal file under `dataDir`. */
const journaledLines = (dataDir: string): Array<string> => {
  const root = join(dataDir, "activity-journal")
  if (!existsSync(root)) return []
  return readdirSync(root).flatMap((db) =>
    readdirSync(join(root, db)).flatMap((f) => readFileSync(join(root, db, f), "utf8").split("\n").filter((l) => l !== "")),
  )
}

const until = (check: () => Promise<boolean> | boolean) => eventually(check, (ok) => ok, 10_000)

/** Starts `npm start`'s entry point and answers its URL and the demo API key it prints. */
const startServer = (env: Record<string, string>): Promise<{ child: ChildProcess; url: string; apiKey: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(nodeBin, ["apps/server/main.ts"], {
      cwd: repoRoot,
      env: { ...process.env, PORT: "0", HOST: "127.0.0.1", RATE_LIMIT_PER_MINUTE: "1000000", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    })
    let out = ""
    let errors = ""
    child.stderr!.on("data", (d) => (errors += d))
    child.stdout!.on("data", (d) => {
      out += d
      // (each up to what follows it: a chunk of the pipe may end inside the address or the key)
      const url = /listening on (\S+) /.exec(out)?.[1]
      const apiKey = /API key: (cs_\w+)["\s]/.exec(out)?.[1]
      if (url !== undefined && apiKey !== undefined) resolve({ child, url, apiKey })
    })
    child.on("exit", (code) => reject(new Error(`server exited (${code}): ${errors}`)))
  })

describe("activity journal on PostgreSQL", () => {
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
    dataDir = mkdtempSync(join(tmpdir(), "cs-journal-"))
  })
  afterAll(async () => {
    await admin?.end()
    await proxy?.restore()
    await proxy?.close()
    await database?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it("should answer a call during an outage once its entry is journaled, and write it when the database returns", async () => {
    // What the operator's log is told of the outage and its end (the service passes its pino logger).
    const events: Array<string> = []
    const log = { info: (_: object, msg: string) => events.push(`info ${msg}`), warn: (_: object, msg: string) => events.push(`warn ${msg}`), error: (_: object, msg: string) => events.push(`error ${msg}`) }
    const db = await openDatabase({ databaseUrl: viaProxy, dataDir, connectTimeoutMs: 1000, statementTimeoutMs: 2000, housekeepingIntervalMs: 0, log })
    const runtime = ManagedRuntime.make(db.layer)
    try {
      await proxy.cut("refuse")
      for (let i = 0; i < 3; i++) {
        // answered without the database: its entry is on disk already
        await runtime.runPromise(ActivityLog.use((l) => l.record(refusedCallEntry(`live_${i}`))))
        expect(journaledLines(dataDir).filter((l) => l.includes(`"live_${i}"`))).toHaveLength(1)
      }
      expect(await db.flushActivity().then(() => "shipped", () => "refused")).toBe("refused")
      expect(await stored("live_")).toBe(0)
      expect(db.activityBacklog()).toBe(3)
      await proxy.restore()
      // shipped by the background retries, unasked
      expect(await until(async () => (await stored("live_")) === 3)).toBe(true)
      expect(await until(() => db.activityBacklog() === 0)).toBe(true)
      const outage = events.indexOf("warn activity: the database refused the journal's entries; they wait on disk, retrying")
      const recovery = events.indexOf("info activity: the database takes the journal's entries again; shipping resumed")
      expect(outage).toBeGreaterThanOrEqual(0)
      expect(recovery).toBeGreaterThan(outage)
      // said once per outage, however many retries it took
      expect(events.filter((e) => e.startsWith("warn activity: the database refused"))).toHaveLength(1)
    } finally {
      await proxy.restore()
      await runtime.dispose()
      await db.close()
    }
    // closed with everything shipped: no journal file is left
    expect(journaledLines(dataDir)).toEqual([])
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
    expect(journaledLines(dataDir).filter((l) => l.includes('"killed_'))).toHaveLength(5)

    // an instance of another database on the same DATA_DIR leaves them alone
    const other = await createTestDatabase()
    try {
      const elsewhere = await openDatabase({ databaseUrl: other.url, dataDir, housekeepingIntervalMs: 0 })
      await elsewhere.close()
      expect(journaledLines(dataDir).filter((l) => l.includes('"killed_'))).toHaveLength(5)
    } finally {
      await other.drop()
    }

    // the next instance of this database writes them on start
    const next = await openDatabase({ databaseUrl: viaProxy, dataDir, housekeepingIntervalMs: 0 })
    await next.close()
    expect(await stored("killed_")).toBe(5)
    expect(journaledLines(dataDir)).toEqual([])
    // and a second start changes nothing
    const again = await openDatabase({ databaseUrl: viaProxy, dataDir, housekeepingIntervalMs: 0 })
    await again.close()
    expect(await stored("killed_")).toBe(5)
  }, 30_000)

  it("should count a refused call once when the next instance replays the journal of a process killed after shipping it", async () => {
    // 40 calls of one source: 30 entries of their own, then one summary entry counting the other 10
    const action = `GET /refused-${Date.now().toString(36)}`
    const counted = async () =>
      (await admin.query<{ n: number }>("select coalesce(sum(count), 0)::int as n from activity where action = $1", [action])).rows[0]!.n
    const child = spawn(nodeBin, ["test/persistence/fixtures/refusals-shipped.ts", database.url, dataDir, action, "40"], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] })
    try {
      await waitForLine(child, /^shipped 40$/)
    } finally {
      child.kill("SIGKILL")
      await new Promise((r) => child.once("exit", r))
    }
    expect(await counted()).toBe(40)
    // its journal file is left (not yet rotated), every line of it shipped
    expect(journaledLines(dataDir).filter((l) => l.includes(action)).length).toBeGreaterThan(0)
    const next = await openDatabase({ databaseUrl: database.url, dataDir, housekeepingIntervalMs: 0 })
    await next.close()
    expect(journaledLines(dataDir).filter((l) => l.includes(action))).toEqual([])
    // the summary's count is not added a second time
    expect(await counted()).toBe(40)
  }, 30_000)

  it("should keep entries while the database answers reads but refuses writes (a read-only failover), and write them after", async () => {
    const db = await openDatabase({ databaseUrl: database.url, dataDir, connectTimeoutMs: 1000, statementTimeoutMs: 2000, housekeepingIntervalMs: 0 })
    const runtime = ManagedRuntime.make(db.layer)
    const reconnect = () =>
      admin.query("select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()", [database.name])
    try {
      await admin.query(`alter database ${database.name} set default_transaction_read_only = on`)
      await reconnect()
      for (let i = 0; i < 4; i++) await runtime.runPromise(ActivityLog.use((l) => l.record(refusedCallEntry(`readonly_${i}`))))
      // the pool reconnects read-only: shipping is refused (the first attempts may meet a connection just cut)
      const refused = await eventually(() => db.flushActivity().then(() => false, () => true), (r) => r)
      expect(refused).toBe(true)
      expect(await stored("readonly_")).toBe(0)
      await admin.query(`alter database ${database.name} reset default_transaction_read_only`)
      await reconnect()
      expect(await until(async () => (await stored("readonly_")) === 4 && db.activityBacklog() === 0)).toBe(true)
    } finally {
      await admin.query(`alter database ${database.name} reset default_transaction_read_only`)
      await runtime.dispose()
      await db.close()
    }
  })

  it("should give every call answered before a SIGKILL under load exactly one entry, after the next instance starts", async () => {
    const killedDir = mkdtempSync(join(tmpdir(), "cs-journal-kill-"))
    const server = await startServer({ DATABASE_URL: database.url, DATA_DIR: killedDir })
    // holds the activity table for the last moments before the kill
    const locker = new pg.Client({ connectionString: database.url })
    await locker.connect()
    const answered: Array<string> = []
    let stop = false
    // A list of the activity ships the journal first (and would wait on the lock below): the last
    // moments before the kill are calls that do not.
    let flushing = true
    try {
      const paths = ["/api/v1/sites", "/api/v1/articles/art_missing", "/api/v1/activity?per_page=1"]
      const client = async (n: number) => {
        for (let i = 0; !stop; i++) {
          try {
            const path = paths[(n + i) % (flushing ? paths.length : paths.length - 1)]
            const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${server.apiKey}` } })
            await response.arrayBuffer()
            if (response.status === 200 || response.status === 404) answered.push(response.headers.get("x-request-id")!)
          } catch {
            return // the server is gone
          }
        }
      }
      const clients = Array.from({ length: 8 }, (_, n) => client(n))
      // under load until a few hundred calls are answered, a hundred more without activity lists
      // while no batch can reach the table (a batch in flight waits on the lock), then killed
      // mid-flight: the entries of those calls are in the journal only when the kill comes
      expect(await eventually(() => answered.length, (n) => n >= 300, 20_000)).toBeGreaterThanOrEqual(300)
      flushing = false
      await locker.query("begin")
      await locker.query("lock table activity in exclusive mode")
      const switched = answered.length
      expect(await eventually(() => answered.length, (n) => n >= switched + 100, 20_000)).toBeGreaterThanOrEqual(switched + 100)
      server.child.kill("SIGKILL")
      await Promise.all(clients)
    } finally {
      stop = true
      server.child.kill("SIGKILL")
      // the killed instance's batch waiting on the lock goes with it (its backend does not know yet)
      await admin.query("select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'", [database.name])
      await locker.query("rollback")
      await locker.end()
    }
    const counts = async () =>
      new Map(
        (
          await admin.query<{ id: string; n: number }>("select request_id as id, count(*)::int as n from activity where request_id = any($1) group by 1", [answered])
        ).rows.map((r) => [r.id, r.n]),
      )
    // the entries of the last moments were still in the journal only
    expect((await counts()).size).toBeLessThan(answered.length)
    const next = await openDatabase({ databaseUrl: database.url, dataDir: killedDir, housekeepingIntervalMs: 0 })
    await next.close()
    const after = await counts()
    expect(answered.filter((id) => after.get(id) !== 1)).toEqual([])
    const doubled = await admin.query("select channel, request_id from activity group by 1, 2 having count(*) > 1")
    expect(doubled.rows).toEqual([])
    rmSync(killedDir, { recursive: true, force: true })
  }, 60_000)

  it("should list an instance's own entries at once and the other instance's once shipped, each once", async () => {
    const dirs = [mkdtempSync(join(tmpdir(), "cs-journal-a-")), mkdtempSync(join(tmpdir(), "cs-journal-b-"))]
    // B ships only when asked (a long wait for company), so its entries stay in its journal meanwhile
    const a = await openDatabase({ databaseUrl: database.url, dataDir: dirs[0]!, housekeepingIntervalMs: 0 })
    const b = await openDatabase({ databaseUrl: database.url, dataDir: dirs[1]!, housekeepingIntervalMs: 0, journal: { shipEveryMs: 60_000 } })
    const [ra, rb] = [ManagedRuntime.make(a.layer), ManagedRuntime.make(b.layer)]
    const account = `acc_two_${Date.now().toString(36)}`
    const entry = (requestId: string): ActivityRecord => ({ ...refusedCallEntry(requestId), account_id: account })
    const listed = async (r: typeof ra) =>
      (await r.runPromise(ActivityLog.use((l) => l.list(account, {}, { offset: 0, limit: 100 })))).items.map((e) => e.request_id).sort()
    try {
      await ra.runPromise(ActivityLog.use((l) => l.record(entry("two_a1"))))
      await rb.runPromise(ActivityLog.use((l) => l.record(entry("two_b1"))))
      // each instance sees what it journaled itself (its list ships first), not yet the other's
      expect(await listed(ra)).toEqual(["two_a1"])
      expect(await listed(rb)).toEqual(["two_a1", "two_b1"])
      await ra.runPromise(ActivityLog.use((l) => l.record(entry("two_a2"))))
      await rb.runPromise(ActivityLog.use((l) => l.record(entry("two_b2"))))
      await b.flushActivity()
      expect(await eventually(() => listed(ra), (ids) => ids.length === 4)).toEqual(["two_a1", "two_a2", "two_b1", "two_b2"])
      expect(await listed(rb)).toEqual(["two_a1", "two_a2", "two_b1", "two_b2"])
    } finally {
      await ra.dispose()
      await rb.dispose()
      await a.close()
      await b.close()
      for (const d of dirs) rmSync(d, { recursive: true, force: true })
    }
  })
})
