import { Effect } from "effect"
import { pageOf, resolvePaging } from "../policy/pagination.ts"
import { Settings } from "../ports/Platform.ts"
import { SiteRepository } from "../ports/Repositories.ts"
import type { ListSitesQuery } from "../schema/queries.ts"
import type { Caller } from "./Caller.ts"

/** Lists the caller's websites, by name then id. */
export const listSites = (caller: Caller, query: ListSitesQuery) =>
  Effect.gen(function* () {
    const { limits } = yield* Settings
    const paging = yield* resolvePaging(query, limits.maxPerPage)
    const sites = yield* SiteRepository
    const { items, total } = yield* sites.list(caller.accountId, paging.slice)
    return pageOf(items, paging.page, paging.perPage, total)
  })
