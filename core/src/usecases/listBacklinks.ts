import { Effect } from "effect"
import { pageOf, resolvePaging } from "../policy/pagination.ts"
import { resolveDateSpan } from "../policy/time.ts"
import { Settings } from "../ports/Platform.ts"
import { BacklinkRepository, SiteRepository } from "../ports/Repositories.ts"
import type { ListBacklinksQuery } from "../schema/queries.ts"
import type { Caller } from "./Caller.ts"
import { backlinkView } from "./views.ts"

/** Lists a website's backlinks acquired in a range, newest first. */
export const listBacklinks = (caller: Caller, siteId: string, query: ListBacklinksQuery) =>
  Effect.gen(function* () {
    const { limits } = yield* Settings
    const paging = yield* resolvePaging(query, limits.maxPerPage)
    const dates = yield* resolveDateSpan(query)
    const { items, total } = yield* (yield* BacklinkRepository).list(
      caller.accountId,
      { siteId, ...dates },
      paging.slice,
    )
    // The list holds only the caller's rows; only an empty one leaves open whose site this is.
    if (total === 0) yield* (yield* SiteRepository).require(caller.accountId, siteId)
    return pageOf(items.map(backlinkView), paging.page, paging.perPage, total)
  })
