/**
 * @content-site/orm: every storage port of the core except MediaStore, on MikroORM 7. PostgreSQL
 * when `databaseUrl` is set, otherwise embedded PGlite under `dataDir`, with the same entities and
 * the same committed migrations (run on open). Request counters go to Redis when `redisUrl` is set.
 *
 * The authenticated hot path reads the database once (the read itself): API keys are cached and
 * auth-failure budgets known in process, both kept honest across instances by the event bus
 * (`bus.ts`, LISTEN/NOTIFY); request counts are leased in batches (`leases.ts`); activity entries of
 * reads and refused calls go to a local journal before the call is answered and reach the database in
 * large background batches (`activityJournal.ts`).
 */
import type { MediaStore, StorageServices } from "@content-site/core"
import { DatabaseSchema } from "@mikro-orm/sql"
import { Layer } from "effect"
import type { Redis } from "ioredis"
import { join } from "node:path"
import { journalDir, journalMarks, openActivityJournal, replayJournals, write, type ActivityJournal, type ActivityJournalOptions } from "./activityJournal.ts"
import { inProcessEventBus, openPostgresEventBus, type EventBus } from "./bus.ts"
import { lockDataDir } from "./dataDirLock.ts"
import { migrateExclusively } from "./migrateExclusively.ts"
import { DatabaseUnreachable } from "./databaseUnreachable.ts"
import { ApiKeyEntity, SEARCH_COLUMNS } from "./entities.ts"
import { ormIdempotencyStore } from "./idempotency.ts"
import { ormDataImporter } from "./importer.ts"
import { connectRedis, postgresLimitStore, redisLimitStore } from "./limits.ts"
import { ormOAuthStore } from "./oauth.ts"
import { initOrm, type Em, type Orm } from "./orm.ts"
import { ormRepositories } from "./repositories.ts"
import { ormRewriteLedger } from "./rewrites.ts"
import { nativeSql } from "./sql.ts"
import { ormArticleWriter } from "./writer.ts"
import { pruneActivity, scheduleHousekeeping, sweepCounters, type Pruned, type Swept } from "./housekeeping.ts"
import { ensurePartitionsAhead } from "./partitions.ts"
import { consoleEventLog, messageOf, type OrmEventLog } from "./eventLog.ts"

export { DataDirLocked, DataDirUnusable, processStartTime } from "./dataDirLock.ts"
export { DatabaseUnreachable } from "./databaseUnreachable.ts"
export { SchemaTooNew } from "./migrateExclusively.ts"
export { hasEmbeddedDatabase } from "./orm.ts"
export type { Pruned, Swept } from "./housekeeping.ts"
export type { OrmEventLog } from "./eventLog.ts"

export interface OrmConfig {
  /** postgres://... ; absent means embedded PGlite under dataDir. */
  readonly databaseUrl?: string
  /** Default "./data". */
  readonly dataDir?: string
  /** When set, LimitStore uses Redis; otherwise the database. */
  readonly redisUrl?: string
  /** Bounded time before Unavailable when the database cannot be reached (default 5000). */
  readonly connectTimeoutMs?: number
  /** Longest a statement may run (default 10000). */
  readonly statementTimeoutMs?: number
  /** How long an article change waits for another change's lock before EditConflict (default 5000). */
  readonly lockTimeoutMs?: number
  /** PostgreSQL pool size (default 10). */
  readonly poolMax?: number
  /** How often stale request and edit counters are deleted (default 10 minutes; 0: never). */
  readonly housekeepingIntervalMs?: number
  /** The activity journal's timings (defaults in `activityJournal.ts`). */
  readonly journal?: ActivityJournalOptions
  /**
   * The clock of the request counters' windows, of OAuth expiries and of housekeeping (which
   * counters and idempotency keys are stale, which months' partitions are ahead); default
   * `Date.now`, tests pass the one they control.
   */
  readonly now?: () => number
  /** Where the adapter's own events go (default: the console). */
  readonly log?: OrmEventLog
}

