/**
 * Article list totals on PostgreSQL come from per-day counts kept by triggers on `articles` (plus
 * the part days at a range's ends): they must equal counting the rows, for every filter, after
 * inserts, edits that move an article between statuses or days, edits that move nothing, and deletes.
 */
import { ArticleRepository } from "@content-site/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openTestStore, type TestStore } from "../support/testStore.ts"

const DAY = 86_400_000
const ACCOUNT = "acc_article_counts"
const SITE = "site_counts"

describe("article list totals from per-day counts", () => {
  let store: TestStore
  const today = Math.floor(Date.now() / DAY) * DAY
  const iso = (ms: number) => new Date(ms).toISOString()

  beforeAll(async () => {
    store = await openTestStore()
    // by hand: two sites of the account and one of another; every 7 hours over 6 days; every fifth unpublished
    for (const [account, site] of [[ACCOUNT, SITE], [ACCOUNT, "site_other"], ["acc_else", SITE]] as const) {
      await store.admin.query(
        `insert into articles (id, account_id, site_id, title, url, status, published_at, target_keyword, word_count, featured_image, body, updated_at, revision)
         select $1 || $2 || g, $1, $2, 't', 'https://example.com/' || g, (array['published', 'draft', 'scheduled', 'archived'])[1 + g % 4],
           case when g % 5 = 0 then null else $3::timestamptz + g * interval '7 hours' end, 'k', 1, null, '<p>x</p>', now(), 1
         from generate_series(0, 20) g`,
        [account, site, iso(today - 6 * DAY)],
      )
    }
  })
  afterAll(async () => {
    await store?.close()
  })

  type Filter = { status?: "published" | "draft" | "scheduled" | "archived"; from?: string; to?: string }
  const listed = async (filter: Filter) =>
    (await store.runtime.runPromise(ArticleRepository.use((r) => r.list(ACCOUNT, { siteId: SITE, ...filter }, { offset: 0, limit: 3 })))).total
  const counted = async (filter: Filter) =>
    (
      await store.admin.query<{ n: number }>(
        `select count(*)::int as n from articles where account_id = $1 and site_id = $2 and ($3::text is null or status = $3)
           and ($4::timestamptz is null or published_at >= $4) and ($5::timestamptz is null or published_at <= $5)`,
        [ACCOUNT, SITE, filter.status ?? null, filter.from ?? null, filter.to ?? null],
      )
    ).rows[0]!.n
  const filters: Array<Filter> = [
    {},
    { status: "published" },
    { from: iso(today - 4 * DAY) },
    { to: iso(today - 2 * DAY - 1) },
    { from: iso(today - 5 * DAY), to: iso(today - DAY - 1), status: "draft" },
    { from: iso(today - 5 * DAY + 3_600_000), to: iso(today - 2 * DAY + 7_200_000) },
    { from: iso(today - 3 * DAY + 600_000), to: iso(today - 3 * DAY + 40_000_000) },
  ]
  const check = async () => {
    for (const filter of filters) expect({ filter, total: await listed(filter) }).toEqual({ filter, total: await counted(filter) })
  }

  it("should answer the same total as counting the rows, for every filter", check)

  it("should follow edits that move articles between statuses and days, edits that move nothing, and deletes", async () => {
    await store.admin.query(`update articles set status = 'archived' where id in ($1, $2)`, [`${ACCOUNT}${SITE}1`, `${ACCOUNT}${SITE}2`])
    await store.admin.query(`update articles set published_at = published_at - interval '2 days' where id = $1`, [`${ACCOUNT}${SITE}3`])
    await store.admin.query(`update articles set published_at = $2 where id = $1`, [`${ACCOUNT}${SITE}5`, iso(today - DAY)])
    const before = (await store.admin.query("select coalesce(sum(n), 0)::int as n, count(*)::int as rows from article_counts")).rows[0]
    await store.admin.query(`update articles set title = 'edited', revision = revision + 1 where site_id = $1`, [SITE])
    // an edit of title and body changes no count row
    expect((await store.admin.query("select coalesce(sum(n), 0)::int as n, count(*)::int as rows from article_counts")).rows[0]).toEqual(before)
    await store.admin.query(`delete from articles where id in ($1, $2)`, [`${ACCOUNT}${SITE}6`, `${ACCOUNT}${SITE}10`])
    await check()
  })
})
