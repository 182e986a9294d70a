import { Effect } from "effect"
import { pageOf, resolvePaging } from "../policy/pagination.ts"
import { Settings } from "../ports/Platform.ts"
import { ArticleRepository, RevisionRepository } from "../ports/Repositories.ts"
import type { ListRevisionsQuery } from "../schema/queries.ts"
import type { Caller } from "./Caller.ts"
import { revisionSummaryView } from "./views.ts"

/** Lists an article's revisions, newest first, without bodies. */
export const listRevisions = (caller: Caller, articleId: string, query: ListRevisionsQuery) =>
  Effect.gen(function* () {
    const { limits } = yield* Settings
    const paging = yield* resolvePaging(query, limits.maxPerPage)
    yield* (yield* ArticleRepository).get(caller.accountId, articleId)
    const { items, total } = yield* (yield* RevisionRepository).list(caller.accountId, articleId, paging.slice)
    return pageOf(items.map(revisionSummaryView), paging.page, paging.perPage, total)
  })
