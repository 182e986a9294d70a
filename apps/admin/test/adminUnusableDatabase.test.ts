import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase } from "../../../test/support/databases.ts"
import { runNode } from "../../../test/support/processes.ts"

const ADMIN = "apps/admin/main.ts"

// Each case starts Node processes and opens a database: on a shared, loaded 2-core machine that has taken 20 s.
describe("admin command line on a database it cannot use as it is", { timeout: 120_000 }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  const admin = (...args: Array<string>) => runNode(ADMIN, args, { DATABASE_URL: database.url })
  const query = async (sql: string) => {
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      return (await client.query(sql)).rows
    } finally {
      await client.end()
    }
  }

  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterAll(async () => {
    await database?.drop()
  })

  it("should refuse it with one sentence and exit code 2, never answer that the schema is up to date or write to it", async () => {
    expect((await admin("migrate")).code).toBe(0)
    // what a later release's migration leaves behind
    await query("insert into mikro_orm_migrations (name) values ('Migration20991231000000_fromTheFuture')")
    const migrate = await admin("migrate")
    expect(migrate.code).toBe(2)
    expect(migrate.stdout).toBe("")
    expect(migrate.stderr.trim()).toBe(
      "Error: The database's schema is newer than this release: it has a migration this release does not know (Migration20991231000000_fromTheFuture). Run the release that migrated it, or a newer one; this one would misread its data.",
    )
    const create = await admin("account", "create", "--email", "future@example.test", "--password", "long-enough")
    expect(create.code).toBe(2)
    expect(create.stderr).toContain("newer than this release")
    expect(await query("select id from accounts")).toEqual([])
  })

  it("should say a statement the database refuses in one line, exit code 2, never the stack of the driver", async () => {
    await query("delete from mikro_orm_migrations where name = 'Migration20991231000000_fromTheFuture'")
    await query(
      "create function cs_frozen() returns trigger language plpgsql as $$ begin raise exception 'accounts are frozen for maintenance'; end $$;" +
        "create trigger cs_frozen before insert on accounts for each row execute function cs_frozen()",
    )
    const create = await admin("account", "create", "--email", "frozen@example.test", "--password", "long-enough")
    expect(create.code).toBe(2)
    expect(create.stdout).toBe("")
    expect(create.stderr).toBe("Error: accounts are frozen for maintenance.\n")
  })
})
