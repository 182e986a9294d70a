/**
 * Search at scale (`npm run bench -- search`; it takes minutes): on a site grown to 100 000
 * generated articles (as `scale.slow.bench.ts` grows one, inside PostgreSQL, with bodies of 80
 * words drawn from a vocabulary of 2 000), the p50 of `GET /api/v1/search` for a one-word, a
 * three-word and a phrase query against the article list's page 1 on the same data (goal: within
 * 2x); the mean reciprocal rank of a judged set of 32 queries, each written for one article among
 * distractors (`searchJudged.ts`; goal >= 0.8); and what keeping the index costs a PUT (goal:
 * within 10 %). For that last, the grown database is copied three times (PostgreSQL's file copy):
 * one copy stays as it is (the same code on the same data: how far two arms differ by chance), one
 * loses the term counts' update trigger, and one loses both search columns (plain columns in their
 * places, no expression), their GIN indexes and the three term-count triggers. A server on each of
 * the four takes turns, `BENCH_SEARCH_ROUNDS` rounds in rotating order, each editing its own copy
 * of the same 50 articles with the same bodies, so every arm meets the same drift of the machine.
 * Nothing here asserts.
 */
import pg from "pg"
import { DISTRACTORS, JUDGED } from "./searchJudged.ts"
import { copyDatabase, largestDemoSite, pgDatabase, serveDatabase } from "./support.ts"

const ARTICLES = Number(process.env.BENCH_SCALE_ARTICLES ?? 100_000)
/** Requests per case (`BENCH_SCALE_REQUESTS`, default 40) after 5 to warm up. */
const REQUESTS = Number(process.env.BENCH_SCALE_REQUESTS ?? 40)
/** Timed PUTs per arm of the index-cost comparison (`BENCH_SEARCH_PUTS`, default 1000), over 50 articles. */
const PUTS = Number(process.env.BENCH_SEARCH_PUTS ?? 1000)
/** Rounds the arms of the index-cost comparison take turns in (`BENCH_SEARCH_ROUNDS`, default 50). */
const ROUNDS = Number(process.env.BENCH_SEARCH_ROUNDS ?? 50)

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
  const db = await pgDatabase("cs_search")
  if (db === undefined) {
    console.log("search: needs PostgreSQL (BENCH_PG_URL); skipped")
    return
  }
  const closing: Array<() => Promise<void>> = [db.drop]
  try {
    const first = await serveDatabase("cs_search", db.url)
    closing.unshift(first.close)
    const { app, auth, client, site, account, newest } = await largestDemoSite(first, db.url)
    let clientOpen = true
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

      // the cost of keeping the index: the same PUTs on four copies of the grown database, in turn
      const generated = await client.query(`select 1 from information_schema.columns where table_name = 'articles' and column_name in ('search_vector', 'title_vector') and is_generated = 'ALWAYS'`)
      if (generated.rowCount !== 2) throw new Error("the search columns are not generated columns")
      await client.end()
      clientOpen = false
      await first.close()
      closing.splice(closing.indexOf(first.close), 1)
      started = performance.now()
      const copy = async (suffix: string, change: Array<string>) => {
        const made = await copyDatabase(db.url, suffix)
        closing.push(made.drop)
        const c = new pg.Client({ connectionString: made.url })
        await c.connect()
        try {
          for (const sql of change) await c.query(sql)
          await c.query("vacuum analyze articles")
        } finally {
          await c.end()
        }
        return made.url
      }
      const arms: Array<{ name: string; url: string }> = [
        { name: "with the search columns, indexes and term counts", url: db.url },
        { name: "the same, a second copy", url: await copy("same", []) },
        { name: "without the term counts' update trigger", url: await copy("noterms", ["drop trigger terms_recounted on articles"]) },
        {
          name: "without search (plain columns, no index, no trigger)",
          url: await copy("nosearch", [
            ...["terms_counted", "terms_recounted", "terms_uncounted"].map((t) => `drop trigger ${t} on articles`),
            // plain columns in their places (search's statements name them): no expression, no index
            ...["search_vector", "title_vector"].flatMap((column) => [`alter table articles drop column ${column}`, `alter table articles add column ${column} tsvector`]),
          ]),
        },
      ]
      const copyMs = performance.now() - started
      const servers = await Promise.all(arms.map(async (arm, i) => {
        const served = await serveDatabase(`cs_search_${i}`, arm.url, { SEED_DEMO: "false" })
        closing.unshift(served.close)
        return served.app
      }))
      const putOnce = async (url: string, n: number) => {
        const id = `art_scale_${1 + (n % 50)}`
        const body = JSON.stringify({ body: `<p>Edited ${n}: ${words.slice(n % 1900, (n % 1900) + 80).join(" ")}</p>` })
        return timed(`${url}/api/v1/articles/${id}`, { method: "PUT", headers: { ...auth, "content-type": "application/json" }, body })
      }
      // Untimed first: each of the 50 articles of each copy is edited twice (its first edit replaces
      // the generated body, all of whose terms go) and each server warms up.
      for (const server of servers) for (let i = 0; i < 100; i++) await putOnce(server.url, 40_000 + i)
      const times: Array<Array<number>> = arms.map(() => [])
      const perRound = Math.max(1, Math.round(PUTS / ROUNDS))
      for (let round = 0; round < ROUNDS; round++) {
        for (let k = 0; k < arms.length; k++) {
          const a = (round + k) % arms.length
          // every arm sends the same bodies to the same articles, round by round
          for (let i = 0; i < perRound; i++) times[a]!.push(await putOnce(servers[a]!.url, round * perRound + i))
        }
      }
      const putP50 = times.map((t) => median(t))
      const without = putP50[3]!
      const over = (ms: number) => `${(((ms - without) / without) * 100).toFixed(1)} %`
      const withBoth = median([...times[0]!, ...times[1]!])

      console.log(
        `database: PostgreSQL; grown by ${ARTICLES} generated articles on one site (${(growMs / 1000).toFixed(1)} s, the search column computed as they were written), ` +
          `${JUDGED.length} judged articles and ${DISTRACTORS.length} distractors, vacuum analyze ${(vacuumMs / 1000).toFixed(1)} s; p50 of ${REQUESTS} requests one at a time, per_page=20`,
      )
      console.log(`${"request".padEnd(36)} ${"p50".padStart(10)}  vs list page 1 (goal <= 2x)`)
      cases.forEach(([name], i) => console.log(`${name.padEnd(36)} ${`${latencies[i]!.toFixed(2)} ms`.padStart(10)}  ${(latencies[i]! / latencies[0]!).toFixed(2)}x`))
      console.log(`relevance: mean reciprocal rank of ${JUDGED.length} judged queries = ${mrr.toFixed(3)} (goal >= 0.8); ranks ${ranks.join(" ")}`)
      console.log(
        `PUT p50, ${perRound * ROUNDS} PUTs an arm in ${ROUNDS} rounds of ${perRound}, the arms in rotating order (4 copies of the grown database made in ${(copyMs / 1000).toFixed(1)} s):`,
      )
      arms.forEach((arm, i) => console.log(`  ${arm.name.padEnd(54)} ${`${putP50[i]!.toFixed(2)} ms`.padStart(10)}  ${i === 3 ? "(baseline)" : `${over(putP50[i]!)} over without search`}`))
      console.log(`PUT with search (both copies' PUTs) ${withBoth.toFixed(2)} ms against ${without.toFixed(2)} ms without: ${over(withBoth)} over (goal <= 10 %)`)
    } finally {
      if (clientOpen) await client.end()
    }
  } finally {
    for (const close of closing) await close().catch((err) => console.error(err))
  }
}
