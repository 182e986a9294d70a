/**
 * Search at scale (`npm run bench -- search`; it takes minutes): on a site grown to 100 000
 * generated articles (as `scale.slow.bench.ts` grows one, inside PostgreSQL, with bodies of 80
 * words drawn from a vocabulary of 2 000), the p50 of `GET /api/v1/search` for a one-word, a
 * three-word and a phrase query against the article list's page 1 on the same data (goal: within
 * 2x); the mean reciprocal rank of a judged set of 32 queries, each written for one article among
 * distractors (`searchJudged.ts`; goal >= 0.8); and the p50 of a PUT with the search column and
 * its index against the same PUT once both are replaced by a plain column (goal: within 10 %), and
 * the same PUT without the term counts' trigger (its share of that cost). Nothing here asserts.
 */
import { DISTRACTORS, JUDGED } from "./searchJudged.ts"
import { largestDemoSite, startBenchServer } from "./support.ts"

const ARTICLES = Number(process.env.BENCH_SCALE_ARTICLES ?? 100_000)
/** Requests per case (`BENCH_SCALE_REQUESTS`, default 40) after 5 to warm up. */
const REQUESTS = Number(process.env.BENCH_SCALE_REQUESTS ?? 40)
/** PUTs per arm of the index-cost comparison (`BENCH_SEARCH_PUTS`, default 200), alternating articles. */
const PUTS = Number(process.env.BENCH_SEARCH_PUTS ?? 200)

/** 2 000 pronounceable made-up words, the same every run. */
const vocabulary = (): Array<string> => {
  const onsets = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "tr", "pl", "st", "gr", "sk"]
  const vowels = ["a", "e", "i", "o", "u"]
  const words: Array<string> = []
  for (let i = 0; words.length < 2_000; i++) {
    const a = onsets[i % 20]! + vowels[Math.floor(i / 20) % 5]!
    const b = onsets[Math.floor(i / 100) % 20]! + vowels[(i * 7) % 5]!
    words.push(`${a}${b}${i % 3 === 0 ? "n" : ""}`)
  }
  return [...new Set(words)].slice(0, 2_000)
}

const timed = async (url: string, init: RequestInit): Promise<number> => {
  const started = performance.now()
  const response = await fetch(url, init)
  await response.arrayBuffer()
  if (response.status !== 200) throw new Error(`${url}: status ${response.status}`)
  return performance.now() - started
}

const median = (times: Array<number>): number => times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!

const p50 = async (url: string, headers: Record<string, string>): Promise<number> => {
  for (let i = 0; i < 5; i++) await timed(url, { headers })
  const times: Array<number> = []
  for (let i = 0; i < REQUESTS; i++) times.push(await timed(url, { headers }))
  return median(times)
}

