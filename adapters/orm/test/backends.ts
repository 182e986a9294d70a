/** The ORM (not migrated) on a fresh database of either backend, for tests that run on both. */
import { initOrm, type Orm } from "../src/orm.ts"
import { createTempDir, createTestDatabase } from "../../../test/support/databases.ts"

/** The two backends the adapter runs on. */
export type Backend = "postgresql" | "pglite"

/** Opens the ORM on a new PostgreSQL database or PGlite directory; `close` closes it and drops or removes its data. */
export const openOrmOn = async (backend: Backend): Promise<{ orm: Orm; close: () => Promise<void> }> => {
  const options = { connectTimeoutMs: 5_000, statementTimeoutMs: 30_000 }
  if (backend === "postgresql") {
    const database = await createTestDatabase()
    const orm = await initOrm({ databaseUrl: database.url, ...options })
    return { orm, close: async () => (await orm.close(true), await database.drop()) }
  }
  const temp = createTempDir()
  const orm = await initOrm({ pgliteDir: temp.dir, ...options })
  return { orm, close: async () => (await orm.close(true), temp.remove()) }
}
