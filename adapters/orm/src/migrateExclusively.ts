/** Pending migrations run by one process at a time on a shared PostgreSQL database. */
import pg from "pg"
import type { Orm } from "./orm.ts"

/**
 * Runs the pending migrations holding a PostgreSQL advisory lock on a session of its own, so that
 * processes migrating one database at once (instances starting together, `admin migrate` beside
 * a server's start) take turns: the later ones find the migrations applied and do nothing, where
 * each would otherwise start the same migration and all but one fail on the rows and types the
 * first had just made. PGlite has one process already (the data directory's lock). Returns the
 * names of the migrations this call applied.
 */
export const migrateExclusively = async (orm: Orm, databaseUrl: string | undefined, connectTimeoutMs: number): Promise<ReadonlyArray<string>> => {
  if (databaseUrl === undefined) return (await orm.migrator.up()).map((m) => m.name)
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "content-site migrations", connectionTimeoutMillis: connectTimeoutMs })
  client.on("error", () => {})
  await client.connect()
  try {
    // (waits as long as the migration in hand takes: the lock is the session's, and so ends with it)
    await client.query("select pg_advisory_lock(hashtext('content-site: migrations'))")
    return (await orm.migrator.up()).map((m) => m.name)
  } finally {
    await client.end().catch(() => {})
  }
}
