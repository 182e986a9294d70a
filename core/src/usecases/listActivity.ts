import { Effect } from "effect"
import { pageOf, resolvePaging } from "../policy/pagination.ts"
import { resolveDateRange } from "../policy/time.ts"
import { Settings } from "../ports/Platform.ts"
import { ActivityLog } from "../ports/Repositories.ts"
import type { ListActivityQuery } from "../schema/queries.ts"
import type { Caller } from "./Caller.ts"
import { activityView } from "./views.ts"

/**
 * The caller's own account's activity log, newest first; optionally one article's entries, or
 * only successful (`ok`) or only refused/failed (`error`) calls, or only some actions (the web
 * page's filters, e.g. "changes only").
 */
export const listActivity = (
  caller: Caller,
  query: ListActivityQuery & { readonly article_id?: string; readonly outcome?: "ok" | "error"; readonly actions?: ReadonlyArray<string> },
) =>
  Effect.gen(function* () {
    const { limits } = yield* Settings
    const paging = yield* resolvePaging(query, limits.maxPerPage)
    const range = yield* resolveDateRange(query)
    const { items, total } = yield* (yield* ActivityLog).list(
      caller.accountId,
      {
        ...range,
        ...(query.channel !== undefined ? { channel: query.channel } : {}),
        ...(query.article_id !== undefined ? { articleId: query.article_id } : {}),
        ...(query.outcome !== undefined ? { outcome: query.outcome } : {}),
        ...(query.actions !== undefined ? { actions: query.actions } : {}),
      },
      paging.slice,
    )
    return pageOf(items.map(activityView), paging.page, paging.perPage, total)
  })
