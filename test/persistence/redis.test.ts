import { LimitStore } from "@content-site/core"
import { openDatabase, type OrmDatabase } from "@content-site/orm"
import { ManagedRuntime, type Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase } from "../support/databases.ts"
import { eventually } from "../support/eventually.ts"
import { detailOf, tagOf } from "../support/exits.ts"
import { startTcpProxy, type TcpProxy } from "../support/tcpProxy.ts"

const REDIS_URL = new URL(process.env["TEST_REDIS_URL"] ?? "redis://127.0.0.1:6379")
/** A window far longer than the test: windows are aligned to their length, so a minute could end mid-test. */
const WINDOW = 1_000_000

describe("Redis outage (request counters in Redis)", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let proxy: TcpProxy
  let db: OrmDatabase
  let runtime: ManagedRuntime.ManagedRuntime<Layer.Success<OrmDatabase["layer"]>, never>

  /** What the storage said in its log, message by message. */
  const said: Array<{ level: string; msg: string; fields: object }> = []
  const log = {
    info: (fields: object, msg: string) => void said.push({ level: "info", msg, fields }),
    warn: (fields: object, msg: string) => void said.push({ level: "warn", msg, fields }),
    error: (fields: object, msg: string) => void said.push({ level: "error", msg, fields }),
  }

  beforeAll(async () => {
    database = await createTestDatabase()
    proxy = await startTcpProxy(REDIS_URL.hostname, Number(REDIS_URL.port || 6379))
    db = await openDatabase({ databaseUrl: database.url, redisUrl: `redis://127.0.0.1:${proxy.port}`, connectTimeoutMs: 1000, log })
    runtime = ManagedRuntime.make(db.layer)
  })
  afterAll(async () => {
    await runtime?.dispose()
    await db?.close()
    await proxy?.close()
    await database?.drop()
  })

  const hit = (key: string) => runtime.runPromiseExit(LimitStore.use((l) => l.hit(key, 100, WINDOW)))

  it("should answer Unavailable while Redis is gone, and count again from where it stopped once it is back", async () => {
    const key = `redis-outage:${Date.now()}:${Math.random()}`
    let counted = 0
    expect(tagOf(await hit(key))).toBe("success")
    counted++
    for (const mode of ["refuse", "blackhole"] as const) {
      await proxy.cut(mode)
      // Answered (not hung: the test's own timeout would catch that) and refused; how fast is `npm run bench redis`.
      const refused = await hit(key)
      expect(tagOf(refused)).toBe("Unavailable")
      // the answer says to retry, not where Redis is
      expect(detailOf(refused)).toBe("The request counters cannot answer now; nothing was changed. Retry in a few seconds.")
      // Not ready meanwhile: every authenticated call needs the counters.
      expect(await db.ready()).toBe(false)
      await proxy.restore()
      // Poll until the client has reconnected; the refused attempts count nothing.
      const last = await eventually(async () => tagOf(await hit(key)), (tag) => tag === "success", 15_000)
      expect(last).toBe("success")
      expect(await db.ready()).toBe(true)
      counted++
    }
    // The log said when the outage began and when it ended (the second outage, within the
    // minute, is not warned of again, nor its end said)
    const limits = said.filter((line) => line.msg.startsWith("limits:")).map((line) => `${line.level} ${line.msg}`)
    expect(limits).toEqual(["warn limits: Redis cannot count requests; they are answered 503 until it can", "info limits: Redis counts requests again"])
    expect(said.find((line) => line.msg === "limits: Redis counts requests again")?.fields).toMatchObject({ refused_calls: expect.any(Number) })
    // Counting went on where it stopped: the window kept the hits made before the outage, and
    // exactly the successful hits count.
    const verdict = await runtime.runPromise(LimitStore.use((l) => l.peek(key, 100, WINDOW)))
    expect(verdict.remaining).toBe(100 - counted)
  }, 30_000)
})

describe("REDIS_URL naming a Redis database", () => {
  it("should refuse to open with a database number the Redis server does not have, rather than count in database 0", async () => {
    const database = await createTestDatabase()
    try {
      // (a Redis has 16 databases unless configured otherwise; none has ten thousand)
      const url = new URL(REDIS_URL.href)
      url.pathname = "/9999"
      const opened = openDatabase({ databaseUrl: database.url, redisUrl: url.href, connectTimeoutMs: 1000 })
      await expect(opened).rejects.toThrow(`Cannot use the Redis server at ${url.host}/9999 (REDIS_URL): ERR DB index is out of range.`)
    } finally {
      await database.drop()
    }
  })
})

describe("request counters of several databases in one Redis", () => {
  it("should keep each database's counters its own, and share them between the instances of one database", async () => {
    const [first, second] = [await createTestDatabase(), await createTestDatabase()]
    const open = async (url: string) => {
      const db = await openDatabase({ databaseUrl: url, redisUrl: REDIS_URL.href, connectTimeoutMs: 1000 })
      return { db, runtime: ManagedRuntime.make(db.layer) }
    }
    const instances = [await open(first.url), await open(first.url), await open(second.url)]
    try {
      // one key, as a per-address budget is one key for every deployment that sees the address
      const key = `shared-redis:${Date.now()}:${Math.random()}`
      const hit = (at: number) => instances[at]!.runtime.runPromise(LimitStore.use((l) => l.hit(key, 100, WINDOW)))
      const remaining = async (at: number) => (await instances[at]!.runtime.runPromise(LimitStore.use((l) => l.peek(key, 100, WINDOW)))).remaining
      await hit(0)
      await hit(1)
      await hit(2)
      // the first database's two instances counted together; the second database its own hit only
      expect(await remaining(0)).toBe(98)
      expect(await remaining(1)).toBe(98)
      expect(await remaining(2)).toBe(99)
    } finally {
      for (const { db, runtime } of instances) {
        await runtime.dispose()
        await db.close()
      }
      await first.drop()
      await second.drop()
    }
  }, 30_000)
})
