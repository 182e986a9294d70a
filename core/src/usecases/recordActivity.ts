import { Effect } from "effect"
import { Clock, Ids } from "../ports/Platform.ts"
import { ActivityLog } from "../ports/Repositories.ts"
import type { Caller } from "./Caller.ts"
import { activityFor } from "./views.ts"

/**
 * Records the outcome of a call in the activity log. A change already wrote its entry in its own
 * transaction; the log is idempotent by request id, so recording again is harmless.
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
    const now = yield* (yield* Clock).now
    const id = yield* (yield* Ids).make("act")
    yield* (yield* ActivityLog).record(activityFor(caller, { ...outcome, id, nowMs: now }))
  })
