import { Effect } from "effect"
import { pageOf, resolvePaging } from "../policy/pagination.ts"
import { resolveDateRange } from "../policy/time.ts"
import { Settings } from "../ports/Platform.ts"
import { ArticleRepository, SiteRepository } from "../ports/Repositories.ts"
import type { ListArticlesQuery } from "../schema/queries.ts"
import type { Caller } from "./Caller.ts"
import { articleListView } from "./views.ts"

/** Lists a website's articles published in a range, newest first; another account's site is NotFound. */
export const listArticles = (caller: Caller, siteId: string, query: ListArticlesQuery) =>
  Effect.gen(function* () {
    const { limits } = yield* Settings
    const paging = yield* resolvePaging(query, limits.maxPerPage)
    const range = yield* resolveDateRange(query)
    const { items, total } = yield* (yield* ArticleRepository).list(
      caller.accountId,
      { siteId, ...range, ...(query.status !== undefined ? { status: query.status } : {}) },
      paging.slice,
    )
    // The list holds only the caller's rows; only an empty one leaves open whose site this is.
    if (total === 0) yield* (yield* SiteRepository).require(caller.accountId, siteId)
    return pageOf(items.map(articleListView), paging.page, paging.perPage, total)
  })
