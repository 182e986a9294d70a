import { Context, Effect } from "effect"
import { RateLimited } from "../errors.ts"
import { pageOf, resolvePaging } from "../policy/pagination.ts"
import { searchQueryText, snippetHeadline, snippetOf } from "../policy/search.ts"
import { resolveDateRange } from "../policy/time.ts"
import { Settings } from "../ports/Platform.ts"
import { ArticleRepository, SiteRepository } from "../ports/Repositories.ts"
import type { SearchArticlesQuery } from "../schema/queries.ts"
import type { SearchHit } from "../schema/resources.ts"
import type { Caller } from "./Caller.ts"
import { articleListView } from "./views.ts"

/**
 * How many searches one account may have the storage run at once (an instance's count): a search
 * is the heaviest statement a read sends (a page of 100 hits' headlines, about a second of the
 * database's CPU at worst), and an MCP batch runs its calls at once, so that one account's batch of
 * up to 60 searches could take every connection of the pool (10) while other accounts' requests waited.
 * Past it that account's search is refused 429 `rate_limited`, `Retry-After: 1`; nobody else's.
 */
export const SEARCHES_AT_ONCE = 4

const searchesRunning = new Map<string, number>()

/** Searches of each account running now, for tests that count them. */
export const runningSearches = (accountId: string): number => searchesRunning.get(accountId) ?? 0

/**
 * `effect` as one of the account's searches at once, or RateLimited past `SEARCHES_AT_ONCE`. The
 * place is taken and its release installed in one uninterruptible step: an interruption between
 * the two (a fiber yields between any two steps) would keep the place for the process's life.
 */
const asOneOfTheSearches = <A, E, R>(accountId: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | RateLimited, R> =>
  Effect.uninterruptibleMask((restore): Effect.Effect<A, E | RateLimited, R> => {
    const running = searchesRunning.get(accountId) ?? 0
    if (running >= SEARCHES_AT_ONCE) {
      return Effect.fail(new RateLimited({ limit: SEARCHES_AT_ONCE, retryAfterSeconds: 1, counted: "searches of this account at once" }))
    }
    searchesRunning.set(accountId, running + 1)
    return Effect.ensuring(
      restore(effect),
      Effect.sync(() => {
        const left = (searchesRunning.get(accountId) ?? 1) - 1
        if (left <= 0) searchesRunning.delete(accountId)
        else searchesRunning.set(accountId, left)
      }),
    )
  })

/**
 * Searches the caller's articles (all sites, or `site_id`'s; another account's site is NotFound),
 * best first, each hit with its snippet; `snippets: false` for a caller that shows none (the
 * research connector's `search`): the storage then marks no body (PostgreSQL's `ts_headline` reads
 * each hit's whole body again), and each snippet is empty.
 */
export const searchArticles = (caller: Caller, query: SearchArticlesQuery, options: { readonly snippets?: boolean } = {}) =>
  Effect.contextWith((services: Context.Context<Settings | ArticleRepository | SiteRepository>) => {
    const q = searchQueryText(query.q)
    return Effect.flatMap(resolvePaging(query, Context.get(services, Settings).limits.maxPerPage), (paging) =>
      Effect.flatMap(resolveDateRange(query), (range) =>
        Effect.flatMap(
          asOneOfTheSearches(caller.accountId, Context.get(services, ArticleRepository).search(
            caller.accountId,
            {
              query: q,
              headlines: options.snippets !== false,
              ...range,
              ...(query.site_id !== undefined ? { siteId: query.site_id } : {}),
              ...(query.status !== undefined ? { status: query.status } : {}),
            },
            paging.slice,
          )),
          ({ items, total }) => {
            const page = pageOf(
              items.map((hit): SearchHit => ({ ...articleListView(hit), snippet: options.snippets === false ? "" : snippetOf(snippetHeadline(hit, q)) })),
              paging.page,
              paging.perPage,
              total,
            )
            // only an empty answer leaves open whose site this is
            return total === 0 && query.site_id !== undefined
              ? Effect.as(Context.get(services, SiteRepository).require(caller.accountId, query.site_id), page)
              : Effect.succeed(page)
          },
        ),
      ),
    )
  })
