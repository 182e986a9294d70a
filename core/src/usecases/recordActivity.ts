import { Effect } from "effect"
import { Clock, Ids } from "../ports/Platform.ts"
import { ActivityLog, ArticleRepository } from "../ports/Repositories.ts"
import type { Caller } from "./Caller.ts"
import { activityFor } from "./views.ts"

/**
 * Records the outcome of a call in the activity log. An entry about an article carries the
 * article's site whenever the article is on the caller's account, refused calls included: when
 * the transport could not tell the site (the call failed before reading the article), it is looked
 * up here; a missing or foreign article, or a database that cannot answer, leaves it null. A change
 * already wrote its entry in its own transaction; the log is idempotent by request id, so
 * recording again is harmless.
 */
export const recordActivity = (
  caller: Caller,
  outcome: {
    readonly ok: boolean
    readonly httpStatus?: number
    readonly errorCode?: string | null
    readonly siteId?: string | null
    readonly articleId?: string | null
  },
) =>
  Effect.gen(function* () {
    const articleId = outcome.articleId ?? null
    const siteId =
      outcome.siteId ??
      (articleId === null || caller.accountId === null
        ? null
        : yield* ArticleRepository.use((articles) => articles.get(caller.accountId, articleId)).pipe(
            Effect.map((article) => article.site_id),
            Effect.orElseSucceed(() => null),
          ))
    const now = yield* (yield* Clock).now
    const id = yield* (yield* Ids).make("act")
    yield* (yield* ActivityLog).record(activityFor(caller, { ...outcome, siteId, id, nowMs: now }))
  })
