/**
 * Cost as work grows (`npm run bench -- scale`; not part of a plain `npm run bench`, it takes
 * minutes): p50 latency of the same requests on the demo data and then on a site grown to
 * 100 000 articles and an account grown to 5 000 000 activity entries, both made inside PostgreSQL
 * (`insert ... select generate_series`). Requests (one at a time, after a warm-up): the article list
 * page 1 and a page far down (`per_page=40`, page 2 500 once grown; the last page before), a
 * date-filtered list, `GET /api/v1/activity` page 1 and a channel- and date-filtered page. Goal:
 * each within 3x of the same request on the small data. Nothing here asserts a time.
 */
import { ensurePartitions } from "../adapters/orm/src/partitions.ts"
import { largestDemoSite, startBenchServer } from "./support.ts"

const ARTICLES = Number(process.env.BENCH_SCALE_ARTICLES ?? 100_000)
const ENTRIES = Number(process.env.BENCH_SCALE_ENTRIES ?? 5_000_000)
/** Requests per case (`BENCH_SCALE_REQUESTS`, default 40) after 5 to warm up. */
const REQUESTS = Number(process.env.BENCH_SCALE_REQUESTS ?? 40)

const p50 = async (url: string, headers: Record<string, string>): Promise<number> => {
  for (let i = 0; i < 5; i++) await (await fetch(url, { headers })).arrayBuffer()
  const times: Array<number> = []
  for (let i = 0; i < REQUESTS; i++) {
    const started = performance.now()
    const response = await fetch(url, { headers })
    await response.arrayBuffer()
    times.push(performance.now() - started)
    if (response.status !== 200) throw new Error(`${url}: status ${response.status}`)
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!
}

export async function run(): Promise<void> {
  const bench = await startBenchServer("cs_scale")
  try {
    if (bench.databaseUrl === undefined) {
      console.log("scale: needs PostgreSQL (BENCH_PG_URL); skipped")
      return
    }
    const { app, auth, client, site, account, newest } = await largestDemoSite(bench, bench.databaseUrl)
    try {
      const month = newest.toISOString().slice(0, 7)
      const lastDay = new Date(Date.UTC(newest.getUTCFullYear(), newest.getUTCMonth() + 1, 0)).toISOString().slice(0, 10)
      const today = new Date().toISOString().slice(0, 10)
      const monthAgo = new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10)
      const cases = (farPage: number): Record<string, string> => ({
        "articles page 1": `/api/v1/sites/${site.id}/articles?per_page=40`,
        "articles far page": `/api/v1/sites/${site.id}/articles?per_page=40&page=${farPage}`,
        "articles of one month": `/api/v1/sites/${site.id}/articles?per_page=40&from=${month}-01&to=${lastDay}`,
        "activity page 1": `/api/v1/activity?per_page=40`,
        "activity channel + dates": `/api/v1/activity?per_page=40&channel=mcp&from=${monthAgo}&to=${today}`,
      })
      const measure = async (farPage: number) => {
        const figures: Array<number> = []
        for (const path of Object.values(cases(farPage))) figures.push(await p50(`${app.url}${path}`, auth))
        return figures
      }
      const smallFar = Math.max(1, Math.ceil(site.article_count / 40))
      const small = await measure(smallFar)

      // grow: articles spread over the three years before the newest, entries over the last 150 days
      let started = performance.now()
      await client.query("set synchronous_commit = off")
      await client.query(
        `insert into articles (id, account_id, site_id, title, url, status, published_at, target_keyword, word_count, featured_image, body, updated_at, revision)
         select 'art_scale_' || g, $1, $2, 'Scale article ' || g, 'https://example.com/scale/' || g,
           (array['published', 'published', 'published', 'draft', 'scheduled', 'archived'])[1 + g % 6],
           case when g % 6 = 3 then null else $3::timestamptz - (g % 1095) * interval '1 day' - (g % 86400) * interval '1 second' end,
           'keyword ' || (g % 500), 300 + g % 2000, null, '<p>Body of scale article ' || g || '</p>', now(), 1
         from generate_series(1, $4::int) g`,
        [account, site.id, newest.toISOString(), ARTICLES],
      )
      const articlesMs = performance.now() - started
      started = performance.now()
      const sql = async <R>(text: string, params: ReadonlyArray<unknown>) => (await client.query(text, [...params])).rows as Array<R>
      const now = Date.now()
      await ensurePartitions(sql, new Date(now - 150 * 86_400_000), new Date(now))
      await client.query(
        `insert into activity (id, account_id, at, channel, actor, action, site_id, article_id, status, error_code, duration_ms, request_id)
         select 'act_scale_' || g, $1, now() - ((g::bigint * 12960000) / $3) * interval '1 second',
           (array['api', 'api', 'api', 'api', 'api', 'api', 'api', 'mcp', 'mcp', 'web'])[1 + g % 10],
           '{"type":"api_key","id":"key_scale","name":"scale"}'::jsonb, 'GET /api/v1/articles/{id}', $2, null,
           case when g % 20 = 0 then '404' else '200' end, case when g % 20 = 0 then 'not_found' else null end, g % 50, 'req_scale_' || g
         from generate_series(1, $3::int) g`,
        [account, site.id, ENTRIES],
      )
      const entriesMs = performance.now() - started
      started = performance.now()
      await client.query("vacuum analyze articles")
      await client.query("vacuum analyze activity")
      const vacuumMs = performance.now() - started
      const big = await measure(2_500)

      console.log(
        `database: PostgreSQL; grown by ${ARTICLES} articles on one site (${(articlesMs / 1000).toFixed(1)} s) and ${ENTRIES} activity entries on the account ` +
          `(${(entriesMs / 1000).toFixed(1)} s), vacuum analyze ${(vacuumMs / 1000).toFixed(1)} s; p50 of ${REQUESTS} requests one at a time`,
      )
      console.log(`${"request".padEnd(28)} ${"small".padStart(9)} ${"grown".padStart(9)}  ratio (goal <= 3x)`)
      const names = Object.keys(cases(2_500))
      names.forEach((name, i) => {
        const label = i === 1 ? `articles far page (${smallFar} / 2500)` : name
        console.log(`${label.padEnd(28)} ${`${small[i]!.toFixed(2)} ms`.padStart(9)} ${`${big[i]!.toFixed(2)} ms`.padStart(9)}  ${(big[i]! / small[i]!).toFixed(2)}x`)
      })
    } finally {
      await client.end()
    }
  } finally {
    await bench.close()
  }
}
