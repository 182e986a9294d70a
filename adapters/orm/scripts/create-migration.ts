/**
 * Generates the next migration with MikroORM's migrator from the entities' diff against a scratch
 * PostgreSQL database migrated to the latest committed migration. Usage:
 *   node adapters/orm/scripts/create-migration.ts [name]   (needs PostgreSQL on DATABASE_URL's server)
 */
import pg from "pg"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { initOrm } from "../src/orm.ts"

const admin = process.env["DATABASE_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"
const scratch = `cs_migration_${Date.now()}`
const client = new pg.Client({ connectionString: admin })
await client.connect()
await client.query(`CREATE DATABASE ${scratch}`)
try {
  const url = new URL(admin)
  url.pathname = `/${scratch}`
  const orm = await initOrm({ databaseUrl: url.toString(), connectTimeoutMs: 5000, statementTimeoutMs: 60_000 })
  try {
    await orm.migrator.up()
    const dir = join(dirname(fileURLToPath(import.meta.url)), "..", "migrations")
    const result = await orm.migrator.create(dir, false, false, process.argv[2])
    console.log(result.fileName ? `created ${result.fileName}` : "no changes")
    for (const line of result.diff.up) console.log(line)
  } finally {
    await orm.close(true)
  }
} finally {
  await client.query(`DROP DATABASE IF EXISTS ${scratch} WITH (FORCE)`)
  await client.end()
}
