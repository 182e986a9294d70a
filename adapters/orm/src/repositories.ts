/**
 * The repositories on MikroORM's database client. Reads, counters and the activity insert are
 * hand-written parameterised SQL on the ORM's native client (`sql.ts`: no fork, no hydration);
 * inserts that go through entities and the revoke transaction use a forked EntityManager.
 *
 * On the authenticated hot path two calls usually skip the database: `ApiKeyRepository.findByHash`
 * answers from the API-key cache (`apiKeyCache.ts`) while the event bus is connected, and
 * `ActivityLog.record` appends the entry to the local journal, shipped in the background (`activityJournal.ts`).
 * Longer than 300 lines: every read port of the core on the database, side by side, so that
 * their SQL (deferred joins, counts from the count tables) is reviewed together.
 */
import {
  AccountRepository,
  type AccountRecord,
  ActivityLog,
  entryToWrite,
  RefusalBudget,
  ApiKeyRepository,
  type ArticleSearchFilter,
  ArticleRepository,
  BacklinkRepository,
  NotFound,
  RevisionRepository,
  SEARCH_MARK_START,
  HEADLINE_BEFORE,
  HEADLINE_CHARACTERS,
  HEADLINE_HTML_CHARACTERS,
  SEARCH_MARK_STOP,
  SiteRepository,
  searchDatabaseQuery,
  titleTermsQuery,
  type Slice,
  type Unavailable,
  type Website,
} from "@content-site/core"
import { LockMode } from "@mikro-orm/core"
import { Effect, Layer, Option } from "effect"
import type { ActivityJournal } from "./activityJournal.ts"
import { apiKeyCache, keyEvent } from "./apiKeyCache.ts"
import type { EventBus } from "./bus.ts"
import { AccountEntity, ActivityEntity, ApiKeyEntity } from "./entities.ts"
import { attempt } from "./failures.ts"
import {
  accountOf,
  accountRow,
  activityOf,
  activityRow,
  journalRow,
  apiKeyOf,
  apiKeyRow,
  articleOf,
  articleSummaryOf,
  backlinkOf,
  iso,
  revisionOf,
  revisionSummaryOf,
  type AccountRow,
  type ActivityRow,
  type ApiKeyRow,
  type ArticleRow,
  type BacklinkRow,
  type RevisionRow,
  type RevisionSummaryRow,
  type Wire,
} from "./mapping.ts"
import type { Em, Orm } from "./orm.ts"
import { batchedLookup } from "./batch.ts"
import { keptCache } from "./keptCache.ts"
import { nativeSql, type Sql } from "./sql.ts"

/** Column lists aliased to the entities' property names, so the mapping helpers read the rows. */
const ACCOUNT = `id, email, name, password_hash as "passwordHash", created_at as "createdAt"`
const API_KEY = `id, account_id as "accountId", name, scope, key_hash as "keyHash", created_at as "createdAt",
  last_used_at as "lastUsedAt", revoked_at as "revokedAt"`
const ARTICLE_SUMMARY = `id, account_id as "accountId", site_id as "siteId", title, url, status, published_at as "publishedAt",
  target_keyword as "targetKeyword", word_count as "wordCount", featured_image as "featuredImage",
  updated_at as "updatedAt", revision`
const ARTICLE = `${ARTICLE_SUMMARY}, body`
/** `ARTICLE_SUMMARY` of the table aliased `a`. */
const ARTICLE_SUMMARY_OF_A = `a.id, a.account_id as "accountId", a.site_id as "siteId", a.title, a.url, a.status, a.published_at as "publishedAt",
  a.target_keyword as "targetKeyword", a.word_count as "wordCount", a.featured_image as "featuredImage",
  a.updated_at as "updatedAt", a.revision`
const BACKLINK = `id, account_id as "accountId", site_id as "siteId", date_acquired as "dateAcquired",
  source_domain as "sourceDomain", source_url as "sourceUrl", target_url as "targetUrl", anchor_text as "anchorText",
  anchor_type as "anchorType", category`
// A list of revisions reads no body (REVISION_SUMMARY): `get` reads one revision whole.
const REVISION_SUMMARY = `id, account_id as "accountId", article_id as "articleId", number, origin, title,
  featured_image as "featuredImage", reason, actor, restored_from as "restoredFrom", created_at as "createdAt"`
const REVISION = `${REVISION_SUMMARY}, body`
const ACTIVITY = `id, account_id as "accountId", at, channel, actor, action, site_id as "siteId", article_id as "articleId",
  status, error_code as "errorCode", duration_ms as "durationMs", request_id as "requestId", count`
/** A site with its article and backlink counts (counted by site, as before). */
const SITE = `s.id, s.name, s.url, s.created_at as "createdAt",
  (select count(*) from articles a where a.site_id = s.id) as "articleCount",
  (select count(*) from backlinks b where b.site_id = s.id) as "backlinkCount"`