export interface OrmDatabase {
  /** Provides every StorageServices port of the core EXCEPT MediaStore. No requirements. */
  readonly layer: Layer.Layer<Exclude<StorageServices, MediaStore>>
  /** For GET /readyz. */
  readonly ready: () => Promise<boolean>
  /** Runs pending migrations; idempotent. */
  readonly migrate: () => Promise<void>
  /** The owner of an API key, for the admin command line (`key revoke KEY_ID`). */
  readonly keyOwner: (keyId: string) => Promise<string | null>
  /** SQL that would bring the database's schema to the entities' (empty when migrations are complete). */
  readonly schemaDiff: () => Promise<string>
  /** Which database this is: "postgresql" or "pglite". */
  readonly kind: "postgresql" | "pglite"
  /** Ships the activity entries this instance's journal still holds (for tests that read the table). */
  readonly flushActivity: () => Promise<void>
  /** Whether the event bus is connected, i.e. the in-process caches are in use. */
  readonly eventsConnected: () => boolean
  /**
   * Hears what this instance hears on the event bus, after its caches have: an event sent after a
   * change reaches here only once the change's own events did (one connection, commit order).
   * For diagnostics and for tests that must know a notification landed. Returns the unsubscribe.
   */
  readonly onEvent: (listener: (payload: string) => void) => () => void
  /** Deletes request counters of ended windows, edit counters of past days and expired idempotency keys now (also run on a schedule). */
  readonly sweepCounters: () => Promise<Swept>
  /** Deletes activity entries from before `before`, whole months by dropping their partitions (the admin command line). */
  readonly pruneActivity: (before: Date) => Promise<Pruned>
  /** Entries in this instance's journal not yet in the database. */
  readonly activityBacklog: () => number
  /** Writes buffered activity (bounded wait), stops listening, closes the connections. */
  readonly close: () => Promise<void>
}

const withTimeout = <A>(p: Promise<A>, ms: number, fallback: A): Promise<A> =>
  new Promise((resolve) => {
    const timer = setTimeout(() => resolve(fallback), ms)
    p.then(
      (a) => (clearTimeout(timer), resolve(a)),
      () => (clearTimeout(timer), resolve(fallback)),
    )
  })

