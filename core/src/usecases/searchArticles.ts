import { Context, Effect } from "effect"
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
          Context.get(services, ArticleRepository).search(
            caller.accountId,
            {
              query: q,
              headlines: options.snippets !== false,
              ...range,
              ...(query.site_id !== undefined ? { siteId: query.site_id } : {}),
              ...(query.status !== undefined ? { status: query.status } : {}),
            },
            paging.slice,
          ),
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
