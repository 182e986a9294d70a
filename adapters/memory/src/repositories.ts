import {
  AccountRepository,
  ActivityLog,
  entryToWrite,
  RefusalBudget,
  ApiKeyRepository,
  ArticleRepository,
  BacklinkRepository,
  NotFound,
  RevisionRepository,
  RewriteLedger,
  SiteRepository,
  Unavailable,
  type ActivityRecord,
  type ArticleRecord,
  type Slice,
  type SliceResult,
} from "@content-site/core"
import { Effect, Layer, Option } from "effect"
import type { MemoryState } from "./MemoryState.ts"
import { parseQuery, scoreArticle } from "./search.ts"

const sliceOf = <A>(all: ReadonlyArray<A>, slice: Slice | undefined): SliceResult<A> => ({
  items: slice === undefined ? all : all.slice(slice.offset, slice.offset + slice.limit),
  total: all.length,
})

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/**
 * Compares texts by code point, as PostgreSQL's `C.UTF-8` collation does: `<` compares UTF-16 code
 * units, which put a character past U+FFFF (its surrogates, U+D800 to U+DFFF) before U+E000 to U+FFFF.
 */
const byCodePoint = (a: string, b: string): number => {
  for (let i = 0; i < a.length && i < b.length; i++) {
    const x = a.codePointAt(i)!
    const y = b.codePointAt(i)!
    if (x !== y) return x < y ? -1 : 1
    if (x > 0xffff) i++
  }
  return a.length - b.length
}

/**
 * Lower case as PostgreSQL's `lower()` writes it: each character on its own, by its one-character
 * mapping. `toLowerCase` reads a word: a final `Σ` becomes `ς` (not `σ`), and `İ` becomes `i` and a
 * combining dot above (not `i`).
 */
const lowerAsDatabase = (s: string): string => {
  // ASCII alone: the same either way
  if (!/[^\u0000-\u007f]/.test(s)) return s.toLowerCase()
  let out = ""
  for (const c of s) out += c === "\u0130" ? "i" : c.toLowerCase()
  return out
}

/** Orders articles by published_at descending (unpublished last), then id ascending. */
export const compareArticles = (a: ArticleRecord, b: ArticleRecord): number => {
  if (a.published_at !== b.published_at) {
    if (a.published_at === null) return 1
    if (b.published_at === null) return -1
    return a.published_at < b.published_at ? 1 : -1
  }
  return byId(a, b)
}

const inRange = (value: string | null, from: string | undefined, to: string | undefined): boolean =>
  (from === undefined && to === undefined) || (value !== null && (from === undefined || value >= from) && (to === undefined || value <= to))

/**
 * An insert whose id or unique key (an account's email, a key's hash) is stored already: the
 * stored row is kept, and the call fails as the database's unique violation does (a lost race, Unavailable).
 */
const taken = () => new Unavailable({ detail: "The database cannot answer now; nothing was changed. Retry in a few seconds." })