interface SiteWire { id: string; name: string; url: string; createdAt: Date | string; articleCount: number | string | bigint; backlinkCount: number | string | bigint }
const websiteOf = (s: SiteWire): Website => ({
  id: s.id,
  name: s.name,
  url: s.url,
  created_at: (s.createdAt instanceof Date ? s.createdAt : new Date(s.createdAt)).toISOString(),
  article_count: Number(s.articleCount),
  backlink_count: Number(s.backlinkCount),
})

/** An RFC 3339 instant as a timestamptz parameter, read as JavaScript reads it (like `new Date(s)`). */
const instant = (s: string): string => new Date(s).toISOString()

/** A WHERE clause built condition by condition, with numbered parameters. */
const where = () => {
  const params: Array<unknown> = []
  const conditions: Array<string> = []
  return {
    params,
    /** `condition` holds one `?`, replaced by the next parameter number. */
    add(condition: string, value?: unknown) {
      if (condition.includes("?")) {
        params.push(value)
        conditions.push(condition.replace("?", `$${params.length}`))
      } else conditions.push(condition)
    },
    get sql() {
      return conditions.join(" and ")
    },
  }
}

/**
 * A page of `select <columns> from <table> where ... order by ...` and the count of all matches, in
 * one statement (`count(*) over ()`); only a page past the end, which has no row to carry the
 * count, asks for it separately.
 */
const page = async <R>(
  sql: Sql,
  table: string,
  columns: string,
  w: ReturnType<typeof where>,
  orderBy: string,
  slice: Slice | undefined,
): Promise<{ rows: Array<R>; total: number }> => {
  const params = [...w.params]
  let limit = ""
  if (slice !== undefined) {
    params.push(slice.limit, slice.offset)
    limit = ` limit $${params.length - 1} offset $${params.length}`
  }
  const rows = await sql<R & { __total: number | string | bigint }>(
    `select ${columns}, count(*) over () as __total from ${table} where ${w.sql} order by ${orderBy}${limit}`,
    params,
  )
  const first = rows[0]
  if (first !== undefined) return { rows: rows.map(({ __total: _, ...row }) => row as R), total: Number(first.__total) }
  if (slice === undefined || slice.offset === 0) return { rows: [], total: 0 }
  const count = await sql<{ n: number | string | bigint }>(`select count(*) as n from ${table} where ${w.sql}`, w.params)
  return { rows: [], total: Number(count[0]?.n ?? 0) }
}

/** A list's order and its exact inverse (every column flipped, NULLs moved to the other end). */
interface ListOrder {
  readonly forward: string
  readonly reverse: string
}

/**
 * From this offset on a page knows the total before it reads its rows (one more, small statement),
 * so that a page in the second half of the list is read from the other end (see `deferredPage`).
 */
const DEEP_OFFSET = 1_000

/**
 * `page` for tables that grow large (articles, activity): a deferred join. The page's keys are found
 * first, in the list's order, by an index that covers the filters (so `OFFSET` skips index entries,
 * not table rows), and only the page's rows are read; the count of all matches is a subquery that
 * the same index answers alone. `key` is the table's primary key columns.
 *
 * `OFFSET` still walks every entry it skips, so a page far down costs as much as the list is long.
 * A deep page (offset at least `DEEP_OFFSET`) therefore reads the total first, and when the page
 * lies in the second half it reads it in the reverse order (the same index walked backwards) with
 * offset `total - offset - limit` (the limit shrunk for the last, partial page) and reverses the
 * rows: the same rows in the same order, walking at most half the list. Both orders must be total
 * (end with a unique key) for the two to be exact mirrors. The total and the rows are then two
 * statements, so a write between them can shift such a page by the rows it adds or removes, as it
 * would between two requests.
 */
