/**
 * LimitStore shared by every instance: fixed windows aligned to the window length (like the memory
 * adapter), counted by one atomic statement in PostgreSQL or one Lua script in Redis.
 */
import { LimitStore, Unavailable, type LimitVerdict } from "@content-site/core"
import { Effect, Layer } from "effect"
import { Redis } from "ioredis"
import { attempt } from "./failures.ts"
import type { Orm } from "./orm.ts"
import { nativeSql } from "./sql.ts"

const windowOf = (windowSeconds: number, now: number) => {
  const length = windowSeconds * 1000
  const start = Math.floor(now / length) * length
  return { start, end: start + length }
}

const verdict = (limit: number, count: number, end: number, now: number, allowed: boolean): LimitVerdict => ({
  allowed,
  limit,
  remaining: Math.max(0, limit - count),
  resetSeconds: Math.max(1, Math.ceil((end - now) / 1000)),
})

/** Counters in the `limit_counters` table: `INSERT ... ON CONFLICT DO UPDATE ... RETURNING`. */
export const postgresLimitStore = (orm: Orm, now: () => number = Date.now) => {
  const sql = nativeSql(orm)
  return Layer.succeed(LimitStore, {
    hit: (key, limit, windowSeconds) =>
      attempt(async () => {
        const t = now()
        const { start, end } = windowOf(windowSeconds, t)
        const rows = await sql<{ count: number | string }>(
          `insert into limit_counters (key, window_start, count) values ($1, $2, 1)
           on conflict (key) do update set
             count = case when limit_counters.window_start < excluded.window_start then 1 else limit_counters.count + 1 end,
             window_start = greatest(limit_counters.window_start, excluded.window_start)
           returning count`,
          [key, start],
        )
        const count = Number(rows[0]?.count ?? 1)
        return verdict(limit, count, end, t, count <= limit)
      }),
    peek: (key, limit, windowSeconds) =>
      attempt(async () => {
        const t = now()
        const { start, end } = windowOf(windowSeconds, t)
        const rows = await sql<{ window_start: number | string | bigint; count: number }>(
          "select window_start, count from limit_counters where key = $1",
          [key],
        )
        const row = rows[0]
        const count = row && Number(row.window_start) >= start ? row.count : 0
        return verdict(limit, count, end, t, count < limit)
      }),
  })
}

const HIT = `
local c = redis.call('INCR', KEYS[1])
if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return c`

/** Counters in Redis: one key per window, INCR and PEXPIRE in one Lua script. */
export const redisLimitStore = (redis: Redis, now: () => number = Date.now) => {
  const keyOf = (key: string, start: number) => `cs:limit:${key}:${start}`
  const call = <A>(f: () => Promise<A>) =>
    Effect.tryPromise({
      try: f,
      catch: (e) => new Unavailable({ detail: `The limit store is unavailable: ${e instanceof Error ? e.message : String(e)}` }),
    })
  return Layer.succeed(LimitStore, {
    hit: (key, limit, windowSeconds) =>
      call(async () => {
        const t = now()
        const { start, end } = windowOf(windowSeconds, t)
        const count = Number(await redis.eval(HIT, 1, keyOf(key, start), String(end - start + 1000)))
        return verdict(limit, count, end, t, count <= limit)
      }),
    peek: (key, limit, windowSeconds) =>
      call(async () => {
        const t = now()
        const { start, end } = windowOf(windowSeconds, t)
        const count = Number((await redis.get(keyOf(key, start))) ?? 0)
        return verdict(limit, count, end, t, count < limit)
      }),
  })
}

/** A Redis client that fails fast (no offline queue) so an outage is Unavailable, not a hang. */
export const connectRedis = async (url: string, connectTimeoutMs: number): Promise<Redis> => {
  const redis = new Redis(url, {
    connectTimeout: connectTimeoutMs,
    commandTimeout: connectTimeoutMs,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    lazyConnect: true,
  })
  redis.on("error", () => {})
  await redis.connect()
  return redis
}
