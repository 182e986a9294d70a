/** Test databases: a fresh PostgreSQL database per test file, a temp directory for PGlite. */
import pg from "pg"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export const PG_ADMIN_URL = process.env["TEST_PG_ADMIN_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** The URL of database `name` on the test server. */
export const databaseUrl = (name: string, base: string = PG_ADMIN_URL): string => {
  const url = new URL(base)
  url.pathname = `/${name}`
  return url.toString()
}

const admin = async <A>(f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/** Creates `cs_test_<random>` (`TEST_DB_PREFIX` names another prefix) and returns its URL and a function that drops it. */
export const createTestDatabase = async (): Promise<{ name: string; url: string; drop: () => Promise<void> }> => {
  const prefix = /^[a-z][a-z0-9_]{0,30}$/.test(process.env["TEST_DB_PREFIX"] ?? "") ? process.env["TEST_DB_PREFIX"] : "cs_test"
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  await admin((c) => c.query(`CREATE DATABASE ${name}`))
  return {
    name,
    url: databaseUrl(name),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  }
}

/** A fresh temporary directory and a function that removes it. */
export const createTempDir = (prefix = "cs-pglite-"): { dir: string; remove: () => void } => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}
