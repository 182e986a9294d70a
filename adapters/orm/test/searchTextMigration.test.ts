/**
 * The migrations that make the searched text read words as a person does (a body's, and a title's
 * or keyword's text such as `<details>`) compute every existing article's search vectors again,
 * and the term counts follow (PostgreSQL and PGlite).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Orm } from "../src/orm.ts"
import { nativeSql, type Sql } from "../src/sql.ts"
import { openOrmOn } from "./backends.ts"

const BEFORE = "Migration20261128120000_termChangesPerRow"
const BODY = "<p>An <strong>un</strong>believable <em>Hydro</em>ponics setup.</p><p>Tag &lt;numbat&gt; text.</p>"

// Every migration on PGlite, in the unit project's shared worker: 12 s of the 30 s default with
// two copies of this file and two busy cores beside it (2026-11-29); a bound, with room for CI's load.
const MIGRATION_TIME = 90_000

/**
 * A describe block of `title` for each backend, on a database of its own with no migration run:
 * `migrator()` runs them (the ORM is opened in the block's beforeAll), `sql` reads and writes it.
 */
const onEachBackend = (title: string, body: (db: { readonly migrator: () => Orm["migrator"]; readonly sql: Sql }) => void): void => {
  for (const backend of ["postgresql", "pglite"] as const) {
    describe(`${title} (${backend})`, () => {
      let orm: Orm
      let opened: Sql
      let close: () => Promise<void> = async () => {}
      beforeAll(async () => {
        ;({ orm, close } = await openOrmOn(backend))
        opened = nativeSql(orm)
      })
      afterAll(async () => {
        await close()
      })
      body({ migrator: () => orm.migrator, sql: (text, params) => opened(text, params) })
    })
  }
}

onEachBackend("the searched text's words, migrated", ({ migrator, sql }) => {
  /** Whether the article's vector holds `term`, and the term's count over the account's articles (counts and changes summed). */
  const termOf = async (term: string) => {
    const [row] = await sql<{ has: boolean; n: string }>(
      `select exists (select 1 from articles where id = 'art_mig' and search_vector @@ to_tsquery('cs_search', $1)) as has,
         coalesce((select sum(n) from article_term_counts where account_id = 'acc_mig' and term = $1), 0)
           + coalesce((select sum(d) from article_term_changes where account_id = 'acc_mig' and $1 = any(terms)), 0) as n`,
      [term],
    )
    return [row!.has, Number(row!.n)]
  }

  it("should find an article written before it by the words a reader sees, and count those words instead of their parts", async () => {
    await migrator().up({ to: BEFORE })
    await sql(`insert into accounts (id, email, password_hash, name, created_at) values ('acc_mig', 'mig@example.com', 'x', 'M', now())`, [])
    await sql(`insert into sites (id, account_id, name, url, created_at) values ('site_mig', 'acc_mig', 'S', 'https://s.test', now())`, [])
    await sql(
      `insert into articles (id, account_id, site_id, title, url, status, published_at, target_keyword, word_count, featured_image, body, updated_at, revision)
       values ('art_mig', 'acc_mig', 'site_mig', 'The <details> element', 'https://s.test/a', 'published', now(), 'k <kbd>', 6, null, $1, now(), 1)`,
      [BODY],
    )
    expect([await termOf("unbelievable"), await termOf("ponics"), await termOf("numbat"), await termOf("details"), await termOf("kbd")]).toEqual([
      [false, 0], [true, 1], [false, 0], [false, 0], [false, 0],
    ])
    await migrator().up()
    expect([await termOf("unbelievable"), await termOf("hydroponics"), await termOf("numbat"), await termOf("details"), await termOf("kbd")]).toEqual([
      [true, 1], [true, 1], [true, 1], [true, 1], [true, 1],
    ])
    expect([await termOf("ponics"), await termOf("un"), await termOf("element")]).toEqual([[false, 0], [false, 0], [true, 1]])
    const [title] = await sql<{ has: boolean }>(`select title_vector @@ to_tsquery('cs_search', 'details') as has from articles where id = 'art_mig'`, [])
    expect(title!.has).toBe(true)
  }, MIGRATION_TIME)
})

