/**
 * LimitStore shared by every instance: fixed windows aligned to the window length (like the memory
 * adapter). In PostgreSQL (or PGlite) hits are leased in batches from `limit_counters` (`leases.ts`)
 * and `peek` answers from what the event bus told this instance; in Redis each hit is one Lua script.
 */
import { LimitStore, Unavailable, type LimitVerdict } from "@content-site/core"
import { Effect, Layer } from "effect"
import { Redis } from "ioredis"
import type { EventBus } from "./bus.ts"
import { consoleEventLog, type OrmEventLog } from "./eventLog.ts"
import { attempt } from "./failures.ts"
import { leasedCounter, reserveIn, verdict, windowOf } from "./leases.ts"
import type { Orm } from "./orm.ts"
import { nativeSql, type Sql } from "./sql.ts"

const LIMIT_EVENT = "limit:"

/** The event that tells every instance `key` is exhausted until `end` (ms since the epoch). */
export const limitEvent = (key: string, end: number): string => `${LIMIT_EVENT}${key}:${end}`

/** The count of `key`'s current window, read from the table (0 for an older window). */
const readCount = async (sql: Sql, key: string, start: number): Promise<number> => {
  const rows = await sql<{ window_start: number | string | bigint; count: number }>(
    "select window_start, count from limit_counters where key = $1",
    [key],
  )
  const row = rows[0]
  return row && Number(row.window_start) >= start ? row.count : 0
}

/**
 * What this instance knows about keys without reading the table, valid while the bus is connected:
 * exhausted keys (from `limit:` events and its own leases) until their window ends, and for a
 * window that began before the bus's last (re)connect, a count read from the table since then.
 */
const limitKnowledge = (bus: EventBus, now: () => number) => {
  const exhaustedUntil = new Map<string, number>()
  const readSince = new Map<string, { start: number; count: number; spent: number }>()
  let connectedAt = now()
  let generation = 0
  const exhaust = (key: string, end: number) => {
    if ((exhaustedUntil.get(key) ?? 0) < end) exhaustedUntil.set(key, end)
    if (exhaustedUntil.size > 10_000) {
      const t = now()
      for (const [k, e] of exhaustedUntil) if (e <= t) exhaustedUntil.delete(k)
    }
  }
  bus.subscribe({
    event: (payload) => {
      if (!payload.startsWith(LIMIT_EVENT)) return
      const at = payload.lastIndexOf(":")
      const end = Number(payload.slice(at + 1))
      if (at > LIMIT_EVENT.length && Number.isFinite(end)) exhaust(payload.slice(LIMIT_EVENT.length, at), end)
    },
    reset: () => {
      connectedAt = now()
      generation++
      readSince.clear()
    },
  })
  return {
    exhaust,
    isExhausted: (key: string, end: number) => exhaustedUntil.get(key) === end,
    /** Hits of the window counted elsewhere that this instance knows of, or undefined if unknown. */
    baseline: (key: string, start: number): number | undefined => {
      if (start >= connectedAt) return 0
      const r = readSince.get(key)
      return r !== undefined && r.start === start ? r.count - r.spent : undefined
    },
    ticket: () => generation,
    /** Remembers a count read from the table, unless the bus reset since `ticket`. */
    learn: (ticket: number, key: string, start: number, count: number, spent: number) => {
      if (ticket !== generation || !bus.connected()) return
      if (readSince.size >= 10_000) readSince.clear()
      readSince.set(key, { start, count, spent })
    },
  }
}

/**
 * Counters in the `limit_counters` table. `hit` leases hits in batches (`leases.ts`) and announces
 * `limit:<key>:<windowEnd>` on the bus when its lease brings a window to the limit.
 *
 * `peek` reads nothing while the bus is connected: an exhausted key is refused, otherwise
 * `remaining` is the limit minus the hits this instance counted (plus, for a window that began
 * before the bus connected, the count read once from the table). That `remaining` may overstate
 * by other instances' hits, but exhaustion is seen everywhere as soon as the notification arrives.
 * While the bus is down, `peek` is the exact read of the table.
 */