/** Memory Layers of every repository port (and the rewrite ledger) over one shared state. */
export const memoryRepositories = (state: MemoryState) => {
  // this state's count of refused calls per source and minute, and where each summary entry is
  const refusals = new RefusalBudget()
  const summaries = new Map<string, number>()
  /** A change's own entry, written with it (as the writer does): once per (channel, request id). */
  const writeEntry = (entry: ActivityRecord) => {
    const key = `${entry.channel}#${entry.request_id}`
    if (state.activityRequestIds.has(key)) return
    state.activityRequestIds.add(key)
    state.activity.push(entry)
  }
  return Layer.mergeAll(
    Layer.succeed(AccountRepository, {
      findByEmail: (email) =>
        Effect.sync(() => Option.fromUndefinedOr([...state.accounts.values()].find((a) => a.email === email))),
      get: (id) => {
        const a = state.accounts.get(id)
        return a ? Effect.succeed(a) : Effect.fail(new NotFound({ resource: "account", id }))
      },
      insert: (account) =>
        state.accounts.has(account.id) || [...state.accounts.values()].some((a) => a.email === account.email)
          ? Effect.fail(taken())
          : Effect.sync(() => void state.accounts.set(account.id, account)),
      hasAny: Effect.sync(() => state.accounts.size > 0),
    }),
    Layer.succeed(ApiKeyRepository, {
      findByHash: (hash) => Effect.sync(() => Option.fromUndefinedOr([...state.apiKeys.values()].find((k) => k.key_hash === hash))),
      list: (accountId) =>
        Effect.sync(() =>
          [...state.apiKeys.values()]
            .filter((k) => k.account_id === accountId)
            .sort((a, b) => (a.created_at !== b.created_at ? (a.created_at < b.created_at ? 1 : -1) : byId(a, b))),
        ),
      insert: (key, activity) =>
        state.apiKeys.has(key.id) || [...state.apiKeys.values()].some((k) => k.key_hash === key.key_hash)
          ? Effect.fail(taken())
          : Effect.sync(() => {
              state.apiKeys.set(key.id, key)
              if (activity !== undefined) writeEntry(activity)
            }),
      revoke: (accountId, keyId, at, activity) => {
        const k = state.apiKeys.get(keyId)
        if (!k || k.account_id !== accountId) return Effect.fail(new NotFound({ resource: "API key", id: keyId }))
        // (one synchronous step: of two revocations, the first revokes, the second finds it revoked)
        return Effect.sync(() => {
          const now = state.apiKeys.get(keyId) ?? k
          if (now.revoked_at !== null) return { revokedAt: now.revoked_at, already: true }
          state.apiKeys.set(keyId, { ...now, revoked_at: at })
          if (activity !== undefined) writeEntry(activity)
          return { revokedAt: at, already: false }
        })
      },
      touch: (keyId, at) =>
        Effect.sync(() => {
          const k = state.apiKeys.get(keyId)
          if (k) state.apiKeys.set(keyId, { ...k, last_used_at: at })
        }),
    }),
    Layer.succeed(SiteRepository, {
      list: (accountId, slice) =>
        Effect.sync(() => {
          const sites = [...state.sites.values()]
            .filter((s) => s.account_id === accountId)
            .sort((a, b) => byCodePoint(a.name, b.name) || byId(a, b))
          const page = sliceOf(sites, slice)
          return { items: page.items.map((s) => websiteOf(state, s.id)!), total: page.total }
        }),
      get: (accountId, siteId) => {
        const s = state.sites.get(siteId)
        return s && s.account_id === accountId ? Effect.succeed(websiteOf(state, siteId)!) : Effect.fail(new NotFound({ resource: "site", id: siteId }))
      },
      require: (accountId, siteId) =>
        state.sites.get(siteId)?.account_id === accountId ? Effect.void : Effect.fail(new NotFound({ resource: "site", id: siteId })),
    }),
    Layer.succeed(ArticleRepository, {
      list: (accountId, filter, slice) =>
        Effect.sync(() => {
          const page = sliceOf(
            [...state.articles.values()]
              .filter(
                (a) =>
                  a.account_id === accountId &&
                  a.site_id === filter.siteId &&
                  (filter.status === undefined || a.status === filter.status) &&
                  inRange(a.published_at, filter.from, filter.to),
              )
              .sort(compareArticles),
            slice,
          )
          // lists carry no bodies, as the database adapter reads them
          return { items: page.items.map(({ body: _, ...summary }) => summary), total: page.total }
        }),
      search: (accountId, filter, slice) =>
        Effect.sync(() => {
          const query = parseQuery(filter.query)
          // every article of the state once, each scored in time linear in its searched text
          const hits = [...state.articles.values()]
            .filter(
              (a) =>
                a.account_id === accountId &&
                (filter.siteId === undefined || a.site_id === filter.siteId) &&
                (filter.status === undefined || a.status === filter.status) &&
                inRange(a.published_at, filter.from, filter.to),
            )
            .flatMap((a) => {
              const scored = scoreArticle(a, query, filter.headlines)
              return scored === undefined ? [] : [scored]
            })
            .sort((x, y) =>
              x.titleMatch !== y.titleMatch ? (x.titleMatch ? -1 : 1) : x.score !== y.score ? y.score - x.score : compareArticles(x.article, y.article),
            )
          const page = sliceOf(hits, slice)
          return {
            items: page.items.map(({ article: { body: _, ...summary }, headline, titleHeadline, keywordHeadline }) => ({ ...summary, headline, titleHeadline, keywordHeadline })),
            total: page.total,
          }
        }),
      complete: (accountId, prefix, limit, siteId) =>
        Effect.sync(() => {
          const lower = lowerAsDatabase(prefix)
          // every article of the state once; the answer is cut to `limit`
          return [...state.articles.values()]
            .filter((a) => a.account_id === accountId && (siteId === undefined || a.site_id === siteId))
            .flatMap((a) => (a.id.startsWith(prefix) ? [{ a, byId: 0 }] : lowerAsDatabase(a.title).startsWith(lower) ? [{ a, byId: 1 }] : []))
            .sort((x, y) => x.byId - y.byId || (x.byId === 0 ? byId(x.a, y.a) : byCodePoint(x.a.title, y.a.title) || byId(x.a, y.a)))
            .slice(0, limit)
            .map(({ a }) => ({ id: a.id, title: a.title }))
        }),
      get: (accountId, articleId) => {
        const a = state.articles.get(articleId)
        return a && a.account_id === accountId ? Effect.succeed(a) : Effect.fail(new NotFound({ resource: "article", id: articleId }))
      },
      locate: (articleId) =>
        Effect.sync(() => {
          const a = state.articles.get(articleId)
          return a ? Option.some({ account_id: a.account_id, site_id: a.site_id }) : Option.none()
        }),
    }),
    Layer.succeed(RewriteLedger, {
      find: (rewriteId) => Effect.sync(() => Option.fromUndefinedOr(state.rewrites.get(rewriteId))),
      record: (entry) =>
        Effect.sync(() => {
          if (!state.rewrites.has(entry.rewrite_id)) state.rewrites.set(entry.rewrite_id, entry)
        }),
    }),
    Layer.succeed(BacklinkRepository, {
      list: (accountId, filter, slice) =>
        Effect.sync(() =>
          sliceOf(
            [...state.backlinks.values()]
              .filter((b) => b.account_id === accountId && b.site_id === filter.siteId && inRange(b.date_acquired, filter.fromDate, filter.toDate))
              .sort((a, b) => (a.date_acquired !== b.date_acquired ? (a.date_acquired < b.date_acquired ? 1 : -1) : byId(a, b))),
            slice,
          ),
        ),
    }),
    Layer.succeed(RevisionRepository, {
      // (without bodies, as the database's list)
      list: (accountId, articleId, slice) =>
        Effect.sync(() => {
          const { items, total } = sliceOf(
            [...state.revisions.values()].filter((r) => r.account_id === accountId && r.article_id === articleId).sort((a, b) => b.number - a.number),
            slice,
          )
          return { items: items.map(({ body: _, ...summary }) => summary), total }
        }),
      get: (accountId, articleId, number) => {
        const r = state.revisions.get(`${articleId}#${number}`)
        return r && r.account_id === accountId ? Effect.succeed(r) : Effect.fail(new NotFound({ resource: "revision", id: `${articleId}/${number}` }))
      },
    }),
    Layer.succeed(ActivityLog, {
      record: (entry, refusedBy) =>
        Effect.sync(() => {
          const written = entryToWrite(refusals, entry, refusedBy)
          const key = `${written.entry.channel}#${written.entry.request_id}`
          if (written.summary) {
            // a refused call past its source's budget adds one to its minute's summary entry
            const at = summaries.get(key)
            const summary = at === undefined ? undefined : state.activity[at]
            if (at !== undefined && summary !== undefined) {
              state.activity[at] = { ...summary, count: summary.count + 1 }
              return
            }
            summaries.set(key, state.activity.length)
          } else if (state.activityRequestIds.has(key)) return
          state.activityRequestIds.add(key)
          state.activity.push(written.entry)
        }),
      folds: (refusedBy, atMs) => refusals.folds(refusedBy, atMs),
      list: (accountId, filter, slice) =>
        Effect.sync(() =>
          sliceOf(
            state.activity
              .filter(
                (e) =>
                  e.account_id === accountId &&
                  (filter.channel === undefined || e.channel === filter.channel) &&
                  (filter.articleId === undefined || e.article_id === filter.articleId) &&
                  (filter.outcome === undefined || (filter.outcome === "error") === (e.error_code !== null)) &&
                  (filter.actions === undefined || filter.actions.includes(e.action.split(" “")[0]!)) &&
                  inRange(e.at, filter.from, filter.to),
              )
              .sort((a, b) => (a.at !== b.at ? (a.at < b.at ? 1 : -1) : byId(b, a))),
            slice,
          ),
        ),
    }),
  )
}

const websiteOf = (state: MemoryState, siteId: string) => {
  const s = state.sites.get(siteId)
  if (!s) return undefined
  let articleCount = 0
  for (const a of state.articles.values()) if (a.site_id === siteId) articleCount++
  let backlinkCount = 0
  for (const b of state.backlinks.values()) if (b.site_id === siteId) backlinkCount++
  return { id: s.id, name: s.name, url: s.url, created_at: s.created_at, article_count: articleCount, backlink_count: backlinkCount }
}
