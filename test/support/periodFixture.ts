/**
 * A site whose articles and backlinks sit on the edges of a fixed past month (March 2025), so that
 * date filters and the period summary can be checked to the exact item, whatever day the tests
 * run on: items on the first and last instant of the month, just outside it on both sides, a
 * draft inside it, and ties on the sort key.
 */

/** The month every date here is placed around. */
export const PERIOD = { key: "2025-03", from: "2025-03-01", to: "2025-03-31" } as const

/** The articles of the site; `words` is what `"word count"` must say for each body. */
export const PERIOD_ARTICLES = [
  { id: "art_p_first", status: "published", published_at: "2025-03-01T00:00:00.000Z", body: "<p>one two three</p>", words: 3 },
  { id: "art_p_last", status: "published", published_at: "2025-03-31T23:59:59.999Z", body: "<p>alpha</p><p>beta</p>", words: 2 },
  {
    id: "art_p_mid_b",
    status: "published",
    published_at: "2025-03-15T12:00:00.000Z",
    body: '<p>fish &amp; chips <!-- not counted --><span title="no words here">now</span></p>',
    words: 4,
  },
  { id: "art_p_mid_a", status: "published", published_at: "2025-03-15T12:00:00.000Z", body: "<h2>Single</h2>", words: 1 },
  { id: "art_p_draft", status: "draft", published_at: "2025-03-10T08:00:00.000Z", body: "<p>a draft is not counted</p>", words: 5 },
  { id: "art_p_feb", status: "published", published_at: "2025-02-28T23:59:59.999Z", body: "<p>too early</p>", words: 2 },
  { id: "art_p_apr", status: "published", published_at: "2025-04-01T00:00:00.000Z", body: "<p>too late</p>", words: 2 },
] as const

/** The backlinks of the site. */
export const PERIOD_BACKLINKS = [
  { id: "bl_p_1", date_acquired: "2025-03-01", category: "industry" },
  { id: "bl_p_3", date_acquired: "2025-03-31", category: "industry" },
  { id: "bl_p_2", date_acquired: "2025-03-31", category: "local" },
  { id: "bl_p_4", date_acquired: "2025-02-28", category: "industry" },
  { id: "bl_p_5", date_acquired: "2025-04-01", category: "local" },
] as const

/** The site as an import file entry (no renamed keys: `target keyword` and `featured image` are left out). */
export const periodSite = (siteId: string, host: string) => ({
  id: siteId,
  name: "Period edges",
  url: `https://${host}`,
  articles: PERIOD_ARTICLES.map((a) => ({
    id: a.id,
    title: `Title of ${a.id}`,
    url: `https://${host}/${a.id}`,
    status: a.status,
    published_at: a.published_at,
    body: a.body,
  })),
  backlinks: PERIOD_BACKLINKS.map((b) => ({
    id: b.id,
    date_acquired: b.date_acquired,
    source_domain: `${b.id}.test`,
    source_url: `https://${b.id}.test/p`,
    target_url: `https://${host}/art_p_first`,
    anchor_text: b.id,
    anchor_type: "exact",
    category: b.category,
  })),
})

/** What the summary of `PERIOD` must say, worked out by hand from the lists above. */
export const EXPECTED_SUMMARY = {
  articles: {
    count: 4,
    "word count": 3 + 2 + 4 + 1,
    // published_at descending, then id ascending.
    ids: ["art_p_last", "art_p_mid_a", "art_p_mid_b", "art_p_first"],
  },
  backlinks: {
    count: 3,
    industry: 2,
    local: 1,
    // date_acquired descending, then id ascending.
    ids: ["bl_p_2", "bl_p_3", "bl_p_1"],
  },
} as const