const deferredPage = async <R>(
  sql: Sql,
  table: string,
  key: string,
  columns: string,
  w: ReturnType<typeof where>,
  order: ListOrder,
  slice: Slice | undefined,
  /** How to count all matches, when something cheaper than counting them exists; `?` are its parameters. */
  total?: { readonly sql: string; readonly params: ReadonlyArray<unknown> },
): Promise<{ rows: Array<R>; total: number }> => {
  if (slice === undefined) return page<R>(sql, table, columns, w, order.forward, slice)
  const countAll = async (): Promise<number> => {
    if (total !== undefined) {
      let n = 0
      const count = await sql<{ n: number | string | bigint }>(`select ${total.sql.replace(/\?/g, () => `$${++n}`)} as n`, total.params)
      return Number(count[0]?.n ?? 0)
    }
    const count = await sql<{ n: number | string | bigint }>(`select count(*) as n from ${table} where ${w.sql}`, w.params)
    return Number(count[0]?.n ?? 0)
  }
  /**
   * The rows of `limit` keys after `offset` in `orderBy`, in that order, each with `alsoSelect`
   * (an expression whose `?` are its parameters) as `__total` when given.
   */
  const keyed = <T>(orderBy: string, limit: number, offset: number, alsoSelect?: { readonly sql: string; readonly params: ReadonlyArray<unknown> }) => {
    const params = [...w.params, limit, offset]
    const window = `limit $${params.length - 1} offset $${params.length}`
    let i = 0
    const also =
      alsoSelect === undefined
        ? ""
        : `, ${alsoSelect.sql.replace(/\?/g, () => {
            params.push(alsoSelect.params[i++])
            return `$${params.length}`
          })} as __total`
    return sql<T>(
      `select ${columns}${also}
      from ${table} join (select ${key} from ${table} where ${w.sql} order by ${orderBy} ${window}) as keys using (${key})
      order by ${orderBy}`,
      params,
    )
  }
  if (slice.offset >= DEEP_OFFSET) {
    const n = await countAll()
    if (slice.offset >= n) return { rows: [], total: n }
    // rows before the page, walked forwards; rows from the page's start to the end, walked backwards
    if (n - slice.offset < slice.offset) {
      const limit = Math.min(slice.limit, n - slice.offset)
      const rows = await keyed<R>(order.reverse, limit, n - slice.offset - limit)
      return { rows: rows.reverse(), total: n }
    }
    return { rows: await keyed<R>(order.forward, slice.limit, slice.offset), total: n }
  }
  // a shallow page: its rows and the count of all matches in one statement
  const rows = await keyed<R & { __total: number | string | bigint }>(
    order.forward,
    slice.limit,
    slice.offset,
    total ?? { sql: `(select count(*) from ${table} where ${w.sql})`, params: [] },
  )
  const first = rows[0]
  if (first !== undefined) return { rows: rows.map(({ __total: _, ...row }) => row as R), total: Number(first.__total) }
  if (slice.offset === 0) return { rows: [], total: 0 }
  return { rows: [], total: await countAll() }
}

/** Article lists: newest published first, the unpublished last, ties by id. */
const ARTICLE_ORDER: ListOrder = { forward: "published_at desc nulls last, id asc", reverse: "published_at asc nulls first, id desc" }
/** Activity lists: newest first, ties by id (the key is (id, at)). */
const ACTIVITY_ORDER: ListOrder = { forward: "at desc, id desc", reverse: "at asc, id asc" }

const DAY_MS = 86_400_000
const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10)
/**
 * The midnight that begins 9999-12-31, the last day a range may reach (the core's INSTANT_RANGE).
 * The one after it has a six-digit year in `toISOString`, which neither a `day` text nor a
 * PostgreSQL timestamp reads: a range reaching that day ends with a part day instead.
 */
const LAST_MIDNIGHT_MS = 253_402_214_400_000

/**
 * The number of rows matching `match` (column = value) whose `at` column lies between two instants,
 * read from a per-day counts table (`counts`, keyed by the same columns and `day`, UTC
 * `YYYY-MM-DD`) for the whole days in the range, and counted in `table` only for the part days at
 * its ends: a handful of rows to add up whatever the table's size. With a range, only rows with a
 * time count (`day <> ''`). `?` are the parameters, in order.
 */
const dayCountedTotal = (spec: {
  readonly table: string
  readonly counts: string
  readonly at: string
  readonly match: ReadonlyArray<readonly [string, unknown]>
  readonly from: string | undefined
  readonly to: string | undefined
}) => {
  const { table, counts, at, match, from, to } = spec
  const params: Array<unknown> = []
  const p = (value: unknown) => (params.push(value), "?")
  // each `?` is pushed in the order it appears in the text
  const matching = () => match.map(([column, value]) => `${column} = ${p(value)}`).join(" and ")
  const rows = (lower: () => string, upper: () => string) => {
    const who = matching()
    const l = lower()
    return `(select count(*) from ${table} where ${who} and ${l} and ${upper()})`
  }
  const fromMs = from !== undefined ? Date.parse(instant(from)) : undefined
  const toMs = to !== undefined ? Date.parse(instant(to)) : undefined
  // whole days from the first midnight at or after `from` to the last one after which `to` ends a day
  const wholeFrom = fromMs !== undefined ? Math.ceil(fromMs / DAY_MS) * DAY_MS : undefined
  const wholeTo = toMs !== undefined ? Math.min(Math.floor((toMs + 1) / DAY_MS) * DAY_MS, LAST_MIDNIGHT_MS) : undefined
  if (wholeFrom !== undefined && (wholeTo !== undefined ? wholeFrom >= wholeTo : wholeFrom > LAST_MIDNIGHT_MS)) {
    return { sql: rows(() => `${at} >= ${p(instant(from!))}`, () => (to !== undefined ? `${at} <= ${p(instant(to))}` : "true")), params }
  }
  const who = matching()
  const dated = from !== undefined || to !== undefined ? ` and day <> ''` : ""
  const since = wholeFrom !== undefined ? ` and day >= ${p(dayOf(wholeFrom))}` : ""
  const until = wholeTo !== undefined ? ` and day < ${p(dayOf(wholeTo))}` : ""
  const parts = [`coalesce((select sum(n) from ${counts} where ${who}${dated}${since}${until}), 0)`]
  if (fromMs !== undefined && wholeFrom !== undefined && fromMs < wholeFrom) {
    parts.push(rows(() => `${at} >= ${p(instant(from!))}`, () => `${at} < ${p(new Date(wholeFrom).toISOString())}`))
  }
  if (toMs !== undefined && wholeTo !== undefined && wholeTo <= toMs) {
    parts.push(rows(() => `${at} >= ${p(new Date(wholeTo).toISOString())}`, () => `${at} <= ${p(instant(to!))}`))
  }
  return { sql: `(${parts.join(" + ")})`, params }
}