export async function run(): Promise<void> {
  const bench = await startBenchServer("cs_search")
  try {
    if (bench.databaseUrl === undefined) {
      console.log("search: needs PostgreSQL (BENCH_PG_URL); skipped")
      return
    }
    const { app, auth, client, site, account, newest } = await largestDemoSite(bench, bench.databaseUrl)
    try {
      const words = vocabulary()

      // grow: generated articles over three years (titles of 4 words, bodies of 80), then the judged set and its distractors
      let started = performance.now()
      await client.query("set synchronous_commit = off")
      await client.query(
        `insert into articles (id, account_id, site_id, title, url, status, published_at, target_keyword, word_count, featured_image, body, updated_at, revision)
         select 'art_scale_' || g, $1, $2,
           initcap((select string_agg(($5::text[])[1 + ((g::bigint * 31 + k * 977) % 2000)], ' ') from generate_series(1, 4) k)),
           'https://example.com/scale/' || g,
           (array['published', 'published', 'published', 'draft', 'scheduled', 'archived'])[1 + g % 6],
           case when g % 6 = 3 then null else $3::timestamptz - (g % 1095) * interval '1 day' - (g % 86400) * interval '1 second' end,
           ($5::text[])[1 + (g % 2000)], 80, null,
           '<p>' || (select string_agg(($5::text[])[1 + ((g::bigint * 7919 + k * k * 104729) % 2000)], ' ') from generate_series(1, 40) k) || '</p><p>' ||
           (select string_agg(($5::text[])[1 + ((g::bigint * 15485863 + k * 6151) % 2000)], ' ') from generate_series(1, 40) k) || '</p>',
           now(), 1
         from generate_series(1, $4::int) g`,
        [account, site.id, newest.toISOString(), ARTICLES, words],
      )
      const growMs = performance.now() - started
      const judgedAt = new Date(newest.getTime() - 400 * 86_400_000).toISOString()
      for (const [i, a] of JUDGED.entries()) {
        await client.query(
          `insert into articles (id, account_id, site_id, title, url, status, published_at, target_keyword, word_count, featured_image, body, updated_at, revision)
           values ($1, $2, $3, $4, $5, 'published', $6, $7, 30, null, $8, now(), 1)`,
          [`art_judged_${a.key}`, account, site.id, a.title, `https://example.com/judged/${a.key}`, new Date(Date.parse(judgedAt) - i * 86_400_000).toISOString(), a.keyword, a.body],
        )
      }
      for (const [i, d] of DISTRACTORS.entries()) {
        // newer than every judged article: a tie on relevance would put a distractor first
        await client.query(
          `insert into articles (id, account_id, site_id, title, url, status, published_at, target_keyword, word_count, featured_image, body, updated_at, revision)
           values ($1, $2, $3, $4, $5, 'published', $6, '', 30, null, $7, now(), 1)`,
          [`art_distractor_${i}`, account, site.id, d.title, `https://example.com/distractor/${i}`, new Date(newest.getTime() - i * 3_600_000).toISOString(), d.body],
        )
      }
      started = performance.now()
      await client.query("vacuum analyze articles")
      const vacuumMs = performance.now() - started

      // latency: the list's page 1 and three searches, same page size
      const common = words[7]!
      const matches = async (q: string) =>
        Number((await client.query<{ n: string }>(`select count(*) as n from articles where search_vector @@ websearch_to_tsquery('cs_search', $1)`, [q])).rows[0]!.n)
      // three words and a phrase of one generated article's body, so that each finds something
      const phraseRow = (await client.query<{ body: string }>(`select body from articles where id = 'art_scale_' || least(4242, $1::int)`, [ARTICLES])).rows[0]!
      const bodyWords = phraseRow.body.replace(/<[^>]*>/g, " ").trim().split(/\s+/)
      const three = `${bodyWords[2]} ${bodyWords[30]} ${bodyWords[60]}`
      const phrase = `"${bodyWords.slice(3, 5).join(" ")}"`
      const cases: Array<[string, string]> = [
        ["articles page 1 (list)", `/api/v1/sites/${site.id}/articles?per_page=20`],
        [`search one word (${await matches(common)} match)`, `/api/v1/search?per_page=20&q=${encodeURIComponent(common)}`],
        [`search three words (${await matches(three)} match)`, `/api/v1/search?per_page=20&q=${encodeURIComponent(three)}`],
        [`search phrase (${await matches(phrase)} match)`, `/api/v1/search?per_page=20&q=${encodeURIComponent(phrase)}`],
        [`site list + q one word`, `/api/v1/sites/${site.id}/articles?per_page=20&q=${encodeURIComponent(common)}`],
      ]
      const latencies: Array<number> = []
      for (const [, path] of cases) latencies.push(await p50(`${app.url}${path}`, auth))

      // relevance: mean reciprocal rank of the judged queries (rank within the first 20; beyond counts 0)
      let reciprocal = 0
      const ranks: Array<string> = []
      for (const a of JUDGED) {
        const page = (await (await fetch(`${app.url}/api/v1/search?per_page=20&q=${encodeURIComponent(a.query)}`, { headers: auth })).json()) as { data: Array<{ id: string }> }
        const rank = page.data.findIndex((x) => x.id === `art_judged_${a.key}`) + 1
        ranks.push(`${a.key}:${rank === 0 ? "-" : rank}`)
        if (rank > 0) reciprocal += 1 / rank
      }
      const mrr = reciprocal / JUDGED.length

      // the cost of keeping the index: PUT p50 with the generated column and GIN index, then without
      const putOnce = async (n: number) => {
        const id = `art_scale_${1 + (n % 50)}`
        const body = JSON.stringify({ body: `<p>Edited ${n}: ${words.slice(n % 1900, (n % 1900) + 80).join(" ")}</p>` })
        return timed(`${app.url}/api/v1/articles/${id}`, { method: "PUT", headers: { ...auth, "content-type": "application/json" }, body })
      }
      const putArm = async (offset: number) => {
        for (let i = 0; i < 10; i++) await putOnce(offset + i)
        const times: Array<number> = []
        for (let i = 0; i < PUTS; i++) times.push(await putOnce(offset + 10 + i))
        return median(times)
      }
      // with, without, with again (after the untimed edits below)
      const generatedOf = async (column: string) =>
        (await client.query<{ expr: string }>(
          `select pg_get_expr(d.adbin, d.adrelid) as expr from pg_attrdef d join pg_attribute a on a.attrelid = d.adrelid and a.attnum = d.adnum
           where d.adrelid = 'articles'::regclass and a.attname = $1`,
          [column],
        )).rows[0]!.expr
      // both search columns (the whole document's vector and the title's) and their GIN indexes
      const searched = [
        { column: "search_vector", index: "articles_search_index", expr: await generatedOf("search_vector") },
        { column: "title_vector", index: "articles_title_search_index", expr: await generatedOf("title_vector") },
      ]
      // Untimed first: each of the 50 edited articles is edited once (its first edit replaces the
      // generated body, all of whose terms go) and the server warms up, so that every timed arm
      // meets the same steady state (an edit of an already edited article).
      for (let i = 0; i < 100; i++) await putOnce(40_000 + i)
      const withFirst = await putArm(0)
      // the term counts' share: the same PUT with the trigger that appends an edit's term changes on
      // and off, alternated in 4 rounds so both meet the same drift (the counts go stale while it is
      // off; only PUTs follow), columns and indexes kept
      const termOn: Array<number> = []
      const termOff: Array<number> = []
      for (let round = 0; round < 4; round++) {
        for (const [on, into] of [[true, termOn], [false, termOff]] as const) {
          await client.query(`alter table articles ${on ? "enable" : "disable"} trigger terms_recounted`)
          for (let i = 0; i < PUTS / 4; i++) into.push(await putOnce(30_000 + round * PUTS + (on ? 0 : PUTS / 2) + i))
        }
      }
      await client.query("alter table articles enable trigger terms_recounted")
      const [withTermCounts, withoutTermCounts] = [median(termOn), median(termOff)]
      // without: plain columns in their places (the entity still names them), no expression, no index;
      // the term-count triggers find no terms in them, so they append and count nothing
      for (const { column } of searched) {
        await client.query(`alter table articles drop column ${column}`)
        await client.query(`alter table articles add column ${column} tsvector`)
      }
      const withoutIndex = await putArm(10_000)
      started = performance.now()
      for (const { column, index, expr } of searched) {
        await client.query(`alter table articles drop column ${column}`)
        await client.query(`alter table articles add column ${column} tsvector generated always as (${expr}) stored`)
        await client.query(`create index ${index} on articles using gin (${column})`)
      }
      await client.query("vacuum analyze articles")
      const rebuildMs = performance.now() - started
      const withAgain = await putArm(20_000)
      const withIndex = (withFirst + withAgain) / 2

      console.log(
        `database: PostgreSQL; grown by ${ARTICLES} generated articles on one site (${(growMs / 1000).toFixed(1)} s, the search column computed as they were written), ` +
          `${JUDGED.length} judged articles and ${DISTRACTORS.length} distractors, vacuum analyze ${(vacuumMs / 1000).toFixed(1)} s; p50 of ${REQUESTS} requests one at a time, per_page=20`,
      )
      console.log(`${"request".padEnd(36)} ${"p50".padStart(10)}  vs list page 1 (goal <= 2x)`)
      cases.forEach(([name], i) => console.log(`${name.padEnd(36)} ${`${latencies[i]!.toFixed(2)} ms`.padStart(10)}  ${(latencies[i]! / latencies[0]!).toFixed(2)}x`))
      console.log(`relevance: mean reciprocal rank of ${JUDGED.length} judged queries = ${mrr.toFixed(3)} (goal >= 0.8); ranks ${ranks.join(" ")}`)
      console.log(
        `PUT p50 (${PUTS} each, in this order): with the search columns and indexes ${withFirst.toFixed(2)} ms, without ${withoutIndex.toFixed(2)} ms, with again ${withAgain.toFixed(2)} ms ` +
          `(columns and indexes rebuilt for every row in ${(rebuildMs / 1000).toFixed(1)} s): with is ${(((withIndex - withoutIndex) / withoutIndex) * 100).toFixed(1)} % over without (goal <= 10 %)`,
      )
      console.log(
        `PUT p50 with the term counts' trigger on / off (${PUTS} each, alternated in 4 rounds after the first arm): ${withTermCounts.toFixed(2)} / ${withoutTermCounts.toFixed(2)} ms ` +
          `(on is ${(((withTermCounts - withoutTermCounts) / withoutTermCounts) * 100).toFixed(1)} % over off)`,
      )
    } finally {
      await client.end()
    }
  } finally {
    await bench.close()
  }
}
