import { Context, Effect } from "effect"
import { pageOf, resolvePaging } from "../policy/pagination.ts"
import { searchQueryText } from "../policy/search.ts"
import { resolveDateRange } from "../policy/time.ts"
import { Settings } from "../ports/Platform.ts"
import { ArticleRepository, SiteRepository } from "../ports/Repositories.ts"
import type { ListArticlesQuery } from "../schema/queries.ts"
import type { Caller } from "./Caller.ts"
import { articleListView } from "./views.ts"

/**
 * Lists a website's articles published in a range, newest first (with `q`, those matching it, best
 * first); another account's site is NotFound.
 * Every list request runs it: a chain, not a generator.
 */
export const listArticles = (caller: Caller, siteId: string, query: ListArticlesQuery) =>
  Effect.contextWith((services: Context.Context<Settings | ArticleRepository | SiteRepository>) =>
    Effect.flatMap(resolvePaging(query, Context.get(services, Settings).limits.maxPerPage), (paging) =>
      Effect.flatMap(resolveDateRange(query), (range) =>
        Effect.flatMap(
          // with `q`, the site's articles that match it, best first (no snippets: list items carry none)
          query.q !== undefined
            ? Context.get(services, ArticleRepository).search(
                caller.accountId,
                { query: searchQueryText(query.q), siteId, headlines: false, ...range, ...(query.status !== undefined ? { status: query.status } : {}) },
                paging.slice,
              )
            : Context.get(services, ArticleRepository).list(
                caller.accountId,
                { siteId, ...range, ...(query.status !== undefined ? { status: query.status } : {}) },
                paging.slice,
              ),
          ({ items, total }) => {
            const page = pageOf(items.map(articleListView), paging.page, paging.perPage, total)
            // The list holds only the caller's rows; only an empty one leaves open whose site this is.
            return total === 0 ? Effect.as(Context.get(services, SiteRepository).require(caller.accountId, siteId), page) : Effect.succeed(page)
          },
        ),
      ),
    ),
  )