/** `ts_rank`'s weights for D, C (body), B (target keyword) and A (title), against the statement's `query`. */
const SEARCH_RANK = `ts_rank('{0.05, 0.1, 0.4, 1.0}', search_vector, query.q)`

/** The marks, which a title's or keyword's headline writes as spaces so that its own mark characters forge none (a body's: `cs_search_text`). */
const MARKS = `${SEARCH_MARK_START}${SEARCH_MARK_STOP}`

/**
 * `ts_headline`'s options: the whole text, every word of the query between the core's marks (the
 * core's `matchedMarksOnly` keeps the matches, and `snippetOf` finds the lead before the first),
 * as the memory store marks it.
 */
const HEADLINE_OPTIONS = `StartSel=${SEARCH_MARK_START}, StopSel=${SEARCH_MARK_STOP}, HighlightAll=true`

/**
 * The statement of a search: the page of the account's matches, best first (a title holding any
 * of the query's positive terms, then \`ts_rank\` with title > keyword > body, ties by published_at descending then
 * id), and their exact count on every row (one row with a null id when the page is empty). The
 * page's rows get their headline from the body's searched text (\`cs_search_text\`, at most 200 000
 * characters each, only for the page's rows).
 *
 * Where the time goes on a common word (thousands of matches): every match must be read once to be
 * counted (a GIN index has no index-only scan); ranking each from its stored vector costs about
 * as much again, and a count over whole rows made the sort spill the vectors to disk. So the title
 * tier comes first, from its own small index (\`title_vector\`: a few hundred rows for a word in
 * thousands of bodies), ranked in full; when it holds the page's end (offset + limit rows), the
 * body-only matches are counted only (a one-time filter keeps them from being read and ranked).
 * Otherwise they are read once into a materialised list of (id, rank, date), no vectors, that gives
 * both the page and the count. The order is the same either way: the tiers partition the matches.
 * A query of one word (one lexeme, \`query.term\`) without a publication range reads its count
 * from \`article_term_counts\` and \`article_term_changes\` instead (a few rows, and the account's
 * edits since housekeeping last folded them; kept by triggers in every change's transaction):
 * when the titles fill the page, the body-only matches are then not visited at all.
 * Work: each match read once (counted, or ranked), each title match once more; the sort is top-N;
 * one word whose titles fill the page reads only the title tier's rows and a few count rows.
 */
