/**
 * Deep list pages (issue 15.3): from offset 1 000 on, a page in the second half of an article or
 * activity list is read in the reverse order from the other end of the index (`deferredPage` in
 * `repositories.ts`). Every page, the last partial one and pages past the end included, must hold
 * exactly the rows, in the same order, and the total that a plain `order by ... limit/offset` query
 * answers, with NULL publication times, ties on the time and filters; on PostgreSQL and PGlite.
 */
import { ActivityLog, ArticleRepository, type ActivityFilter, type ArticleFilter } from "@content-site/core"
import { ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ActivityJournal } from "../src/activityJournal.ts"
import { inProcessEventBus } from "../src/bus.ts"
import type { Orm } from "../src/orm.ts"
import { ormRepositories } from "../src/repositories.ts"
import { nativeSql, type Sql } from "../src/sql.ts"
import { openOrmOn } from "./backends.ts"

const ACCOUNT = "acc_deep"
const SITE = "site_deep"
const ARTICLES = 2_500
const ENTRIES = 2_500
/** A fixed instant, so that the date filters below cut through whole and part days alike. */
const BASE = Date.parse("2026-10-20T12:34:56.000Z")
const HOUR = 3_600_000
const iso = (ms: number) => new Date(ms).toISOString()

/**
 * The plain queries: `select id ... order by <the list's order> limit $ offset $` and `count(*)`.
 * Given no limit, the whole list in order (every page is then a slice of it; checked against
 * `limit`/`offset` for some pages).
 */
const plainArticles = async (sql: Sql, f: ArticleFilter, limit: number | null, offset: number) => {
  const cond = `account_id = $1 and site_id = $2 and ($3::text is null or status = $3)
    and ($4::timestamptz is null or published_at >= $4) and ($5::timestamptz is null or published_at <= $5)`
  const params = [ACCOUNT, f.siteId, f.status ?? null, f.from ?? null, f.to ?? null]
  const rows = await sql<{ id: string }>(
    `select id from articles where ${cond} order by published_at desc nulls last, id asc limit $6 offset $7`,
    [...params, limit, offset],
  )
  const total = await sql<{ n: number }>(`select count(*)::int as n from articles where ${cond}`, params)
  return { ids: rows.map((r) => r.id), total: Number(total[0]!.n) }
}

const plainActivity = async (sql: Sql, f: ActivityFilter, limit: number | null, offset: number) => {
  const cond = `account_id = $1 and ($2::text is null or channel = $2) and ($3::timestamptz is null or at >= $3)
    and ($4::timestamptz is null or at <= $4) and ($5::text[] is null or action = any($5::text[]))`
  const params = [ACCOUNT, f.channel ?? null, f.from ?? null, f.to ?? null, f.actions === undefined ? null : [...f.actions]]
  const rows = await sql<{ id: string }>(`select id from activity where ${cond} order by at desc, id desc limit $6 offset $7`, [...params, limit, offset])
  const total = await sql<{ n: number }>(`select count(*)::int as n from activity where ${cond}`, params)
  return { ids: rows.map((r) => r.id), total: Number(total[0]!.n) }
}

const articleFilters: Array<ArticleFilter> = [
  { siteId: SITE },
  { siteId: SITE, status: "published" },
  // part days at both ends
  { siteId: SITE, from: iso(BASE - 380 * HOUR + 1_234), to: iso(BASE - 5 * HOUR - 17) },
  { siteId: SITE, status: "draft", from: iso(BASE - 300 * HOUR) },
]
const activityFilters: Array<ActivityFilter> = [
  {},
  { channel: "api" },
  { from: iso(BASE - 20 * HOUR + 1_234), to: iso(BASE - HOUR) },
  // not counted per day: the total is counted in the table
  { actions: ["update_article", "get_article"] },
]

/** Offsets of every page of a list of `total` rows at `perPage`, and two past the end. */
const offsets = (total: number, perPage: number) => Array.from({ length: Math.ceil(total / perPage) + 2 }, (_, i) => i * perPage)

