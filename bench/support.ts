/** What the load benches share: autocannon as a library, the load settings, a throw-away database. */
import { mkdtemp, rm } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { startServer, type StartedServer } from "../apps/server/server.ts"
import { type ActivityJournal, openActivityJournal } from "../adapters/orm/src/activityJournal.ts"

/** The parts of an autocannon result the benches print. */
export interface CannonResult {
  readonly requests: { readonly average: number; readonly total: number }
  readonly latency: { readonly p50: number; readonly p99: number; readonly average: number }
  readonly errors: number
  readonly non2xx: number
  /**
   * Microseconds of this process's main thread per request answered, the median of the rounds
   * (`alternating`): the servers the benches start in process all run there, the load generator
   * in a worker thread, so this is the CPU the server under test spent on each request, which the
   * machine's other load inflates much less than it does throughput.
   */
  readonly mainCpuPerRequest?: number
}

/** One load result as a line: req/s, p50 and p99, and any errors. */
export const fmt = (r: CannonResult): string =>
  `${r.requests.average.toFixed(0).padStart(7)} req/s  mean ${r.latency.average.toFixed(2).padStart(6)} ms  p50 ${String(r.latency.p50).padStart(4)} ms  p99 ${String(r.latency.p99).padStart(4)} ms${r.errors + r.non2xx > 0 ? `  (errors ${r.errors}, non-2xx ${r.non2xx})` : ""}`

/** autocannon's promise form. */
export type Cannon = (options: {
  url: string
  connections: number
  duration: number
  method?: string
  headers?: Record<string, string>
  body?: string
}) => Promise<CannonResult>

const require = createRequire(import.meta.url)

const cannon = require("autocannon") as (options: Parameters<Cannon>[0] & { workers?: number }) => Promise<CannonResult>

/**
 * Worker threads the load generator runs in (`BENCH_WORKERS`, default 1; 0 runs it on the bench's
 * own event loop). On the event loop it shares one thread with the servers it measures: every
 * microsecond it spends building requests and parsing answers is one the server under test cannot
 * spend, and a bare server's figure is then mostly the generator's own speed.
 */
export const WORKERS = Number(process.env.BENCH_WORKERS ?? 1)

/** autocannon, loaded from the test workspace's dependencies, in its own worker thread(s). */
export const autocannon: Cannon = (options) => cannon(WORKERS > 0 ? { ...options, workers: WORKERS } : options)

/** Seconds per load case (`BENCH_SECONDS`, default 4). */
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 4)
/** How many times each group of load cases runs, alternating (`BENCH_ROUNDS`, default 3). */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
/** Keep-alive connections per load case (`BENCH_CONNECTIONS`, default 10). */
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)

/** The PostgreSQL server the benches make their databases on (`BENCH_PG_URL`, default the local one). */
const ADMIN_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** Runs one statement on the server's maintenance database (creating and dropping databases). */
const onServer = async (sql: string): Promise<void> => {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    await client.query(sql)
  } finally {
    await client.end().catch(() => {})
  }
}

/** Database `name` on the server, its URL and how to drop it. */
const database = (name: string): { url: string; drop: () => Promise<void> } => {
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  return { url: url.toString(), drop: () => onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}

/**
 * A throw-away PostgreSQL database on `BENCH_PG_URL` (default the local server), or undefined when
 * PostgreSQL cannot be reached (the benches then use the embedded database).
 */
export const pgDatabase = async (prefix: string): Promise<{ url: string; drop: () => Promise<void> } | undefined> => {
  const name = `${prefix}_${Date.now().toString(36)}`
  try {
    await onServer(`CREATE DATABASE ${name}`)
  } catch {
    return undefined
  }
  return database(name)
}

/** Requests per one-at-a-time case, over all its rounds (`BENCH_SEQUENTIAL`, default 400). */
export const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 400)

/**
 * Sends requests one at a time for each case in turn, `rounds` rounds of `n / rounds` requests
 * (after 20 of each to warm up), and answers each case's requests per second in its median round:
 * a case and the one it is compared with meet the same drift (a case measured alone first on a
 * fresh server was once 40 % slower than the same case a minute later).
 */
