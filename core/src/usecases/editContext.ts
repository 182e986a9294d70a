import { Effect } from "effect"
import { secondsToNextUtcMidnight, toCalendarDate, toTimestamp } from "../policy/time.ts"
import { ArticleWriter } from "../ports/ArticleWriter.ts"
import { Clock, Ids, Settings } from "../ports/Platform.ts"
import type { ArticleChange, ArticleRecord, EditBudget } from "../ports/records.ts"
import type { FeaturedImage } from "../schema/resources.ts"
import type { Origin } from "../schema/common.ts"
import type { Caller } from "./Caller.ts"
import { activityFor } from "./views.ts"

/** The origin a change made by this caller is tagged with. */
export const originOf = (caller: Caller): Origin => {
  switch (caller.channel) {
    case "api":
      return "api"
    case "mcp":
      return "mcp"
    case "web":
      return "editor"
    case "platform":
      return "rewrite"
  }
}

/** Today's edit budget for the caller's account. */
export const editBudget = Effect.gen(function* () {
  const now = yield* (yield* Clock).now
  const { limits } = yield* Settings
  const budget: EditBudget = { day: toCalendarDate(now), limit: limits.dailyEdits, retryAfterSeconds: secondsToNextUtcMidnight(now) }
  return budget
})

/**
 * The budget a change by this caller is counted against: the account's daily edit limit, or
 * none for the platform's own jobs (the rewrite job does not use up the customer's edits).
 */
export const editBudgetFor = (caller: Caller): Effect.Effect<EditBudget | null, never, Clock | Settings> =>
  caller.channel === "platform" ? Effect.succeed(null) : editBudget

/** Edits the caller's account may still make today, without counting one. */
export const editsRemaining = (caller: Caller) =>
  Effect.gen(function* () {
    const budget = yield* editBudget
    const used = yield* (yield* ArticleWriter).editsUsed(caller.accountId, budget.day)
    return Math.max(0, budget.limit - used)
  })

/** Builds the change record for a new article state made by the caller. */
export const makeChange = (
  caller: Caller,
  current: ArticleRecord,
  next: {
    readonly title: string
    readonly body: string
    readonly word_count: number
    readonly featured_image: FeaturedImage
    readonly reason: string | null
    readonly restored_from: number | null
  },
) =>
  Effect.gen(function* () {
    const now = yield* (yield* Clock).now
    const ids = yield* Ids
    const change: ArticleChange = {
      title: next.title,
      body: next.body,
      word_count: next.word_count,
      featured_image: next.featured_image,
      updated_at: toTimestamp(now),
      ...(caller.rewriteId !== undefined ? { rewrite_id: caller.rewriteId } : {}),
      ...(caller.idempotency !== undefined ? { idempotency: caller.idempotency } : {}),
      revision: {
        id: yield* ids.make("rev"),
        origin: originOf(caller),
        reason: next.reason,
        actor: caller.actor,
        restored_from: next.restored_from,
        created_at: toTimestamp(now),
      },
      activity: activityFor(caller, {
        id: yield* ids.make("act"),
        nowMs: now,
        ok: true,
        httpStatus: 200,
        siteId: current.site_id,
        articleId: current.id,
      }),
    }
    return change
  })
