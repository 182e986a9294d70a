/**
 * An article read for an account reads only that account's row: another account's article (up to
 * a megabyte of body) never comes back from the database, so that a 404 for it costs what one for
 * a missing id costs (the contract: "exactly as for one that does not exist", timing included).
 * Reads handled side by side share one statement (`batchedLookup`); each caller still gets its
 * own account's article only. On PostgreSQL and PGlite.
 */
import { ArticleRepository } from "@content-site/core"
import { Exit, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ActivityJournal } from "../src/activityJournal.ts"
import { inProcessEventBus } from "../src/bus.ts"
import type { Orm } from "../src/orm.ts"
import { ormRepositories } from "../src/repositories.ts"
import { nativeSql } from "../src/sql.ts"
import { tagOf } from "../../../test/support/exits.ts"
import { openOrmOn } from "./backends.ts"

const OWN = { account: "acc_own", site: "site_own", article: "art_own" }
const OTHER = { account: "acc_other", site: "site_other", article: "art_other" }

for (const backend of ["postgresql", "pglite"] as const) {
  describe(`an account's article reads (${backend})`, () => {
    let orm: Orm
    let runtime: ManagedRuntime.ManagedRuntime<ArticleRepository, never>
    let close: () => Promise<void> = async () => {}
    /** The ids of the article rows every statement answered, in order. */
    const answered: Array<string> = []

    beforeAll(async () => {
      ;({ orm, close } = await openOrmOn(backend))
      await orm.migrator.up()
      const sql = nativeSql(orm)
      for (const { account, site, article } of [OWN, OTHER]) {
        await sql(`insert into accounts (id, email, name, password_hash, created_at) values ($1, $2, $3, 'x', now())`, [account, `${account}@example.com`, account])
        await sql(`insert into sites (id, account_id, name, url, created_at) values ($1, $2, $3, 'https://example.com', now())`, [site, account, site])
        await sql(
          `insert into articles (id, account_id, site_id, title, url, status, published_at, target_keyword, word_count, featured_image, body, updated_at, revision)
           values ($1, $2, $3, 't', 'https://example.com/a', 'published', now(), 'k', 1, null, '<p>x</p>', now(), 1)`,
          [article, account, site],
        )
      }
      // every statement's rows, as the driver answers them (the repositories share this client)
      const client = (await orm.driver.getConnection().getNativeClient()) as { query: (...args: Array<unknown>) => Promise<{ rows: Array<Record<string, unknown>> }> }
      const query = client.query.bind(client)
      client.query = async (...args: Array<unknown>) => {
        const result = await query(...args)
        for (const row of result.rows) if (typeof row["id"] === "string" && row["id"].startsWith("art_")) answered.push(row["id"])
        return result
      }
      const activity = { flush: async () => {} } as unknown as ActivityJournal
      runtime = ManagedRuntime.make(ormRepositories(orm, { bus: inProcessEventBus(), activity }) as never)
    })
    afterAll(async () => {
      await runtime?.dispose()
      await close()
    })

    const get = (accountId: string, articleId: string) => runtime.runPromiseExit(ArticleRepository.use((articles) => articles.get(accountId, articleId)))

    it("should answer another account's article NotFound without reading its row", async () => {
      answered.length = 0
      expect(tagOf(await get(OWN.account, OTHER.article))).toBe("NotFound")
      expect(answered).toEqual([])
    })

    it("should give each of reads handled side by side its own account's article only", async () => {
      answered.length = 0
      const [own, foreign, theirs] = await Promise.all([get(OWN.account, OWN.article), get(OWN.account, OTHER.article), get(OTHER.account, OTHER.article)])
      expect(Exit.isSuccess(own) && own.value.id).toBe(OWN.article)
      expect(Exit.isSuccess(theirs) && theirs.value.id).toBe(OTHER.article)
      expect(tagOf(foreign)).toBe("NotFound")
      // one row each for the two reads of an account's own article
      expect([...answered].sort()).toEqual([OTHER.article, OWN.article])
    })
  })
}