const searchStatement = (
  accountId: string,
  filter: ArticleSearchFilter,
  slice: Slice | undefined,
): { text: string; params: Array<unknown> } => {
  const w = where()
  w.add("account_id = ?", accountId)
  // the query is $2 (as the searched text writes punctuation: searchDatabaseQuery), parsed once in
  // the statement's `query` (a generic plan's recheck would parse it again for every row)
  w.params.push(searchDatabaseQuery(filter.query))
  // the same account, site and status in the term counts and changes (kept per site and status, not per day)
  const terms = ["c.account_id = $1"]
  if (filter.siteId !== undefined) {
    w.add("site_id = ?", filter.siteId)
    terms.push(`c.site_id = $${w.params.length}`)
  }
  if (filter.status !== undefined) {
    w.add("status = ?", filter.status)
    terms.push(`c.status = $${w.params.length}`)
  }
  const ranged = filter.from !== undefined || filter.to !== undefined
  if (ranged) {
    w.add("published_at is not null")
    if (filter.from !== undefined) w.add("published_at >= ?", instant(filter.from))
    if (filter.to !== undefined) w.add("published_at <= ?", instant(filter.to))
  }
  const params = [...w.params]
  // the title tier's query: the query's positive terms, any one of them (none: no title tier)
  const titleTerms = titleTermsQuery(filter.query)
  // (a parameter the statement does not use has no type PostgreSQL can infer: it is sent only when used)
  if (titleTerms !== "") params.push(titleTerms)
  const titleQuery = titleTerms === "" ? "null::tsquery" : `websearch_to_tsquery('cs_search', $${params.length})`
  let window = ""
  // whether the title tier is shorter than the rows up to the page's end (without a slice, every row is asked for)
  let short = "true"
  if (slice !== undefined) {
    params.push(slice.limit, slice.offset)
    const [limit, offset] = [`$${params.length - 1}::bigint`, `$${params.length}::bigint`]
    window = ` limit ${limit} offset ${offset}`
    short = `(select count(*) from titled) < ${limit} + ${offset}`
  }
  // the body's headline over its first HEADLINE_HTML_CHARACTERS characters (ts_headline reads all it is given),
  // cut as the core's headlineWindow cuts it: HEADLINE_BEFORE characters before its first mark, HEADLINE_CHARACTERS at most
  const headline = filter.headlines
    ? `(select substr(h.h, greatest(1, strpos(h.h, '${SEARCH_MARK_START}') - ${HEADLINE_BEFORE}), ${HEADLINE_CHARACTERS})
        from (select ts_headline('cs_search', cs_search_text(left(a.body, ${HEADLINE_HTML_CHARACTERS})), query.q, '${HEADLINE_OPTIONS}') as h) h) as headline,
      ts_headline('cs_search', translate(cs_search_plain(a.title), '${MARKS}', '  '), query.q, '${HEADLINE_OPTIONS}') as title_headline,
      ts_headline('cs_search', translate(cs_search_plain(a.target_keyword), '${MARKS}', '  '), query.q, '${HEADLINE_OPTIONS}') as keyword_headline`
    : "null as headline, null as title_headline, null as keyword_headline"
  // a one-lexeme query's lexeme: its text unquoted ('' and \\ undone), then checked to be the
  // query's own, so a spelling not foreseen here counts the rows instead of reading a wrong count
  const term = ranged
    ? "null::text"
    : String.raw`case when numnode(q) = 1 then (select t from (select replace(replace(substr(q::text, 2, length(q::text) - 2), '''''', ''''), '\\', '\') as t) x
        where array_to_tsvector(array[t]) @@ q) end`
  // `ts_match_vq` is `@@` that no index answers: the title tier is found from the title's index
  // alone (any of the query's positive terms), its few rows then checked against the whole query (a
  // negated word may be in the body)
  const text = `with query as materialized (
      select q, ${titleQuery} as t, ${term} as term from websearch_to_tsquery('cs_search', $2) as q
    ), titled as materialized (
      select id, ${SEARCH_RANK} as rank, published_at
      from articles, query where ${w.sql} and title_vector @@ query.t and ts_match_vq(search_vector, query.q)
    ), body as materialized (
      select id, ${SEARCH_RANK} as rank, published_at
      from articles, query where ${w.sql} and search_vector @@ query.q and not coalesce(title_vector @@ query.t, false)
    ), short as materialized (
      select ${short} as yes
    ), ranked as (
      select id, true as title_match, rank, published_at from titled
      union all
      select id, false, rank, published_at from body where (select yes from short)
      order by title_match desc, rank desc, published_at desc nulls last, id asc${window}
    ), total as (
      select case when (select term from query) is not null
        then (select coalesce(sum(c.n), 0) from article_term_counts c, query where ${terms.join(" and ")} and c.term = query.term)
          + (select coalesce(sum(c.d), 0) from article_term_changes c, query where ${terms.join(" and ")} and c.terms @> array[query.term])
        when (select yes from short)
        then (select count(*) from titled) + (select count(*) from body)
        else (select count(*) from articles, query where ${w.sql} and search_vector @@ query.q)
      end as n
    )
    select ${ARTICLE_SUMMARY_OF_A}, ${headline}, total.n as __total
    from total cross join query left join (ranked join articles a using (id)) on true
    order by ranked.title_match desc, ranked.rank desc, ranked.published_at desc nulls last, ranked.id asc`
  return { text, params }
}

/** What the repositories share with the rest of the database layer. */
export interface RepositoryDeps {
  /** Keeps the API-key cache in step with the other instances. */
  readonly bus: EventBus
  /** Where `ActivityLog.record` puts entries. */
  readonly activity: ActivityJournal
}

