/**
 * The ORM adapter's in-process shortcuts against a real PostgreSQL shared by two instances: the
 * API-key, grant and account caches and the auth-failure knowledge (kept honest by LISTEN/NOTIFY,
 * changes made by hand in SQL included, through the tables' triggers), leased request counting,
 * and the activity group commit (an answered record is a written entry, flush on close,
 * survival of an outage).
 */
import { AccountRepository, ActivityLog, ApiKeyRepository, LimitStore, OAuthStore, type ActivityRecord, type ApiKeyRecord, type LimitVerdict } from "@content-site/core"
import { openDatabase, type OrmDatabase } from "@content-site/orm"
import { Effect, ManagedRuntime, Option } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase } from "../support/databases.ts"
import { testClock } from "../support/clock.ts"
import { eventually } from "../support/eventually.ts"
import { startPostgresProxy } from "../support/tcpProxy.ts"
import { openTwoInstances, type TwoInstances } from "./fixtures/instances.ts"

const ACCOUNT = "acc_cache"
/** Long windows, so no test straddles a window boundary. */
const WINDOW = 1_000_000
/** The listener's application_name (adapters/orm/src/bus.ts). */
const LISTENER = "cs_events_listener"

let counter = 0
const uid = (prefix: string) => `${prefix}_${Date.now().toString(36)}_${(counter++).toString(36)}_${Math.random().toString(36).slice(2, 6)}`

const keyRecord = (id: string): ApiKeyRecord => ({
  id,
  account_id: ACCOUNT,
  name: id,
  scope: "write",
  key_hash: `hash_${id}`,
  created_at: "2026-11-01T00:00:00.000Z",
  last_used_at: null,
  revoked_at: null,
})

const entry = (requestId: string): ActivityRecord => ({
  id: uid("act"),
  account_id: ACCOUNT,
  at: new Date().toISOString(),
  channel: "api",
  actor: { type: "api_key", id: "key_x", name: "x" },
  action: "GET /api/v1/articles/{id}",
  site_id: null,
  article_id: null,
  status: 200,
  error_code: null,
  duration_ms: 1,
  request_id: requestId,
  count: 1,
})


type Runtime = ManagedRuntime.ManagedRuntime<any, never>