export const sequential = async <K extends string>(
  n: number,
  cases: Record<K, () => Promise<Response>>,
  rounds: number = ROUNDS,
): Promise<Record<K, number>> => {
  const names = Object.keys(cases) as Array<K>
  const once = async (send: () => Promise<Response>) => {
    const response = await send()
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`status ${response.status}`)
  }
  for (const name of names) for (let i = 0; i < 20; i++) await once(cases[name])
  const per = Math.max(1, Math.round(n / rounds))
  const rates = new Map<K, Array<number>>(names.map((name) => [name, []]))
  for (let round = 0; round < rounds; round++) {
    for (const name of names) {
      const started = performance.now()
      for (let i = 0; i < per; i++) await once(cases[name])
      rates.get(name)!.push(per / ((performance.now() - started) / 1000))
    }
  }
  const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!
  return Object.fromEntries(names.map((name) => [name, median(rates.get(name)!)])) as Record<K, number>
}

/** This process's main-thread CPU time so far in microseconds (NaN where Node cannot tell it). */
const mainThreadCpu = (): number => {
  const usage = (process as { threadCpuUsage?: () => { user: number; system: number } }).threadCpuUsage?.()
  return usage === undefined ? Number.NaN : usage.user + usage.system
}

/**
 * Runs the cases one after the other, `rounds` times over (A B C, A B C, ...), and keeps for each
 * case the round with its median throughput. A case and its baseline then meet the same drift of
 * a shared machine, and one disturbed run does not decide a ratio. Each result also carries the
 * median of its rounds' main-thread CPU per request (`mainCpuPerRequest`).
 */
export const alternating = async <K extends string>(
  cases: Record<K, () => Promise<CannonResult>>,
  rounds: number = ROUNDS,
): Promise<Record<K, CannonResult>> => {
  const names = Object.keys(cases) as Array<K>
  const runs = new Map<K, Array<CannonResult>>(names.map((n) => [n, []]))
  const cpu = new Map<K, Array<number>>(names.map((n) => [n, []]))
  for (let round = 0; round < rounds; round++) {
    for (const name of names) {
      const before = mainThreadCpu()
      const result = await cases[name]()
      runs.get(name)!.push(result)
      const spent = mainThreadCpu() - before
      if (result.requests.total > 0 && Number.isFinite(spent)) cpu.get(name)!.push(spent / result.requests.total)
    }
  }
  const middle = <T>(xs: Array<T>, by: (x: T) => number): T | undefined => [...xs].sort((a, b) => by(a) - by(b))[Math.floor((xs.length - 1) / 2)]
  return Object.fromEntries(
    names.map((n) => {
      const result = middle(runs.get(n)!, (r) => r.requests.average)!
      const perRequest = middle(cpu.get(n)!, (us) => us)
      return [n, perRequest === undefined ? result : { ...result, mainCpuPerRequest: perRequest }]
    }),
  ) as Record<K, CannonResult>
}

/** The service as the load benches run it, on its throw-away database. */
export interface BenchServer {
  readonly app: StartedServer
  /** "PostgreSQL" or "embedded (PGlite)". */
  readonly database: string
  /** The throw-away PostgreSQL database's URL; undefined on the embedded database. */
  readonly databaseUrl: string | undefined
  /** Stops the server and drops its database and data directory. */
  readonly close: () => Promise<void>
}

/**
 * Starts the whole service with the demo data on a throw-away PostgreSQL database (the embedded
 * one when PostgreSQL is unreachable), limits out of the way, and `extraEnv` on top.
 */
export const startBenchServer = async (prefix: string, extraEnv: Record<string, string> = {}): Promise<BenchServer> => {
  const db = await pgDatabase(prefix)
  const served = await serveDatabase(prefix, db?.url, extraEnv)
  return {
    app: served.app,
    database: db !== undefined ? "PostgreSQL" : "embedded (PGlite)",
    databaseUrl: db?.url,
    close: async () => {
      await served.close()
      await db?.drop().catch(() => {})
    },
  }
}

/**
 * The service as the benches run it on `databaseUrl` (the embedded database when undefined), in a
 * data directory of its own, limits out of the way, `extraEnv` on top (`SEED_DEMO: "false"` to
 * serve a database that already holds data); `close` stops it and removes the data directory, not
 * the database.
 */
