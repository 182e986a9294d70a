/**
 * An article that another instance writes while a searched-text migration runs (it changes what
 * the search columns are computed by, then rewrites every row: here searchNumberWords, after which
 * `etape3` finds *Étape3*) is computed the new way: the migration locks the table against writes first, so the write waits for it and is
 * not stored with the old functions' vectors, which nothing would compute again (PostgreSQL; PGlite
 * has one connection).
 */
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { initOrm, type Orm } from "../src/orm.ts"
import { createTestDatabase } from "../../../test/support/databases.ts"

const BEFORE = "Migration20261129200000_searchTextPunctuation"

const article = (id: string) =>
  `insert into articles (id, account_id, site_id, title, url, status, published_at, target_keyword, word_count, featured_image, body, updated_at, revision)
   values ('${id}', 'acc_mig', 'site_mig', 'Étape3 guide', 'https://s.test/${id}', 'published', now(), 'k', 3, null, '<p>Read the Étape3 notes.</p>', now(), 1)`

describe("the searched-text migrations, with another instance writing (postgresql)", () => {
  let orm: Orm
  let url: string
  let drop: () => Promise<void>
  const clients: Array<pg.Client> = []
  const client = async () => {
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    clients.push(c)
    return c
  }

  beforeAll(async () => {
    const database = await createTestDatabase()
    ;({ url, drop } = database)
    orm = await initOrm({ databaseUrl: url, connectTimeoutMs: 5_000, statementTimeoutMs: 30_000 })
  })
  afterAll(async () => {
    for (const c of clients) await c.end()
    await orm.close(true)
    await drop()
  })

  it("should compute an article inserted during the migration with the new searched text (etape3 finds Étape3)", async () => {
    await orm.migrator.up({ to: BEFORE })
    const [holder, writer, watcher] = [await client(), await client(), await client()]
    await watcher.query(`insert into accounts (id, email, password_hash, name, created_at) values ('acc_mig', 'mig@example.com', 'x', 'M', now())`)
    await watcher.query(`insert into sites (id, account_id, name, url, created_at) values ('site_mig', 'acc_mig', 'S', 'https://s.test', now())`)
    await watcher.query(article("art_held"))
    // a row lock that the migration's rewrite waits for, once it has changed the functions
    await holder.query("begin")
    await holder.query(`select id from articles where id = 'art_held' for update`)
    const migrated = orm.migrator.up()
    const waiting = async (n: number) => {
      for (let i = 0; i < 200; i++) {
        const { rows } = await watcher.query<{ n: string }>(`select count(*) as n from pg_locks where not granted`)
        if (Number(rows[0]!.n) >= n) return
        await new Promise((r) => setTimeout(r, 25))
      }
      throw new Error("nothing waited")
    }
    await waiting(1)
    const written = writer.query(article("art_new"))
    // the write either is done (no table lock) or waits for the migration
    await Promise.race([written, waiting(2)])
    await holder.query("commit")
    await migrated
    await written
    const { rows } = await watcher.query<{ id: string; body: boolean; title: boolean }>(
      `select id, search_vector @@ to_tsquery('cs_search', 'etape3') as body, title_vector @@ to_tsquery('cs_search', 'etape3') as title from articles order by id`,
    )
    expect(rows).toEqual([
      { id: "art_held", body: true, title: true },
      { id: "art_new", body: true, title: true },
    ])
  })
})