onEachBackend("the searched text's punctuation, migrated", ({ migrator, sql }) => {
  const has = async (column: "search_vector" | "title_vector", term: string) => {
    const [row] = await sql<{ has: boolean; n: string }>(
      `select ${column} @@ to_tsquery('cs_search', $1) as has,
         coalesce((select sum(n) from article_term_counts where account_id = 'acc_punct' and term = $1), 0)
           + coalesce((select sum(d) from article_term_changes where account_id = 'acc_punct' and $1 = any(terms)), 0) as n
       from articles where id = 'art_punct'`,
      [term],
    )
    return [row!.has, Number(row!.n)]
  }

  it("should find an article written before it by each word of a host, a path, a file name and a version, and count those words", async () => {
    await migrator().up({ to: "Migration20261129120000_idempotencyLeaseToken" })
    await sql(`insert into accounts (id, email, password_hash, name, created_at) values ('acc_punct', 'punct@example.com', 'x', 'M', now())`, [])
    await sql(`insert into sites (id, account_id, name, url, created_at) values ('site_punct', 'acc_punct', 'S', 'https://s.test', now())`, [])
    await sql(
      `insert into articles (id, account_id, site_id, title, url, status, published_at, target_keyword, word_count, featured_image, body, updated_at, revision)
       values ('art_punct', 'acc_punct', 'site_punct', 'Node.js tips', 'https://s.test/a', 'published', now(), 'v2.0', 6, null, $1, now(), 1)`,
      ["<p>See example.com/path and &lt;/script&gt;. Crème2</p>"],
    )
    expect([await has("search_vector", "path"), await has("search_vector", "script"), await has("title_vector", "node")]).toEqual([
      [false, 0], [false, 0], [false, 0],
    ])
    await migrator().up()
    expect([await has("search_vector", "path"), await has("search_vector", "script"), await has("title_vector", "node"), await has("search_vector", "v2")]).toEqual([
      [true, 1], [true, 1], [true, 1], [true, 1],
    ])
    expect(await has("search_vector", "example.com")).toEqual([false, 0])
    // a word of letters and digits folded (Migration20261129210000_searchNumberWords): stored and counted as creme2 (a query is folded too)
    expect([await has("search_vector", "creme2"), await has("search_vector", "crème2")]).toEqual([[true, 1], [true, 0]])
  }, MIGRATION_TIME)
})

onEachBackend("the searched text's soft hyphens, migrated", ({ migrator, sql }) => {
  const has = async (id: string, column: "search_vector" | "title_vector", term: string) => {
    const [row] = await sql<{ has: boolean; n: string }>(
      `select ${column} @@ to_tsquery('cs_search', $2) as has,
         coalesce((select sum(n) from article_term_counts where account_id = 'acc_shy' and term = $2), 0)
           + coalesce((select sum(d) from article_term_changes where account_id = 'acc_shy' and $2 = any(terms)), 0) as n
       from articles where id = $1`,
      [id, term],
    )
    return [row!.has, Number(row!.n)]
  }
  /** The row's version: a row the migration rewrote has a new one. */
  const versionOf = async (id: string) => (await sql<{ v: string }>(`select xmin::text as v from articles where id = $1`, [id]))[0]!.v

  it("should find an article written before it by a word holding soft hyphens, and rewrite only the articles that hold one", async () => {
    await migrator().up({ to: "Migration20261129210000_searchNumberWords" })
    await sql(`insert into accounts (id, email, password_hash, name, created_at) values ('acc_shy', 'shy@example.com', 'x', 'M', now())`, [])
    await sql(`insert into sites (id, account_id, name, url, created_at) values ('site_shy', 'acc_shy', 'S', 'https://s.test', now())`, [])
    const insert = (id: string, title: string, keyword: string, body: string) =>
      sql(
        `insert into articles (id, account_id, site_id, title, url, status, published_at, target_keyword, word_count, featured_image, body, updated_at, revision)
         values ($1, 'acc_shy', 'site_shy', $2, $5, 'published', now(), $3, 3, null, $4, now(), 1)`,
        [id, title, keyword, body, `https://s.test/${id}`],
      )
    await insert("art_shy", "Tomato\u00ades", "mar\u00adinara", "<p>A pomo\u00addoro sauce</p>")
    await insert("art_plain", "Plain", "plain", "<p>No soft hyphen here</p>")
    expect(await has("art_shy", "search_vector", "pomodoro")).toEqual([false, 0])
    const plainBefore = await versionOf("art_plain")
    const shyBefore = await versionOf("art_shy")
    await migrator().up()
    expect([await has("art_shy", "search_vector", "pomodoro"), await has("art_shy", "search_vector", "marinara"), await has("art_shy", "title_vector", "tomatoes")]).toEqual([
      [true, 1], [true, 1], [true, 1],
    ])
    expect(await has("art_shy", "search_vector", "pomo")).toEqual([false, 0])
    expect(await versionOf("art_shy")).not.toBe(shyBefore)
    expect(await versionOf("art_plain")).toBe(plainBefore)
  }, MIGRATION_TIME)
})
