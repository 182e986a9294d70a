/**
 * The notification bus that keeps the in-process caches honest across instances. On PostgreSQL it
 * is one dedicated `pg` connection that `LISTEN cs_events`; senders `pg_notify('cs_events', ...)`,
 * inside the transaction of the change the event belongs to, so it is delivered on commit. On
 * PGlite (one process, the data directory is locked) it is an in-process bus, always connected.
 *
 * A cache may answer from memory only while `connected()` holds. Every disconnect and every
 * (re)connect tells the subscribers to `reset`: events sent while nobody listened are lost, so
 * what they learnt before may be stale.
 */
import pg from "pg"
import type { Em } from "./orm.ts"
import type { Sql } from "./sql.ts"
import { consoleEventLog, type OrmEventLog } from "./eventLog.ts"

/** The channel every instance listens on. */
export const CHANNEL = "cs_events"
/** The listener's `application_name`, so an operator (or a test) can find its connection. */
export const LISTENER_NAME = "cs_events_listener"

/** Receives the bus's events. */
export interface Subscriber {
  /** One event's payload, e.g. `key:<id>` or `limit:<key>:<windowEnd>`. */
  readonly event: (payload: string) => void
  /** Events may have been missed (disconnect) or knowledge predates this connection (connect). */
  readonly reset: () => void
}

/** Events between the instances sharing one database. */
export interface EventBus {
  /** Whether events are being received now; caches must be bypassed while this is false. */
  readonly connected: () => boolean
  /** Adds a subscriber; returns the function that removes it. */
  readonly subscribe: (subscriber: Subscriber) => () => void
  /** Sends an event that belongs to no change (its own statement on the pool). */
  readonly publish: (event: string) => Promise<void>
  /** Sends an event as part of the transaction `tx`: the other instances receive it on commit. */
  readonly publishIn: (tx: Em, event: string) => Promise<void>
  /** Stops listening; idempotent. */
  readonly close: () => Promise<void>
}

/** Subscribers and the two ways of telling them something; a subscriber's failure goes to `log`. */
const subscribers = (log: OrmEventLog) => {
  const all = new Set<Subscriber>()
  const each = (f: (s: Subscriber) => void) => {
    for (const s of all) {
      try {
        f(s)
      } catch (e) {
        log.error({ err: e instanceof Error ? (e.stack ?? e.message) : String(e) }, "events: a cache's subscriber failed on an event; the others still got it")
      }
    }
  }
  return {
    add: (s: Subscriber) => (all.add(s), () => void all.delete(s)),
    event: (payload: string) => each((s) => s.event(payload)),
    reset: () => each((s) => s.reset()),
  }
}

/** The bus of a single process (PGlite): every event is delivered at once; never disconnected. */
export const inProcessEventBus = (log: OrmEventLog = consoleEventLog): EventBus => {
  const subs = subscribers(log)
  return {
    connected: () => true,
    subscribe: subs.add,
    publish: async (event) => subs.event(event),
    // delivered before the commit; the publisher also invalidates its own knowledge after it
    publishIn: async (_tx, event) => subs.event(event),
    close: async () => {},
  }
}

export interface PostgresBusOptions {
  /** The database URL the ORM uses. */
  readonly url: string
  /** The ORM's pool, for `publish`. */
  readonly sql: Sql
  /** Bounds connecting and each heartbeat. */
  readonly connectTimeoutMs: number
  /** How often the listener proves its connection is alive (default 5000 ms). */
  readonly heartbeatMs?: number
  /** First reconnect delay (default 100 ms), doubled per failure up to `maxBackoffMs` (default 5000). */
  readonly minBackoffMs?: number
  readonly maxBackoffMs?: number
  /** Where losing the database and reaching it again are reported (default: the console). */
  readonly log?: OrmEventLog
}

const NOTIFY = `select pg_notify('${CHANNEL}', $1)`

/**
 * The PostgreSQL bus. Resolves after the first attempt to listen, connected or not: when the
 * database cannot be reached the bus keeps retrying in the background and the caches stay bypassed.
 */
export const openPostgresEventBus = async (options: PostgresBusOptions): Promise<EventBus> => {
  const subs = subscribers(options.log ?? consoleEventLog)
  const heartbeatMs = options.heartbeatMs ?? 5_000
  const minBackoffMs = options.minBackoffMs ?? 100
  const maxBackoffMs = options.maxBackoffMs ?? 5_000
  const log = options.log ?? consoleEventLog
  let current: pg.Client | undefined
  let retry: ReturnType<typeof setTimeout> | undefined
  let failures = 0
  let closed = false

  /** The connection `client` is gone (or never came up): reset and try again later. */
  const lost = (client: pg.Client) => {
    client.end().catch(() => {})
    if (client !== current) return
    // The listener's connection is the first to know the database went away (its heartbeat).
    if (!closed) log.warn({}, "database: the event listener lost its connection; caches are bypassed until it is back")
    current = undefined
    subs.reset()
    schedule()
  }
  const schedule = () => {
    if (closed || retry !== undefined) return
    const delay = Math.min(maxBackoffMs, minBackoffMs * 2 ** failures) * (0.5 + Math.random() / 2)
    failures++
    retry = setTimeout(() => {
      retry = undefined
      void listen()
    }, delay)
    retry.unref()
  }
  const listen = async (): Promise<void> => {
    const client = new pg.Client({
      connectionString: options.url,
      application_name: LISTENER_NAME,
      connectionTimeoutMillis: options.connectTimeoutMs,
      query_timeout: options.connectTimeoutMs,
      keepAlive: true,
    })
    client.on("error", () => lost(client))
    client.on("end", () => lost(client))
    client.on("notification", (m) => {
      if (client === current && m.channel === CHANNEL && m.payload !== undefined) subs.event(m.payload)
    })
    try {
      await client.connect()
      await client.query(`listen ${CHANNEL}`)
    } catch {
      lost(client)
      schedule()
      return
    }
    if (closed) {
      await client.end().catch(() => {})
      return
    }
    current = client
    if (failures > 0) log.info({ attempts: failures }, "database: reachable again; the event listener is back")
    failures = 0
    subs.reset()
  }
  const heartbeat = setInterval(() => {
    const client = current
    if (client) client.query("select 1").catch(() => lost(client))
  }, heartbeatMs)
  heartbeat.unref()

  await listen()
  return {
    connected: () => current !== undefined,
    subscribe: subs.add,
    publish: async (event) => {
      await options.sql(NOTIFY, [event])
    },
    publishIn: async (tx, event) => {
      await tx.execute(`select pg_notify('${CHANNEL}', ?)`, [event])
    },
    close: async () => {
      closed = true
      clearInterval(heartbeat)
      if (retry !== undefined) clearTimeout(retry)
      const client = current
      current = undefined
      await client?.end().catch(() => {})
    },
  }
}
