/** A fresh PostgreSQL database opened by this adapter, for the tests that talk to it directly. */
import { ManagedRuntime, type Layer } from "effect"
import { openDatabase, type OrmConfig, type OrmDatabase } from "../src/index.ts"
import { createTestDatabase } from "../../../test/support/databases.ts"

/** The adapter on a fresh database, the runtime of its layer, and one `close` that ends all three. */
export interface TestOrm {
  readonly db: OrmDatabase
  readonly runtime: ManagedRuntime.ManagedRuntime<Layer.Success<OrmDatabase["layer"]>, never>
  readonly close: () => Promise<void>
}

/** Creates a database, opens the adapter on it with `config` (migrated) and makes its runtime; drops the database if opening fails. */
export const openTestOrm = async (config: Omit<OrmConfig, "databaseUrl"> = {}): Promise<TestOrm> => {
  const database = await createTestDatabase()
  const db = await openDatabase({ ...config, databaseUrl: database.url }).catch(async (error: unknown) => {
    await database.drop()
    throw error
  })
  const runtime = ManagedRuntime.make(db.layer)
  return {
    db,
    runtime,
    close: async () => {
      await runtime.dispose()
      await db.close()
      await database.drop()
    },
  }
}
