/**
 * How fast a request counter in Redis answers during an outage, against the same counter's normal
 * hit in the same run. Redis is reached through a TCP proxy that the bench cuts: `refuse` (nothing
 * listens) and `blackhole` (connections accepted, never answered). The client is opened with a
 * 1000 ms connect/command timeout, as in the persistence test; the outage answers should stay
 * near that bound (blackhole) or well under it (refuse), never hang. Not a test: nothing asserts a time.
 * Needs PostgreSQL and Redis (the database is made as the tests make theirs, on `TEST_PG_ADMIN_URL`, not `BENCH_PG_URL`; Redis at `BENCH_REDIS_URL`; both default to the local servers).
 */
import { LimitStore } from "@content-site/core"
import { openDatabase } from "@content-site/orm"
import { Exit, ManagedRuntime } from "effect"
import { createTestDatabase } from "../test/support/databases.ts"
import { startTcpProxy } from "../test/support/tcpProxy.ts"

const CONNECT_TIMEOUT_MS = 1000
const HITS = 200
const OUTAGE_SAMPLES = 5

const median = (xs: ReadonlyArray<number>): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

export const run = async (): Promise<void> => {
  const redisUrl = new URL(process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379")
  const database = await createTestDatabase()
  const proxy = await startTcpProxy(redisUrl.hostname, Number(redisUrl.port || 6379))
  const db = await openDatabase({ databaseUrl: database.url, redisUrl: `redis://127.0.0.1:${proxy.port}`, connectTimeoutMs: CONNECT_TIMEOUT_MS })
  const runtime = ManagedRuntime.make(db.layer)
  const key = `bench-redis-outage:${Date.now()}`
  const hit = async (): Promise<{ ms: number; ok: boolean }> => {
    const started = performance.now()
    const exit = await runtime.runPromiseExit(LimitStore.use((l) => l.hit(key, 1_000_000, 1_000_000)))
    return { ms: performance.now() - started, ok: Exit.isSuccess(exit) }
  }
  try {
    for (let i = 0; i < 20; i++) await hit()
    const normal: Array<number> = []
    for (let i = 0; i < HITS; i++) normal.push((await hit()).ms)
    console.log(`normal hit (baseline)      median ${median(normal).toFixed(2).padStart(8)} ms over ${HITS}`)
    for (const mode of ["refuse", "blackhole"] as const) {
      const times: Array<number> = []
      for (let i = 0; i < OUTAGE_SAMPLES; i++) {
        await proxy.cut(mode)
        const answer = await hit()
        if (answer.ok) throw new Error(`a hit succeeded during a ${mode} outage`)
        times.push(answer.ms)
        await proxy.restore()
        while (!(await hit()).ok) await new Promise((r) => setTimeout(r, 20))
      }
      console.log(
        `outage answer, ${mode.padEnd(9)}  median ${median(times).toFixed(2).padStart(8)} ms, max ${Math.max(...times).toFixed(0)} ms over ${OUTAGE_SAMPLES} (connect/command timeout ${CONNECT_TIMEOUT_MS} ms)`,
      )
    }
  } finally {
    await runtime.dispose()
    await db.close()
    await proxy.close()
    await database.drop()
  }
}
