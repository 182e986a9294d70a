/** Pending migrations run by one process at a time on a shared PostgreSQL database. */
import pg from "pg"
import { migrationsList } from "../migrations/index.ts"
import type { Orm } from "./orm.ts"

/**
 * The database was migrated by a newer release: it holds migrations this one does not know. This
 * release would read and write its tables as they were before (and answer "up to date"), so it
 * refuses it; the release that migrated it, or a newer one, may use it.
 */
export class SchemaTooNew extends Error {
  readonly unknown: ReadonlyArray<string>
  constructor(unknown: ReadonlyArray<string>) {
    super(
      `The database's schema is newer than this release: it has ${unknown.length === 1 ? "a migration" : `${unknown.length} migrations`} ` +
        `this release does not know (${unknown.slice(0, 3).join(", ")}${unknown.length > 3 ? ", ..." : ""}). ` +
        `Run the release that migrated it, or a newer one; this one would misread its data.`,
    )
    this.name = "SchemaTooNew"
    this.unknown = unknown
  }
}

const known = new Set(migrationsList.map((m) => m.name))

/**
 * Migrations committed under another name, the same statements: a database a release before the
 * rename migrated holds the former name. It is this release's migration, not a newer one's, and is
 * recorded under its current name before the migrator runs (it would otherwise run it again).
 */
export const renamedMigrations: Readonly<Record<string, string>> = {
  Migration20261124090000_partitionedActivity: "Migration20261124000000_partitionedActivity",
}

const withoutExtension = (name: string): string => name.replace(/\.[cm]?[jt]s$/, "")

/** Records a migration executed under its former name (renamedMigrations) under its current one. */
const adoptRenamed = async (orm: Orm): Promise<void> => {
  for (const { name } of await orm.migrator.getExecuted()) {
    const current = renamedMigrations[withoutExtension(name)]
    if (current !== undefined) await orm.em.getConnection().execute("update mikro_orm_migrations set name = ? where name = ?", [current, name])
  }
}

/** Refuses a database that holds a migration this release does not have (SchemaTooNew). */
const refuseNewerSchema = async (orm: Orm): Promise<void> => {
  const unknown = (await orm.migrator.getExecuted()).map((m) => withoutExtension(m.name)).filter((name) => !known.has(name) && renamedMigrations[name] === undefined)
  if (unknown.length > 0) throw new SchemaTooNew(unknown)
}

/** The pending migrations, after checking that the database knows none this release does not. */
const up = async (orm: Orm): Promise<ReadonlyArray<string>> => {
  await refuseNewerSchema(orm)
  await adoptRenamed(orm)
  return (await orm.migrator.up()).map((m) => m.name)
}

/**
 * Runs the pending migrations holding a PostgreSQL advisory lock on a session of its own, so that
 * processes migrating one database at once (instances starting together, `admin migrate` beside
 * a server's start) take turns: the later ones find the migrations applied and do nothing, where
 * each would otherwise start the same migration and all but one fail on the rows and types the
 * first had just made. PGlite has one process already (the data directory's lock). Returns the
 * names of the migrations this call applied.
 */
export const migrateExclusively = async (orm: Orm, databaseUrl: string | undefined, connectTimeoutMs: number): Promise<ReadonlyArray<string>> => {
  if (databaseUrl === undefined) return up(orm)
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "content-site migrations", connectionTimeoutMillis: connectTimeoutMs })
  client.on("error", () => {})
  await client.connect()
  try {
    // (waits as long as the migration in hand takes: the lock is the session's, and so ends with it)
    await client.query("select pg_advisory_lock(hashtext('content-site: migrations'))")
    return await up(orm)
  } finally {
    await client.end().catch(() => {})
  }
}