for (const backend of ["postgresql", "pglite"] as const) {
  describe(`deep list pages read from the other end (${backend})`, () => {
    let orm: Orm
    let sql: Sql
    let runtime: ManagedRuntime.ManagedRuntime<any, never>
    let close: () => Promise<void> = async () => {}

    beforeAll(async () => {
      ;({ orm, close } = await openOrmOn(backend))
      await orm.migrator.up()
      sql = nativeSql(orm)
      // the lists read the table only: nothing waits in a journal
      const activity = { flush: async () => {} } as unknown as ActivityJournal
      runtime = ManagedRuntime.make(ormRepositories(orm, { bus: inProcessEventBus(), activity }))
      // every 9th unpublished; publication times repeat every 400 articles (ties broken by id, as text)
      for (const [account, site, n] of [[ACCOUNT, SITE, ARTICLES], [ACCOUNT, "site_deep_other", 300], ["acc_deep_other", SITE, 300]] as const) {
        await sql(
          `insert into articles (id, account_id, site_id, title, url, status, published_at, target_keyword, word_count, featured_image, body, updated_at, revision)
           select 'art_' || $1 || '_' || $2 || '_' || g, $1, $2, 't', 'https://example.com/' || g,
             (array['published', 'published', 'published', 'draft', 'scheduled', 'archived'])[1 + g % 6],
             case when g % 9 = 0 then null else $3::timestamptz - (g % 400) * interval '1 hour' end,
             'k', 1, null, '<p>x</p>', $3::timestamptz, 1
           from generate_series(1, $4::int) g`,
          [account, site, iso(BASE), n],
        )
      }
      // entries every 7 minutes over 2 days, times repeated every 300 entries; ids ordered as text
      for (const [account, n] of [[ACCOUNT, ENTRIES], ["acc_deep_other", 300]] as const) {
        await sql(
          `insert into activity (id, account_id, at, channel, actor, action, site_id, article_id, status, error_code, duration_ms, request_id)
           select 'act_' || $1 || '_' || g, $1, $2::timestamptz - (g % 300) * interval '7 minutes',
             (array['api', 'api', 'mcp', 'web'])[1 + g % 4], null, (array['get_article', 'update_article', 'list_articles'])[1 + g % 3],
             null, null, '200', null, 1, 'req_' || $1 || '_' || g
           from generate_series(1, $3::int) g`,
          [account, iso(BASE), n],
        )
      }
    })
    afterAll(async () => {
      await runtime?.dispose()
      await close()
    })

    /**
     * Every page of every filter at 40 per page, and of the longest list at 7 per page, against the
     * plain list; a handful of pages (around the switch to the reverse read, the last ones, past the
     * end) against the plain query's own `limit`/`offset` too.
     */
    const everyPage = async <F>(
      filters: ReadonlyArray<F>,
      listed: (filter: F, offset: number, limit: number) => Promise<{ ids: Array<string>; total: number }>,
      plain: (filter: F, limit: number | null, offset: number) => Promise<{ ids: Array<string>; total: number }>,
    ) => {
      for (const [i, filter] of filters.entries()) {
        const all = await plain(filter, null, 0)
        for (const perPage of i === 0 ? [40, 7] : [40]) {
          const pages = offsets(all.total, perPage)
          for (const offset of pages) {
            const got = await listed(filter, offset, perPage)
            expect({ filter, perPage, offset, ...got }).toEqual({ filter, perPage, offset, ids: all.ids.slice(offset, offset + perPage), total: all.total })
          }
          const spot = [...pages.filter((o) => o >= 960 && o <= 1_050), ...pages.slice(-4), Math.floor(all.total / 2)]
          for (const offset of spot) {
            expect({ filter, perPage, offset, ...(await listed(filter, offset, perPage)) }).toEqual({ filter, perPage, offset, ...(await plain(filter, perPage, offset)) })
          }
        }
      }
    }

    it("should answer every article page, at 40 and 7 per page, as the plain query does", () =>
      everyPage(
        articleFilters,
        async (filter, offset, limit) => {
          const { items, total } = await runtime.runPromise(ArticleRepository.use((r) => r.list(ACCOUNT, filter, { offset, limit })))
          return { ids: items.map((a) => a.id), total }
        },
        (filter, limit, offset) => plainArticles(sql, filter, limit, offset),
      ), 60_000)

    it("should answer every activity page, at 40 and 7 per page, as the plain query does", () =>
      everyPage(
        activityFilters,
        async (filter, offset, limit) => {
          const { items, total } = await runtime.runPromise(ActivityLog.use((l) => l.list(ACCOUNT, filter, { offset, limit })))
          return { ids: items.map((a) => a.id), total }
        },
        (filter, limit, offset) => plainActivity(sql, filter, limit, offset),
      ), 60_000)

    it("should have read the far pages in reverse: the data reaches past offset 1 000 in the second half", async () => {
      // guards the test itself: without lists this long the reverse path would go untested
      expect((await plainArticles(sql, articleFilters[0]!, 1, 0)).total).toBeGreaterThanOrEqual(2_000)
      expect((await plainActivity(sql, activityFilters[0]!, 1, 0)).total).toBeGreaterThanOrEqual(2_000)
      const nulls = await sql<{ n: number }>(`select count(*)::int as n from articles where site_id = $1 and published_at is null`, [SITE])
      expect(Number(nulls[0]!.n)).toBeGreaterThan(40)
    })
  })
}