export const serveDatabase = async (
  prefix: string,
  databaseUrl: string | undefined,
  extraEnv: Record<string, string> = {},
): Promise<{ app: StartedServer; close: () => Promise<void> }> => {
  const dataDir = await mkdtemp(join(tmpdir(), `${prefix}-`))
  const app = await startServer({
    env: {
      PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      ...(databaseUrl !== undefined ? { DATABASE_URL: databaseUrl } : {}),
      RATE_LIMIT_PER_MINUTE: "1000000000",
      DAILY_EDIT_LIMIT: "1000000000",
      ...extraEnv,
    },
    quiet: true,
  })
  return {
    app,
    close: async () => {
      await app.close()
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * A copy of the PostgreSQL database at `url`, made by the server copying its files (no session
 * may be connected to the original meanwhile), named `<original>_<suffix>`; `drop` removes it.
 */
export const copyDatabase = async (url: string, suffix: string): Promise<{ url: string; drop: () => Promise<void> }> => {
  const original = new URL(url).pathname.slice(1)
  const name = `${original}_${suffix}`
  await onServer(`CREATE DATABASE ${name} TEMPLATE ${original} STRATEGY file_copy`)
  return database(name)
}

/**
 * An activity journal like the service's for the floors, on the bench's PostgreSQL database: its
 * entries ship over a pool of its own as large as the service's (10 connections). Undefined on the
 * embedded database, which belongs to the service's process.
 */
export const floorJournal = async (
  databaseUrl: string | undefined,
): Promise<{ readonly journal: ActivityJournal; readonly db: import("pg").Pool; readonly close: () => Promise<void> } | undefined> => {
  if (databaseUrl === undefined) return undefined
  const pg = require("pg") as typeof import("pg")
  const db = new pg.Pool({ connectionString: databaseUrl, max: 10 })
  const dir = await mkdtemp(join(tmpdir(), "cs-bench-journal-"))
  const journal = openActivityJournal(dir, async <R>(text: string, params: ReadonlyArray<unknown>) => (await db.query(text, [...params])).rows as Array<R>)
  return {
    journal,
    db,
    close: async () => {
      await journal.close(10_000)
      await db.end()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/** What a floor's entry names: the service's own entry for the same call names the same things. */
export interface EntryFields {
  readonly accountId: string | null
  readonly actor: { readonly type: "api_key" | "oauth_client"; readonly id: string; readonly name: string } | null
  readonly channel?: "api" | "mcp"
  readonly action: string
  readonly siteId: string | null
  readonly articleId: string | null
}

/**
 * Appends one activity entry per call to a journal like the service's (shipped in the background),
 * naming what the service's entry for the same call names (account, credential, action, site,
 * article): an entry of the account counts in the count table when shipped, an entry of no one
 * does not. The entry carries `requestId` when given (the answer's `X-Request-Id`), else one of
 * its own.
 */
export const activityEntries = (log: ActivityJournal, fields: EntryFields) => {
  let n = 0
  const tag = Math.random().toString(36).slice(2, 8)
  const channel = fields.channel ?? "api"
  return (requestId?: string) => {
    const i = n++
    return log.record({
      id: `act_floor_${tag}_${i}`,
      at: new Date().toISOString(),
      ...fields,
      channel,
      status: channel === "api" ? "200" : "ok",
      errorCode: null,
      durationMs: 0,
      requestId: requestId ?? `floor_${tag}_${i}`,
    })
  }
}

/**
 * The demo site with the most articles on a bench server's PostgreSQL database, its account and
 * newest publication date, with the demo key's header and a connected `pg` client for the bench
 * to grow the data with (the caller ends it).
 */
export const largestDemoSite = async (bench: { readonly app: StartedServer }, databaseUrl: string) => {
  const app = bench.app
  if (app.demo === null) throw new Error("the demo data was not seeded")
  const auth = { authorization: `Bearer ${app.demo.apiKey}` }
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const sites = (await (await fetch(`${app.url}/api/v1/sites`, { headers: auth })).json()) as { data: Array<{ id: string; article_count: number }> }
    const site = [...sites.data].sort((a, b) => b.article_count - a.article_count)[0]!
    const { account, newest } = (
      await client.query<{ account: string; newest: Date }>("select account_id as account, max(published_at) as newest from articles where site_id = $1 group by 1", [site.id])
    ).rows[0]!
    return { app, auth, client, site, account, newest }
  } catch (err) {
    await client.end()
    throw err
  }
}
