/** A fresh PostgreSQL database with the ORM's Layers on it, for persistence tests that also set rows by hand. */
import { openDatabase, type OrmConfig, type OrmDatabase } from "@content-site/orm"
import { type Layer, ManagedRuntime } from "effect"
import pg from "pg"
import { createTestDatabase } from "./databases.ts"

export interface TestStore {
  readonly db: OrmDatabase
  readonly runtime: ManagedRuntime.ManagedRuntime<Layer.Success<OrmDatabase["layer"]>, never>
  /** A plain client on the same database, for rows written by hand. */
  readonly admin: pg.Client
  /** Closes the client, the runtime and the ORM, and drops the database. */
  readonly close: () => Promise<void>
}

/** Opens a new database (migrated; housekeeping off unless `config` says otherwise), its runtime and a plain client. */
export const openTestStore = async (config: Omit<OrmConfig, "databaseUrl"> = {}): Promise<TestStore> => {
  const database = await createTestDatabase()
  try {
    const db = await openDatabase({ housekeepingIntervalMs: 0, ...config, databaseUrl: database.url })
    const runtime = ManagedRuntime.make(db.layer)
    const admin = new pg.Client({ connectionString: database.url })
    await admin.connect()
    return {
      db,
      runtime,
      admin,
      close: async () => {
        await admin.end()
        await runtime.dispose()
        await db.close()
        await database.drop()
      },
    }
  } catch (e) {
    await database.drop()
    throw e
  }
}