export const postgresLimitStore = (orm: Orm, bus: EventBus, now: () => number = Date.now) => {
  const sql = nativeSql(orm)
  const knowledge = limitKnowledge(bus, now)
  const counter = leasedCounter(reserveIn(sql), {
    now,
    onExhausted: (key, end) => {
      knowledge.exhaust(key, end)
      bus.publish(limitEvent(key, end)).catch(() => {})
    },
  })
  const exactPeek = async (key: string, limit: number, start: number, end: number): Promise<LimitVerdict> => {
    const ticket = knowledge.ticket()
    const spent = counter.spentIn(key, start)
    const count = await readCount(sql, key, start)
    knowledge.learn(ticket, key, start, count, spent)
    if (count >= limit) knowledge.exhaust(key, end)
    return verdict(limit, count, end, now(), count < limit)
  }
  /** The verdict from memory, or undefined when only the table can tell. */
  const knownPeek = (key: string, limit: number, start: number, end: number, t: number): LimitVerdict | undefined => {
    if (counter.exhaustedIn(key, start) || knowledge.isExhausted(key, end)) return verdict(limit, limit, end, t, false)
    if (!bus.connected()) return undefined
    const elsewhere = knowledge.baseline(key, start)
    if (elsewhere === undefined) return undefined
    const count = elsewhere + counter.spentIn(key, start)
    return verdict(limit, count, end, t, count < limit)
  }
  return Layer.succeed(LimitStore, {
    hit: (key, limit, windowSeconds) =>
      Effect.suspend(() => {
        const v = counter.hit(key, limit, windowSeconds)
        if (!(v instanceof Promise)) return Effect.succeed(v)
        return attempt(() => v)
      }),
    peek: (key, limit, windowSeconds) =>
      Effect.suspend(() => {
        const t = now()
        const { start, end } = windowOf(windowSeconds, t)
        const known = knownPeek(key, limit, start, end, t)
        return known ? Effect.succeed(known) : attempt(() => exactPeek(key, limit, start, end))
      }),
  })
}

const HIT = `
local c = redis.call('INCR', KEYS[1])
if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return c`

/**
 * Counters in Redis: one key per window, INCR and PEXPIRE in one Lua script, under
 * `cs:limit:<namespace>:` (the database's name: every instance of a deployment shares its
 * database, and two deployments sharing a Redis do not share their counters).
 */
export const redisLimitStore = (redis: Redis, namespace: string, now: () => number = Date.now, log: OrmEventLog = consoleEventLog) => {
  const keyOf = (key: string, start: number) => `cs:limit:${namespace}:${key}:${start}`
  // Why the counters failed goes to the log (at the start of an outage, at most once a minute),
  // not to the caller: Redis's message names its address. The outage's end is said too.
  let warnedAt = Number.NEGATIVE_INFINITY
  let outage: { since: number; refused: number; warned: boolean } | undefined
  const counted = () => {
    if (outage === undefined) return
    const { since, refused, warned } = outage
    outage = undefined
    if (warned) log.info({ refused_calls: refused, seconds: Math.round((now() - since) / 1000) }, "limits: Redis counts requests again")
  }
  const call = <A>(f: () => Promise<A>) =>
    Effect.tryPromise({
      try: f,
      catch: (e) => {
        const t = now()
        if (outage === undefined) outage = { since: t, refused: 0, warned: false }
        outage.refused++
        if (!outage.warned && t - warnedAt >= 60_000) {
          warnedAt = t
          outage.warned = true
          log.warn({ err: e instanceof Error ? e.message.split("\n")[0] : String(e) }, "limits: Redis cannot count requests; they are answered 503 until it can")
        }
        return new Unavailable({ detail: "The request counters cannot answer now; nothing was changed. Retry in a few seconds." })
      },
    })
  return Layer.succeed(LimitStore, {
    hit: (key, limit, windowSeconds) =>
      call(async () => {
        const t = now()
        const { start, end } = windowOf(windowSeconds, t)
        const count = Number(await redis.eval(HIT, 1, keyOf(key, start), String(end - start + 1000)))
        counted()
        return verdict(limit, count, end, t, count <= limit)
      }),
    peek: (key, limit, windowSeconds) =>
      call(async () => {
        const t = now()
        const { start, end } = windowOf(windowSeconds, t)
        const count = Number((await redis.get(keyOf(key, start))) ?? 0)
        counted()
        return verdict(limit, count, end, t, count < limit)
      }),
  })
}

/** A Redis client that fails fast (no offline queue) so an outage is Unavailable, not a hang. */
export const connectRedis = async (url: string, connectTimeoutMs: number): Promise<Redis> => {
  const redis = new Redis(url, {
    connectTimeout: connectTimeoutMs,
    commandTimeout: connectTimeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    lazyConnect: true,
  })
  redis.on("error", () => {})
  try {
    await redis.connect()
  } catch (e) {
    // ioredis keeps retrying a connection that failed: without this a short-lived process (the
    // admin command line) that met a Redis that does not answer never exited
    redis.disconnect()
    throw e
  }
  // ioredis SELECTs the URL's database on connect, but a refused SELECT (a number past the
  // server's `databases`) is only an error event: it goes on in database 0, sharing counters with
  // whoever counts there. Asked again here, the refusal stops the start.
  const database = redis.options.db ?? 0
  if (database !== 0) {
    try {
      await redis.select(database)
    } catch (e) {
      redis.disconnect()
      throw e
    }
  }
  return redis
}