/** Repository Layers over one ORM. */
export const ormRepositories = (orm: Orm, deps: RepositoryDeps) => {
  const { bus, activity } = deps
  const keys = apiKeyCache(bus)
  // this instance's count of refused calls per source and minute
  const refusals = new RefusalBudget()
  const fork = (): Em => orm.em.fork() as Em
  const run = <A>(f: (em: Em) => Promise<A>) => attempt(() => f(fork()))
  const sql = nativeSql(orm)
  const query = <R>(text: string, params: ReadonlyArray<unknown>) => attempt(() => sql<R>(text, params))
  /**
   * Accounts are never changed or deleted through the service, so the ones read (every MCP call
   * resolves its token's account) are kept while the event bus is connected; a change by hand is
   * announced by the table's trigger.
   */
  const accountCache = keptCache<AccountRecord>(bus, "account:")
  /** Account reads (MCP token checks) of calls handled side by side share one statement. */
  const accountById = batchedLookup(
    (ids) => sql<Wire<AccountRow>>(`select ${ACCOUNT} from accounts where id = any($1::text[])`, [ids]),
    (row) => row.id,
  )
  /**
   * Article reads of requests handled side by side share one statement. Each is keyed by the
   * caller's account and the article's id (`<account id> <article id>`: no id holds a space), and
   * the statement reads only rows of the account asking: another account's article (a megabyte,
   * it may be) is never read, so that a 404 for it takes the time of one for a missing id.
   */
  const articleOfAccount = batchedLookup(
    (keys) => {
      const accounts: Array<string> = []
      const ids: Array<string> = []
      for (const key of keys) {
        const at = key.indexOf(" ")
        accounts.push(key.slice(0, at))
        ids.push(key.slice(at + 1))
      }
      return sql<Wire<ArticleRow>>(
        // (the ids alone name the rows by the primary key; the pairs keep those of the asking accounts)
        `select ${ARTICLE} from articles where id = any($2::text[]) and (account_id, id) in (select * from unnest($1::text[], $2::text[]))`,
        [accounts, ids],
      )
    },
    (row) => `${row.accountId} ${row.id}`,
  )
  /** The single row of a lookup, or NotFound. */
  const one = <R, A>(rows: Effect.Effect<Array<R>, Unavailable>, to: (r: R) => A, missing: () => NotFound) =>
    Effect.flatMap(rows, (rs) => (rs[0] !== undefined ? Effect.succeed(to(rs[0])) : Effect.fail(missing())))

  return Layer.mergeAll(
    Layer.succeed(AccountRepository, {
      findByEmail: (email) =>
        Effect.map(query<Wire<AccountRow>>(`select ${ACCOUNT} from accounts where email = $1`, [email]), (rs) =>
          Option.map(Option.fromNullishOr(rs[0]), accountOf),
        ),
      get: (id) => {
        const cached = accountCache.get(id)
        if (cached !== undefined) return Effect.succeed(cached)
        const ticket = accountCache.ticket()
        return Effect.flatMap(attempt(() => accountById(id)), (row) => {
          if (row === undefined) return Effect.fail(new NotFound({ resource: "account", id }))
          const account = accountOf(row)
          accountCache.put(id, account, ticket)
          return Effect.succeed(account)
        })
      },
      insert: (account) =>
        run(async (em) => {
          em.create(AccountEntity, accountRow(account))
          await em.flush()
        }),
      hasAny: Effect.map(query<{ any: boolean }>("select exists (select 1 from accounts) as any", []), (rs) => rs[0]?.any === true),
    }),
    Layer.succeed(ApiKeyRepository, {
      findByHash: (hash) =>
        Effect.suspend(() => {
          const cached = keys.get(hash)
          if (cached !== undefined) return Effect.succeed(Option.some(cached))
          const ticket = keys.ticket()
          return Effect.map(query<Wire<ApiKeyRow>>(`select ${API_KEY} from api_keys where key_hash = $1`, [hash]), (rs) => {
            const found = Option.map(Option.fromNullishOr(rs[0]), apiKeyOf)
            if (Option.isSome(found)) keys.put(found.value, ticket)
            return found
          })
        }),
      list: (accountId) =>
        Effect.map(
          query<Wire<ApiKeyRow>>(`select ${API_KEY} from api_keys where account_id = $1 order by created_at desc, id asc`, [accountId]),
          (rs) => rs.map(apiKeyOf),
        ),
      // the key and the entry of the call that made it, in one transaction: no key without its entry
      insert: (key, activity) =>
        run((em) =>
          em.transactional(async (tx) => {
            tx.create(ApiKeyEntity, apiKeyRow(key))
            await tx.flush()
            if (activity !== undefined) await insertActivity(tx, activityRow(activity))
          }),
        ),
      revoke: (accountId, keyId, at, activity) =>
        Effect.flatMap(
          run((em) =>
            em.transactional(async (tx) => {
              // Locked: of two revocations at once (two tabs, two instances, two operators) the
              // second waits for the first and finds the key revoked, its time kept.
              const row = await tx.findOne(ApiKeyEntity, { id: keyId, accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE })
              if (!row) return null
              const already = row.revokedAt !== null && row.revokedAt !== undefined
              if (!already) row.revokedAt = new Date(at)
              // the entry of the call that revoked it, committed with the revocation
              if (!already && activity !== undefined) await insertActivity(tx, activityRow(activity))
              // every instance drops the key when this commits (also when it was revoked by hand before)
              await bus.publishIn(tx, keyEvent(keyId))
              return { revokedAt: iso(row.revokedAt!), already }
            }),
          ),
          (revoked) => {
            if (revoked === null) return Effect.fail(new NotFound({ resource: "API key", id: keyId }))
            keys.forget(keyId)
            return Effect.succeed(revoked)
          },
        ),
      touch: (keyId, at) =>
        Effect.asVoid(
          attempt(async () => {
            await sql(`update api_keys set last_used_at = $1 where id = $2`, [instant(at), keyId])
            keys.touched(keyId, at)
          }),
        ),
    }),
    Layer.succeed(SiteRepository, {
      list: (accountId, slice) =>
        attempt(async () => {
          const w = where()
          w.add("s.account_id = ?", accountId)
          const { rows, total } = await page<SiteWire>(sql, "sites s", SITE, w, "s.name asc, s.id asc", slice)
          return { items: rows.map(websiteOf), total }
        }),
      get: (accountId, siteId) =>
        one(
          query<SiteWire>(`select ${SITE} from sites s where s.id = $1 and s.account_id = $2`, [siteId, accountId]),
          websiteOf,
          () => new NotFound({ resource: "site", id: siteId }),
        ),
      require: (accountId, siteId) =>
        one(
          query<{ id: string }>(`select id from sites where id = $1 and account_id = $2`, [siteId, accountId]),
          () => undefined,
          () => new NotFound({ resource: "site", id: siteId }),
        ),
    }),
    Layer.succeed(ArticleRepository, {
      list: (accountId, filter, slice) =>
        attempt(async () => {
          const w = where()
          w.add("account_id = ?", accountId)
          w.add("site_id = ?", filter.siteId)
          if (filter.status !== undefined) w.add("status = ?", filter.status)
          if (filter.from !== undefined || filter.to !== undefined) {
            w.add("published_at is not null")
            if (filter.from !== undefined) w.add("published_at >= ?", instant(filter.from))
            if (filter.to !== undefined) w.add("published_at <= ?", instant(filter.to))
          }
          // the total from the per-day counts (`article_counts`)
          const counts = dayCountedTotal({
            table: "articles",
            counts: "article_counts",
            at: "published_at",
            match: [["account_id", accountId], ["site_id", filter.siteId], ...(filter.status !== undefined ? [["status", filter.status] as const] : [])],
            from: filter.from,
            to: filter.to,
          })
          const { rows, total } = await deferredPage<Omit<Wire<ArticleRow>, "body">>(
            sql, "articles", "id", ARTICLE_SUMMARY, w, ARTICLE_ORDER, slice, counts,
          )
          return { items: rows.map(articleSummaryOf), total }
        }),
      search: (accountId, filter, slice) =>
        attempt(async () => {
          const { text, params } = searchStatement(accountId, filter, slice)
          type Hit = Omit<Wire<ArticleRow>, "body"> & { headline: string | null; title_headline: string | null; keyword_headline: string | null; __total: number | string | bigint }
          const rows = await sql<Hit>(text, params)
          // every row carries the count; an empty page is one row without an article
          const total = Number(rows[0]?.__total ?? 0)
          return {
            items: rows.flatMap(({ __total: _, headline, title_headline, keyword_headline, ...row }) =>
              row.id === null ? [] : [{ ...articleSummaryOf(row), headline: headline ?? "", titleHeadline: title_headline ?? "", keywordHeadline: keyword_headline ?? "" }],
            ),
            total,
          }
        }),
      complete: (accountId, prefix, limit, siteId) =>
        Effect.map(
          query<{ id: string; title: string }>(
            // LIKE's wildcards in the prefix are literal; the account's articles are read once, cut to `limit`;
            // id matches in the ids' code point order (as the other adapters sort), then titles
            `select id, title from articles
             where account_id = $1 and ($4::text is null or site_id = $4)
               and (id like $2 escape '\\' or lower(title) like lower($2) escape '\\')
             order by (id like $2 escape '\\') desc, case when id like $2 escape '\\' then id collate "C" end, title, id limit $3`,
            [accountId, `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`, limit, siteId ?? null],
          ),
          (rows) => rows.map((r) => ({ id: r.id, title: r.title })),
        ),
      get: (accountId, articleId) =>
        Effect.flatMap(
          attempt(() => articleOfAccount(`${accountId} ${articleId}`)),
          (row) =>
            row !== undefined
              ? Effect.succeed(articleOf(row))
              : Effect.fail(new NotFound({ resource: "article", id: articleId })),
        ),
      locate: (articleId) =>
        Effect.map(
          query<{ accountId: string; siteId: string }>(`select account_id as "accountId", site_id as "siteId" from articles where id = $1`, [articleId]),
          (rows) => (rows[0] === undefined ? Option.none() : Option.some({ account_id: rows[0].accountId, site_id: rows[0].siteId })),
        ),
    }),
    Layer.succeed(BacklinkRepository, {
      list: (accountId, filter, slice) =>
        attempt(async () => {
          const w = where()
          w.add("account_id = ?", accountId)
          w.add("site_id = ?", filter.siteId)
          if (filter.fromDate !== undefined) w.add("date_acquired >= ?", filter.fromDate)
          if (filter.toDate !== undefined) w.add("date_acquired <= ?", filter.toDate)
          const { rows, total } = await page<Wire<BacklinkRow>>(sql, "backlinks", BACKLINK, w, "date_acquired desc, id asc", slice)
          return { items: rows.map(backlinkOf), total }
        }),
    }),
    Layer.succeed(RevisionRepository, {
      list: (accountId, articleId, slice) =>
        attempt(async () => {
          const w = where()
          w.add("account_id = ?", accountId)
          w.add("article_id = ?", articleId)
          const { rows, total } = await page<Wire<RevisionSummaryRow>>(sql, "revisions", REVISION_SUMMARY, w, "number desc", slice)
          return { items: rows.map(revisionSummaryOf), total }
        }),
      get: (accountId, articleId, number) =>
        one(
          query<Wire<RevisionRow>>(`select ${REVISION} from revisions where account_id = $1 and article_id = $2 and number = $3`, [
            accountId,
            articleId,
            number,
          ]),
          revisionOf,
          () => new NotFound({ resource: "revision", id: `${articleId}/${number}` }),
        ),
    }),
    Layer.succeed(ActivityLog, {
      // the call is answered once its entry is in the journal; the database gets it in a background batch
      // (list first ships what this instance's journal still holds)
      // a refused call past its source's budget is a line that adds one to its minute's summary entry
      record: (entry, refusedBy) =>
        Effect.suspend(() => {
          const written = entryToWrite(refusals, entry, refusedBy)
          const pending = activity.append(written.summary ? { ...journalRow(written.entry), summary: true, count: 1 } : journalRow(written.entry))
          return pending === undefined ? Effect.void : attempt(() => pending)
        }),
      folds: (refusedBy, atMs) => refusals.folds(refusedBy, atMs),
      list: (accountId, filter, slice) =>
        attempt(async () => {
          const w = where()
          w.add("account_id = ?", accountId)
          if (filter.channel !== undefined) w.add("channel = ?", filter.channel)
          if (filter.articleId !== undefined) w.add("article_id = ?", filter.articleId)
          if (filter.outcome !== undefined) w.add(filter.outcome === "error" ? "error_code is not null" : "error_code is null")
          // An action may carry the name of what it concerned after it (`POST /connect/keys “ci”`).
          if (filter.actions !== undefined) w.add("split_part(action, ' “', 1) = any(?::text[])", [...filter.actions])
          if (filter.from !== undefined) w.add("at >= ?", instant(filter.from))
          if (filter.to !== undefined) w.add("at <= ?", instant(filter.to))
          await activity.flush()
          // the total from the per-day counts, unless filtered by what they do not count (the web page's
          // filters: article, outcome, actions); a deep page's rows are placed by this total too
          const counts =
            filter.articleId === undefined && filter.outcome === undefined && filter.actions === undefined
              ? dayCountedTotal({
                  table: "activity",
                  counts: "activity_counts",
                  at: "at",
                  match: [["account_id", accountId], ...(filter.channel !== undefined ? [["channel", filter.channel] as const] : [])],
                  from: filter.from,
                  to: filter.to,
                })
              : undefined
          const { rows, total } = await deferredPage<Wire<ActivityRow>>(sql, "activity", "id, at", ACTIVITY, w, ACTIVITY_ORDER, slice, counts)
          return { items: rows.map(activityOf), total }
        }),
    }),
  )
}

/** Inserts an activity row unless its (channel, request_id) exists already (inside the writer's transaction). */
export const insertActivity = async (em: Em, row: ActivityRow): Promise<void> => {
  await em
    .createQueryBuilder(ActivityEntity)
    .insert(row)
    .onConflict(["channel", "requestId", "at"])
    .ignore()
    .execute()
}