describe("in-process caches across two instances on one PostgreSQL database", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let pair: TwoInstances | undefined
  let a: OrmDatabase
  let b: OrmDatabase
  let ra: Runtime
  let rb: Runtime
  let admin: pg.Client
  /** Both instances' clock: it moves only when a test moves it, from the middle of a request window. */
  const clock = testClock(Math.floor(Date.now() / (WINDOW * 1000)) * WINDOW * 1000 + (WINDOW * 1000) / 2)

  const findKey = (r: Runtime, hash: string) => r.runPromise(ApiKeyRepository.use((k) => k.findByHash(hash)))
  const isUsable = (found: Option.Option<ApiKeyRecord>) => Option.isSome(found) && found.value.revoked_at === null
  const addKey = async (id: string) => {
    await ra.runPromise(ApiKeyRepository.use((k) => k.insert(keyRecord(id))))
    return `hash_${id}`
  }
  /** Runs a statement by hand with the tables' triggers skipped: a change that notifies nobody. */
  const silently = async (text: string, params: ReadonlyArray<unknown>) => {
    await admin.query("begin")
    try {
      await admin.query("set local session_replication_role = replica")
      await admin.query(text, [...params])
      await admin.query("commit")
    } catch (e) {
      await admin.query("rollback")
      throw e
    }
  }
  /**
   * What the bus's channel carries while `act` runs: a third listener collects the payloads until
   * a marker sent after `act` (on the same session, so after its notifications) comes through.
   */
  const announced = async (act: () => Promise<unknown>): Promise<Array<string>> => {
    const listener = new pg.Client({ connectionString: database.url })
    await listener.connect()
    try {
      const heard: Array<string> = []
      const marker = uid("marker")
      const done = new Promise<void>((resolve) =>
        listener.on("notification", (n) => (n.payload === marker ? resolve() : heard.push(n.payload ?? ""))),
      )
      await listener.query("listen cs_events")
      await act()
      await admin.query("select pg_notify('cs_events', $1)", [marker])
      await done
      return heard
    } finally {
      await listener.end()
    }
  }
  /**
   * Resolves once `db` has heard every notification committed so far: a marker sent now comes
   * through its bus after them (one listening connection delivers in commit order).
   */
  const settledOn = async (db: OrmDatabase) => {
    const marker = uid("settled")
    let stop = () => {}
    const heard = new Promise<void>((resolve) => {
      stop = db.onEvent((payload) => payload === marker && resolve())
    })
    try {
      await admin.query("select pg_notify('cs_events', $1)", [marker])
      await heard
    } finally {
      stop()
    }
  }
  const hit = (r: Runtime, key: string, limit: number) => r.runPromise(LimitStore.use((l) => l.hit(key, limit, WINDOW)))
  const peek = (r: Runtime, key: string, limit: number) => r.runPromise(LimitStore.use((l) => l.peek(key, limit, WINDOW)))
  const storedCount = async (key: string) =>
    (await admin.query<{ count: number }>("select count from limit_counters where key = $1", [key])).rows[0]?.count ?? 0

  beforeAll(async () => {
    database = await createTestDatabase()
    pair = await openTwoInstances(database.url, ACCOUNT, { now: clock.now })
    ;({ a, b, ra, rb } = pair)
    admin = new pg.Client({ connectionString: database.url })
    await admin.connect()
  })
  afterAll(async () => {
    await admin?.end()
    await pair?.close()
    await database?.drop()
  })

  describe("API-key cache", () => {
    it("should refuse at instance B a key revoked through instance A once the notification arrives", async () => {
      const hash = await addKey(uid("key"))
      expect(a.eventsConnected() && b.eventsConnected()).toBe(true)
      expect(isUsable(await findKey(rb, hash))).toBe(true)
      expect(isUsable(await findKey(rb, hash))).toBe(true)
      const id = Option.getOrThrow(await findKey(ra, hash)).id
      await ra.runPromise(ApiKeyRepository.use((k) => k.revoke(ACCOUNT, id, new Date().toISOString())))
      // A dropped it at once; B when the notification arrives
      expect(isUsable(await findKey(ra, hash))).toBe(false)
      expect(isUsable(await eventually(() => findKey(rb, hash), (f) => !isUsable(f)))).toBe(false)
    })

    it("should refuse at instance B a key revoked or deleted by hand in SQL once the table's trigger notifies", async () => {
      for (const change of ["update api_keys set revoked_at = now() where key_hash = $1", "delete from api_keys where key_hash = $1"]) {
        const hash = await addKey(uid("key"))
        expect(isUsable(await findKey(rb, hash))).toBe(true)
        const id = Option.getOrThrow(await findKey(rb, hash)).id
        expect(await announced(() => admin.query(change, [hash]))).toEqual([`key:${id}`])
        expect(isUsable(await eventually(() => findKey(rb, hash), (f) => !isUsable(f)))).toBe(false)
      }
    })

    it("should not announce a key's use written by hand, so a use does not empty the caches", async () => {
      const hash = await addKey(uid("key"))
      const id = Option.getOrThrow(await findKey(rb, hash)).id
      expect(await announced(() => admin.query("update api_keys set last_used_at = now() where id = $1", [id]))).toEqual([])
      // any other column is announced, the use along with it
      expect(await announced(() => admin.query("update api_keys set name = 'renamed', last_used_at = now() where id = $1", [id]))).toEqual([
        `key:${id}`,
      ])
    })

    it("should keep the cached copy's last use, so the core does not touch the key on every request", async () => {
      const hash = await addKey(uid("key"))
      const id = Option.getOrThrow(await findKey(rb, hash)).id
      const at = "2026-11-22T10:00:00.000Z"
      await rb.runPromise(ApiKeyRepository.use((k) => k.touch(id, at)))
      expect(Option.getOrThrow(await findKey(rb, hash)).last_used_at).toBe(at)
    })

    it("should serve the cache while the listener is up and read the database again once it is killed", async () => {
      const hash = await addKey(uid("key"))
      expect(isUsable(await findKey(rb, hash))).toBe(true)
      // revoked by hand with the triggers skipped, so without a notification: the cached copy still answers
      await silently("update api_keys set revoked_at = now() where key_hash = $1", [hash])
      expect(isUsable(await findKey(rb, hash))).toBe(true)
      const killed = await admin.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name = $2",
        [database.name, LISTENER],
      )
      expect(killed.rowCount).toBe(2)
      // the listener's loss resets the cache: the revocation made by hand is seen
      expect(isUsable(await eventually(() => findKey(rb, hash), (f) => !isUsable(f)))).toBe(false)
      // and the bus comes back by itself
      expect(await eventually(async () => a.eventsConnected() && b.eventsConnected(), (up) => up)).toBe(true)
    })

    it("should not serve a key revoked by hand while the listener was down", async () => {
      const hash = await addKey(uid("key"))
      expect(isUsable(await findKey(rb, hash))).toBe(true)
      await admin.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name = $2",
        [database.name, LISTENER],
      )
      await admin.query("update api_keys set revoked_at = now() where key_hash = $1", [hash])
      expect(isUsable(await eventually(() => findKey(rb, hash), (f) => !isUsable(f)))).toBe(false)
      expect(await eventually(async () => b.eventsConnected(), (up) => up)).toBe(true)
      expect(isUsable(await findKey(rb, hash))).toBe(false)
    })
  })

  describe("OAuth grant cache", () => {
    const findGrant = (r: Runtime, id: string) => r.runPromise(OAuthStore.use((s) => s.find("Grant", id)))
    const addGrant = async (id: string, expiresInSeconds?: number) =>
      ra.runPromise(OAuthStore.use((s) => s.upsert("Grant", id, { accountId: ACCOUNT, clientId: "client_x" }, expiresInSeconds)))

    it("should refuse at instance B a grant destroyed or revoked through instance A once the notification arrives", async () => {
      for (const revoke of [
        (id: string) => OAuthStore.use((s) => s.destroy("Grant", id)),
        (id: string) => OAuthStore.use((s) => s.revokeByGrantId(id)),
      ]) {
        const id = uid("grant")
        await addGrant(id)
        expect(Option.isSome(await findGrant(rb, id))).toBe(true)
        expect(Option.isSome(await findGrant(rb, id))).toBe(true)
        // a grant of this id is also a row with that grant id (tokens reference their grant)
        await admin.query("update oauth_payloads set grant_id = id where model = 'Grant' and id = $1", [id])
        await ra.runPromise(revoke(id))
        expect(Option.isNone(await findGrant(ra, id))).toBe(true)
        expect(Option.isNone(await eventually(() => findGrant(rb, id), Option.isNone))).toBe(true)
      }
    })

    it("should see a grant changed through instance A on instance B", async () => {
      const id = uid("grant")
      await addGrant(id)
      expect(Option.getOrThrow(await findGrant(rb, id))["clientId"]).toBe("client_x")
      await ra.runPromise(OAuthStore.use((s) => s.upsert("Grant", id, { accountId: ACCOUNT, clientId: "client_y" }, undefined)))
      const seen = await eventually(() => findGrant(rb, id), (g) => Option.isSome(g) && g.value["clientId"] === "client_y")
      expect(Option.getOrThrow(seen)["clientId"]).toBe("client_y")
    })

    it("should refuse at instance B a grant deleted by hand in SQL once the table's trigger notifies", async () => {
      const id = uid("grant")
      await addGrant(id)
      await settledOn(b)
      expect(Option.isSome(await findGrant(rb, id))).toBe(true)
      expect(await announced(() => admin.query("delete from oauth_payloads where model = 'Grant' and id = $1", [id]))).toEqual([`oauth:Grant:${id}`])
      expect(Option.isNone(await eventually(() => findGrant(rb, id), Option.isNone))).toBe(true)
    })

    it("should announce no change to the OAuth server's other rows", async () => {
      const id = uid("token")
      await ra.runPromise(OAuthStore.use((s) => s.upsert("AccessToken", id, { accountId: ACCOUNT, grantId: "g" }, 60)))
      expect(await announced(() => admin.query("delete from oauth_payloads where model = 'AccessToken' and id = $1", [id]))).toEqual([])
    })

    it("should not serve a cached grant past its expiry", async () => {
      const id = uid("grant")
      await addGrant(id, 2)
      // let A's notification of the new grant land on B, then read it there into the cache
      await settledOn(b)
      expect(Option.isSome(await findGrant(rb, id))).toBe(true)
      // removed by hand with the triggers skipped (no notification): still answered from B's cache,
      // which proves it is cached
      await silently("delete from oauth_payloads where model = 'Grant' and id = $1", [id])
      expect(Option.isSome(await findGrant(rb, id))).toBe(true)
      clock.advance(2_100)
      expect(Option.isNone(await findGrant(rb, id))).toBe(true)
    })
  })

  describe("account cache", () => {
    it("should see at instance B an account changed by hand in SQL once the table's trigger notifies", async () => {
      const name = (r: Runtime) => r.runPromise(AccountRepository.use((repo) => repo.get(ACCOUNT))).then((acc) => acc.name)
      const before = await name(rb)
      // changed with the triggers skipped: B answers from its cache
      await silently("update accounts set name = $2 where id = $1", [ACCOUNT, `${before} (silent)`])
      expect(await name(rb)).toBe(before)
      expect(await announced(() => admin.query("update accounts set name = $2 where id = $1", [ACCOUNT, "Renamed by hand"]))).toEqual([
        `account:${ACCOUNT}`,
      ])
      expect(await eventually(() => name(rb), (n) => n === "Renamed by hand")).toBe("Renamed by hand")
    })
  })

  describe("auth-failure budget", () => {
    it("should make peek on instance B refuse once instance A exhausts the budget", async () => {
      const key = uid("authfail:10.0.0.1")
      // B reads the table once for this window, then answers from what the bus tells it
      expect(await peek(rb, key, 3)).toMatchObject({ allowed: true, remaining: 3 })
      await hit(ra, key, 3)
      await hit(ra, key, 3)
      // B does not read A's hits: remaining overstates until the budget is exhausted
      expect(await peek(rb, key, 3)).toMatchObject({ allowed: true, remaining: 3 })
      expect(await hit(ra, key, 3)).toMatchObject({ allowed: true, remaining: 0 })
      const refused = await eventually(() => peek(rb, key, 3), (v) => !v.allowed)
      expect(refused).toMatchObject({ allowed: false, remaining: 0 })
      expect(await peek(ra, key, 3)).toMatchObject({ allowed: false, remaining: 0 })
    })

    it("should count this instance's own failures in peek", async () => {
      const key = uid("authfail:10.0.0.2")
      expect(await peek(ra, key, 5)).toMatchObject({ allowed: true, remaining: 5 })
      await hit(ra, key, 5)
      await hit(ra, key, 5)
      expect(await peek(ra, key, 5)).toMatchObject({ allowed: true, remaining: 3 })
    })
  })

  describe("leased request counting", () => {
    it("should never let concurrent hits over two instances past the limit", async () => {
      const key = uid("req")
      const verdicts = await Promise.all(Array.from({ length: 500 }, (_, i) => hit(i % 2 === 0 ? ra : rb, key, 200)))
      expect(verdicts.filter((v) => v.allowed).length).toBe(200)
      expect(await storedCount(key)).toBe(200)
      expect(await peek(ra, key, 200)).toMatchObject({ allowed: false, remaining: 0 })
    })

    it("should answer exact remaining values for sequential hits on one instance while leases grow", async () => {
      const key = uid("req")
      const remaining: Array<number> = []
      for (let i = 0; i < 60; i++) remaining.push((await hit(ra, key, 50)).remaining)
      expect(remaining).toEqual([...Array.from({ length: 50 }, (_, i) => 49 - i), ...Array(10).fill(0)])
      expect(await storedCount(key)).toBe(50)
    })

    it("should reserve batches rather than count every hit in the table", async () => {
      const key = uid("req")
      for (let i = 0; i < 100; i++) await hit(ra, key, 1_000_000)
      // leases doubled while spent quickly: the table holds hits reserved ahead of use
      expect(await storedCount(key)).toBeGreaterThan(100)
      expect(await storedCount(key)).toBeLessThanOrEqual(100 + 256)
    })

    it("should give every concurrent hit on one instance a distinct exact remaining value", async () => {
      const key = uid("req")
      const verdicts: Array<LimitVerdict> = await ra.runPromise(
        Effect.all(Array.from({ length: 80 }, () => LimitStore.use((l) => l.hit(key, 30, WINDOW))), { concurrency: "unbounded" }),
      )
      const allowed = verdicts.filter((v) => v.allowed)
      expect(allowed.map((v) => v.remaining).sort((x, y) => x - y)).toEqual(Array.from({ length: 30 }, (_, i) => i))
      expect(verdicts.filter((v) => !v.allowed).every((v) => v.remaining === 0)).toBe(true)
    })

    it("should keep a rarely hit key exact in the table", async () => {
      const key = uid("authfail:10.0.0.3")
      // a limit high enough that the lease size, not the limit, decides what a lease reserves
      await hit(ra, key, 1_000)
      // past the time in which a spent lease counts as spent fast (1 s): the next lease stays at 1
      clock.advance(1_100)
      await hit(ra, key, 1_000)
      expect(await storedCount(key)).toBe(2)
    })
  })

  describe("activity journal", () => {
    const list = (r: Runtime) => r.runPromise(ActivityLog.use((l) => l.list(ACCOUNT, {}, { offset: 0, limit: 100 })))
    const storedRequests = async (ids: ReadonlyArray<string>) =>
      (await admin.query<{ n: number }>("select count(*)::int as n from activity where request_id = any($1)", [ids])).rows[0]!.n

    it("should answer a record before its entry reaches the table, and ship entries recorded side by side in the background", async () => {
      const ids = Array.from({ length: 6 }, () => uid("req"))
      await Promise.all(ids.map((id) => ra.runPromise(ActivityLog.use((l) => l.record(entry(id))))))
      // read by another connection, no flush asked: the shipper writes them without being asked
      expect(await eventually(() => storedRequests(ids), (n) => n === 6)).toBe(6)
    })

    it("should list entries recorded on the same instance at once", async () => {
      const ids = [uid("req"), uid("req"), uid("req")]
      for (const id of ids) await ra.runPromise(ActivityLog.use((l) => l.record(entry(id))))
      const listed = (await list(ra)).items.map((e) => e.request_id)
      expect(ids.every((id) => listed.includes(id))).toBe(true)
    })

    it("should write an entry recorded twice for one request once", async () => {
      const id = uid("req")
      await ra.runPromise(ActivityLog.use((l) => Effect.andThen(l.record(entry(id)), l.record(entry(id)))))
      await a.flushActivity()
      expect(await storedRequests([id])).toBe(1)
    })

    it("should write buffered entries when the database is closed", async () => {
      const c = await openDatabase({ databaseUrl: database.url })
      const rc = ManagedRuntime.make(c.layer)
      const ids = Array.from({ length: 5 }, () => uid("req"))
      for (const id of ids) await rc.runPromise(ActivityLog.use((l) => l.record(entry(id))))
      await rc.dispose()
      await c.close()
      expect(await storedRequests(ids)).toBe(5)
    })

    it("should keep entries through a database outage and write them after it", async () => {
      const { proxy, url: viaProxy } = await startPostgresProxy(database.url)
      // its own DATA_DIR: entries wait in its journal there (journal.test.ts)
      const dataDir = mkdtempSync(join(tmpdir(), "cs-caches-"))
      const c = await openDatabase({ databaseUrl: viaProxy, dataDir, connectTimeoutMs: 1000, statementTimeoutMs: 2000 })
      const rc = ManagedRuntime.make(c.layer)
      const ids = Array.from({ length: 3 }, () => uid("req"))
      try {
        await proxy.cut("refuse")
        // the calls are answered: their entries are in the journal, waiting for the database
        for (const id of ids) await rc.runPromise(ActivityLog.use((l) => l.record(entry(id))))
        expect(await eventually(async () => c.eventsConnected(), (up) => !up)).toBe(false)
        const flushed = await c.flushActivity().then(() => "written", () => "refused")
        expect(flushed).toBe("refused")
        expect(await storedRequests(ids)).toBe(0)
        await proxy.restore()
        // the background retry writes them without being asked
        expect(await eventually(() => storedRequests(ids), (n) => n === 3, 10_000)).toBe(3)
      } finally {
        await proxy.restore()
        await rc.dispose()
        await c.close()
        await proxy.close()
        rmSync(dataDir, { recursive: true, force: true })
      }
    })
  })
})
