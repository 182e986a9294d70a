/** Builds the MikroORM instance for PostgreSQL (DATABASE_URL) or embedded PGlite (DATA_DIR). */
import { unaccent } from "@electric-sql/pglite/contrib/unaccent"
import { Migrator } from "@mikro-orm/migrations"
import { MikroORM as PgliteMikroORM } from "@mikro-orm/pglite"
import { MikroORM as PostgresMikroORM } from "@mikro-orm/postgresql"
import type { EntityManager, MikroORM } from "@mikro-orm/sql"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { entities } from "./entities.ts"
import { migrationsList } from "../migrations/index.ts"
import { useLinearEscape } from "./escapeLiteral.ts"
import { releaseEndedClients } from "./releaseEndedClients.ts"
import type pg from "pg"

/** The SQL entity manager both drivers share. */
export type Em = EntityManager

/** Either driver's ORM, seen through the SQL base both share. */
export type Orm = MikroORM

export interface OrmOptions {
  readonly databaseUrl?: string
  readonly pgliteDir?: string
  readonly connectTimeoutMs: number
  readonly statementTimeoutMs: number
  readonly poolMax?: number
}

const common = {
  entities,
  extensions: [Migrator],
  migrations: {
    tableName: "mikro_orm_migrations",
    migrationsList,
    snapshot: false,
    silent: true,
    transactional: true,
    allOrNothing: true,
  },
  // functions are written by hand in migrations (`cs_search_text`), not mirrored in the entities
  schemaGenerator: { ignoreRoutines: true },
  debug: false,
  // every operation forks its own EntityManager; the global one must never be used
  allowGlobalContext: false,
  ensureDatabase: false,
  discovery: { warnWhenNoEntities: true },
}

/** Where the embedded database of a data directory lives. */
export const embeddedDatabaseDir = (dataDir: string): string => join(dataDir, "pglite")

/** Whether a data directory holds an embedded database already (PostgreSQL's own marker file in it). */
export const hasEmbeddedDatabase = (dataDir: string): boolean => existsSync(join(embeddedDatabaseDir(dataDir), "PG_VERSION"))

/** Opens the ORM; PostgreSQL when a URL is given, PGlite in `pgliteDir` otherwise. */
export const initOrm = async (options: OrmOptions): Promise<Orm> => {
  const orm = await openDriver(options)
  // one path for both drivers: their platforms share BasePostgreSqlPlatform's escapeLiteral
  useLinearEscape(orm)
  return orm
}

const openDriver = async (options: OrmOptions): Promise<Orm> => {
  if (options.databaseUrl) {
    const orm = await PostgresMikroORM.init({
      ...common,
      clientUrl: options.databaseUrl,
      pool: { min: 0, max: options.poolMax ?? 10, idleTimeoutMillis: 10_000 },
      driverOptions: {
        connectionTimeoutMillis: options.connectTimeoutMs,
        statement_timeout: options.statementTimeoutMs,
        // the client gives up too when the server never answers (a dead network path)
        query_timeout: options.statementTimeoutMs + 1_000,
        idle_in_transaction_session_timeout: options.statementTimeoutMs * 2,
        keepAlive: true,
      },
    })
    // a transaction's connection that an outage ended goes back to the pool (see the module)
    releaseEndedClients((await orm.driver.getConnection().getNativeClient()) as pg.Pool)
    return orm as unknown as Orm
  }
  const orm = await PgliteMikroORM.init({
    ...common,
    dbName: embeddedDatabaseDir(options.pgliteDir ?? "./data"),
    // full-text search folds accents with `unaccent` (migration articleSearch), as on PostgreSQL
    driverOptions: { extensions: { unaccent } },
  })
  return orm as unknown as Orm
}