/** Opens the database, takes the data directory's lock (PGlite) and runs pending migrations. */
export const openDatabase = async (config: OrmConfig): Promise<OrmDatabase> => {
  const connectTimeoutMs = config.connectTimeoutMs ?? 5_000
  const statementTimeoutMs = config.statementTimeoutMs ?? 10_000
  const dataDir = config.dataDir ?? "./data"
  const log = config.log ?? consoleEventLog
  const release = config.databaseUrl ? () => {} : lockDataDir(dataDir)
  let orm: Orm
  let redis: Redis | undefined
  let redisNamespace = ""
  let bus: EventBus
  try {
    orm = await initOrm({
      ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : { pgliteDir: join(dataDir) }),
      connectTimeoutMs,
      statementTimeoutMs,
      ...(config.poolMax !== undefined ? { poolMax: config.poolMax } : {}),
    })
  } catch (e) {
    release()
    throw e
  }
  try {
    // Reach the database before migrating: MikroORM's migrator would otherwise create a database
    // that does not exist (a mistyped name in DATABASE_URL: a new, empty one, with the server's
    // default collation), and a server that does not answer would surface as the driver's stack.
    if (config.databaseUrl) {
      const url = config.databaseUrl
      await nativeSql(orm)("select 1", []).catch((e: unknown) => {
        throw new DatabaseUnreachable("DATABASE_URL", url, e)
      })
    }
    const applied = await migrateExclusively(orm, config.databaseUrl, connectTimeoutMs)
    if (applied.length > 0) log.info({ migrations: applied }, `database: applied ${applied.length} migrations`)
    if (config.redisUrl) {
      const url = config.redisUrl
      redis = await connectRedis(url, connectTimeoutMs).catch((e: unknown) => {
        throw new DatabaseUnreachable("REDIS_URL", url, e)
      })
      // The counters in Redis are this database's: two deployments sharing one Redis (a staging
      // beside a production, the tests' databases) must not share a budget, per address above all.
      // The database's own name, as it answers it (a pooler's alias is not what it is called).
      const rows = await nativeSql(orm)<{ name: string }>("select current_database() as name", [])
      redisNamespace = rows[0]?.name ?? ""
    }
    bus = config.databaseUrl
      ? await openPostgresEventBus({ url: config.databaseUrl, sql: nativeSql(orm), connectTimeoutMs, log })
      : inProcessEventBus(log)
  } catch (e) {
    redis?.disconnect()
    await orm.close(true).catch(() => {})
    release()
    throw e
  }
  const fork = () => orm.em.fork() as Em
  const sql = nativeSql(orm)
  // Entries of reads and refused calls: journaled on local disk, shipped in the background (activityJournal.ts).
  const journalDirectory = journalDir(dataDir, config.databaseUrl)
  const activity: ActivityJournal = openActivityJournal(journalDirectory, sql, { ...config.journal, log })
  // the journals of processes that are gone, and the spool files of releases before the journal
  const replayDirs = [journalDirectory, journalDir(dataDir, config.databaseUrl, "activity-spool")]
  const replay = async () => {
    let replayed = 0
    for (const dir of replayDirs) replayed += await replayJournals(dir, (rows, position) => write(sql, rows, position, log), undefined, journalMarks(sql))
    if (replayed > 0) log.info({ entries: replayed }, `activity: wrote ${replayed} entries from the journal of an earlier process`)
  }
  const now = config.now ?? Date.now
  const beforeSweep = async () => {
    await ensurePartitionsAhead(sql, new Date(now()), log)
    await replay()
  }
  await ensurePartitionsAhead(sql, new Date(now()), log).catch((e: unknown) => log.warn({ err: messageOf(e) }, "activity: could not create the coming months' partitions yet"))
  await replay().catch((e: unknown) => log.warn({ err: messageOf(e) }, "activity: could not replay the journal of an earlier process yet"))
  const housekeepingMs = config.housekeepingIntervalMs ?? 600_000
  const stopHousekeeping = housekeepingMs > 0 ? scheduleHousekeeping(sql, housekeepingMs, beforeSweep, now, log) : () => {}
  let closed = false
  const layer = Layer.mergeAll(
    ormRepositories(orm, { bus, activity }),
    ormArticleWriter(orm, { lockTimeoutMs: config.lockTimeoutMs ?? 5_000 }),
    redis ? redisLimitStore(redis, redisNamespace, config.now, log) : postgresLimitStore(orm, bus, config.now),
    ormOAuthStore(orm, bus, config.now),
    ormDataImporter(orm, { databaseUrl: config.databaseUrl, connectTimeoutMs }),
    ormIdempotencyStore(sql, { closed: () => closed }),
    ormRewriteLedger(orm),
  )
  return {
    layer,
    kind: config.databaseUrl ? "postgresql" : "pglite",
    // Ready when the database answers and, when the request counters live in Redis, Redis too:
    // without it every authenticated call is refused (503), so a balancer must know.
    ready: async () => {
      const [database, counters] = await Promise.all([
        withTimeout(fork().execute("select 1").then(() => true), connectTimeoutMs, false),
        redis === undefined ? Promise.resolve(true) : withTimeout(redis.ping().then(() => true), connectTimeoutMs, false),
      ])
      return database && counters
    },
    migrate: async () => {
      await migrateExclusively(orm, config.databaseUrl, connectTimeoutMs)
    },
    schemaDiff: () => schemaDiff(orm),
    keyOwner: async (keyId) => (await fork().findOne(ApiKeyEntity, { id: keyId }))?.accountId ?? null,
    flushActivity: activity.flush,
    eventsConnected: bus.connected,
    onEvent: (listener) => bus.subscribe({ event: listener, reset: () => {} }),
    sweepCounters: () => sweepCounters(sql, now()),
    pruneActivity: (before) => pruneActivity(sql, before),
    activityBacklog: activity.backlog,
    close: async () => {
      if (closed) return
      closed = true
      stopHousekeeping()
      try {
        await activity.close(connectTimeoutMs)
        await bus.close()
        redis?.disconnect()
        await orm.close(true)
      } finally {
        release()
      }
    },
  }
}

/**
 * What the schema lacks or has too much of against the entities, as SQL (empty when nothing).
 * Search's generated columns are not properties (SEARCH_COLUMNS): each must exist as a `tsvector`
 * generated from its expression (else a line says what is wrong), and the comparison then leaves
 * them out.
 */
const schemaDiff = async (orm: Orm): Promise<string> => {
  const target = orm.schema.getTargetSchema()
  const from = await DatabaseSchema.create(orm.em.getConnection(), orm.em.getPlatform(), orm.config, undefined, [...target.getNamespaces()])
  const wrong: Array<string> = []
  for (const [tableName, columns] of Object.entries(SEARCH_COLUMNS)) {
    const table = from.getTable(tableName)
    for (const [name, expression] of Object.entries(columns)) {
      const column = table?.getColumn(name)
      if (column?.type !== "tsvector" || column.generated !== `${expression} stored`) {
        wrong.push(`-- ${tableName}.${name} should be a tsvector generated from ${expression} and stored; found ${column === undefined ? "no column" : `${column.type} ${column.generated ?? "not generated"}`}`)
      }
      table?.removeColumn(name)
    }
  }
  return [...wrong, (await orm.schema.getUpdateSchemaSQL({ wrap: false, fromSchema: from })).trim()].filter((line) => line !== "").join("\n")
}
