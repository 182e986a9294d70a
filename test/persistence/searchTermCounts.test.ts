/**
 * A one-word search's total on PostgreSQL comes from per-term counts kept by triggers on
 * `articles` (`article_term_counts` and `article_term_changes`): it must equal counting the
 * matching rows, for every filter the counts serve (account, site, status) and the ones they do
 * not (a publication range), after inserts, edits of title, keyword and body, edits that move
 * articles between statuses, edits that change no searched word, deletes, and housekeeping's
 * folding of the edits' changes into the counts; and a query of more than one lexeme must not
 * read them.
 */
import { ArticleRepository, type ArticleSearchFilter } from "@content-site/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { openTestStore, type TestStore } from "../support/testStore.ts"

const ACCOUNT = "acc_term_counts"
const SITE = "site_terms"
const WORDS = ["mulch", "compost", "crème", "tomato", "blight", "bark"]

describe("one-word search totals from per-term counts", () => {
  let store: TestStore

  beforeAll(async () => {
    store = await openTestStore()
    // by hand: two sites of the account and one of another account; words spread over title, keyword and body
    for (const [account, site] of [[ACCOUNT, SITE], [ACCOUNT, "site_other"], ["acc_else", SITE]] as const) {
      await store.admin.query(
        `insert into articles (id, account_id, site_id, title, url, status, published_at, target_keyword, word_count, featured_image, body, updated_at, revision)
         select $1 || $2 || g, $1, $2, 'Title ' || ($3::text[])[1 + g % 6], 'https://example.com/' || g, (array['published', 'draft', 'scheduled', 'archived'])[1 + g % 4],
           case when g % 5 = 0 then null else now() - g * interval '1 day' end, ($3::text[])[1 + g % 5],
           1, null, '<p>' || ($3::text[])[1 + g % 4] || ' and ' || ($3::text[])[1 + g % 3] || '</p>', now(), 1
         from generate_series(0, 30) g`,
        [account, site, WORDS],
      )
    }
  })
  afterAll(async () => {
    await store?.close()
  })

  type Filter = Omit<ArticleSearchFilter, "query" | "headlines">
  const searched = async (query: string, filter: Filter) =>
    (await store.runtime.runPromise(ArticleRepository.use((r) => r.search(ACCOUNT, { query, headlines: false, ...filter }, { offset: 0, limit: 2 })))).total
  const counted = async (query: string, filter: Filter) =>
    (
      await store.admin.query<{ n: number }>(
        `select count(*)::int as n from articles where account_id = $1 and ($2::text is null or site_id = $2) and ($3::text is null or status = $3)
           and ($4::timestamptz is null or published_at >= $4) and search_vector @@ websearch_to_tsquery('cs_search', $5)`,
        [ACCOUNT, filter.siteId ?? null, filter.status ?? null, filter.from ?? null, query],
      )
    ).rows[0]!.n
  const filters: Array<Filter> = [{}, { siteId: SITE }, { status: "draft" }, { siteId: "site_other", status: "published" }, { from: new Date(Date.now() - 10 * 86_400_000).toISOString() }]
  const check = async () => {
    for (const query of [...WORDS, "CRÈME", "nowhere"]) {
      for (const filter of filters) expect({ query, filter, total: await searched(query, filter) }).toEqual({ query, filter, total: await counted(query, filter) })
    }
  }

  it("should answer the same total as counting the rows, for every filter", async () => {
    await check()
    expect(await counted("mulch", {})).toBeGreaterThan(2)
  })

  it("should follow edits of searched words and of statuses, edits that change no word, deletes, and housekeeping's folding", async () => {
    const tables = async () =>
      (await store.admin.query("select (select coalesce(sum(n), 0)::int from article_term_counts) as n, (select count(*)::int from article_term_changes) as changes")).rows[0]
    await store.admin.query(`update articles set body = '<p>bark bark</p>' where id in ($1, $2)`, [`${ACCOUNT}${SITE}1`, `${ACCOUNT}${SITE}2`])
    await store.admin.query(`update articles set title = 'Compost heaps', target_keyword = 'mulch' where id = $1`, [`${ACCOUNT}${SITE}3`])
    await store.admin.query(`update articles set status = 'archived' where id in ($1, $2, $3)`, [`${ACCOUNT}${SITE}4`, `${ACCOUNT}${SITE}5`, `${ACCOUNT}site_other6`])
    // an edit appends its changes (at most two rows per account, site and status), the counts stay
    expect((await tables()).changes).toBeGreaterThan(0)
    await check()
    const before = await tables()
    await store.admin.query(`update articles set revision = revision + 1, published_at = published_at - interval '1 day' where site_id = $1`, [SITE])
    // an edit that changes no searched word and no status appends nothing
    expect(await tables()).toEqual(before)
    await store.admin.query(`delete from articles where id in ($1, $2)`, [`${ACCOUNT}${SITE}7`, `${ACCOUNT}${SITE}8`])
    await check()
    // housekeeping folds every change into the counts: the same totals, no change left
    expect((await store.db.sweepCounters()).termChanges).toBe(before.changes)
    expect((await tables()).changes).toBe(0)
    await check()
    await store.admin.query(`update articles set body = '<p>tomato</p>', status = 'draft' where id = $1`, [`${ACCOUNT}${SITE}9`])
    await check()
  })

  it("should append one article's edit as the words it added and removed, one row each, and nothing when its words stay", async () => {
    const id = `${ACCOUNT}${SITE}13` // a draft
    const appended = async (write: () => Promise<unknown>) => {
      const last = (await store.admin.query("select coalesce(max(id), 0) as id from article_term_changes")).rows[0].id
      await write()
      return (await store.admin.query("select site_id, status, terms, d::int from article_term_changes where id > $1 order by id", [last])).rows
    }
    const edit = (body: string) => () => store.admin.query("update articles set body = $2, revision = revision + 1 where id = $1", [id, body])
    await edit("<p>Mulch, blight, okapi.</p>")()
    const { status, words } = (
      await store.admin.query(`select status, tsvector_to_array(search_vector) as words from articles where id = $1`, [id])
    ).rows[0]
    // every word of the old body that is not in the title, the keyword or the new body goes; zebra and quokka come
    const kept = (await store.admin.query(`select tsvector_to_array(title_vector || to_tsvector('cs_search', target_keyword)) as w from articles where id = $1`, [id])).rows[0].w as Array<string>
    const now = ["and", "bark", "quokka", "zebra"]
    const added = now.filter((w) => !words.includes(w)).sort()
    const gone = (words as Array<string>).filter((w) => !kept.includes(w) && !now.includes(w)).sort()
    expect(added).toContain("zebra")
    expect(gone.length).toBeGreaterThan(0)
    const rows = await appended(edit("<p>Zebra, quokka and bark.</p>"))
    expect(rows.map((r) => ({ ...r, terms: [...r.terms].sort() }))).toEqual([
      { site_id: SITE, status, terms: added, d: 1 },
      { site_id: SITE, status, terms: gone, d: -1 },
    ])
    await check()
    // the same words in another order and markup, and a write that touches no searched column: nothing
    expect(await appended(edit("<h2>bark</h2><p>quokka and zebra</p>"))).toEqual([])
    expect(await appended(() => store.admin.query("update articles set revision = revision + 1 where id = $1", [id]))).toEqual([])
    // one word fewer: one row, that word, -1
    expect(await appended(edit("<p>bark and zebra</p>"))).toEqual([{ site_id: SITE, status, terms: ["quokka"], d: -1 }])
    await check()
    // moved to another status with a word more: every word leaves the old status and comes to the new one
    expect(status).toBe("draft")
    const moved = await appended(() => store.admin.query("update articles set status = 'archived', body = '<p>bark and zebra okapi</p>' where id = $1", [id]))
    expect(moved.map((r) => [r.status, r.d])).toEqual([["archived", 1], ["draft", -1]])
    expect([...moved[0].terms].sort()).toEqual([...moved[1].terms, "okapi"].sort())
    await check()
  })

  it("should read a one-word total from the counts, and count the rows for a range or a query of more than one lexeme", async () => {
    // the counts made wrong on purpose show which total comes from where
    await store.admin.query("update article_term_counts set n = n + 1000")
    try {
      expect(await searched("mulch", {})).toBe((await counted("mulch", {})) + 1000 * Number((await store.admin.query("select count(*) as n from article_term_counts where account_id = $1 and term = 'mulch'", [ACCOUNT])).rows[0].n))
      // a phrase, two words, a negation, OR, a hyphenated word (three lexemes), a range: none is one term's count
      for (const query of ['"tomato blight"', "tomato blight", "mulch -bark", "mulch OR bark", "cafe-creme"]) {
        expect({ query, total: await searched(query, {}) }).toEqual({ query, total: await counted(query, {}) })
      }
      expect(await searched("mulch", filters[4]!)).toBe(await counted("mulch", filters[4]!))
    } finally {
      await store.admin.query("update article_term_counts set n = n - 1000")
    }
  })
})
