import { applyArticleChange, ArticleWriter, DailyEditLimit, EditConflict, NotFound } from "@content-site/core"
import { Effect, Layer, Semaphore } from "effect"
import { MEMORY_COUNTERS_SWEEP_ABOVE, type MemoryState } from "./MemoryState.ts"

/**
 * The memory unit of work: one lock per article serialises changes; the plan runs under it, and
 * the article, revision, activity entry, edit counter and rewrite record are written together only
 * once the plan and the budget check have succeeded, so a failure leaves nothing behind.
 */
export const memoryArticleWriter = (state: MemoryState) => {
  const locks = new Map<string, Semaphore.Semaphore>()
  const lockOf = (articleId: string) => {
    let lock = locks.get(articleId)
    if (!lock) {
      lock = Semaphore.makeUnsafe(1)
      locks.set(articleId, lock)
    }
    return lock
  }
  return Layer.succeed(ArticleWriter, {
    editsUsed: (accountId, day) => Effect.sync(() => state.editCounters.get(`${accountId}#${day}`) ?? 0),
    change: (accountId, articleId, budget, plan) =>
      lockOf(articleId).withPermit(
        Effect.gen(function* () {
          const current = state.articles.get(articleId)
          if (!current || current.account_id !== accountId) return yield* new NotFound({ resource: "article", id: articleId })
          const change = yield* plan(current)
          if (change === null) return { current, committed: null }
          // the budget first, as the database counts the edit before it records the rewrite and the key
          const counterKey = budget === null ? null : `${accountId}#${budget.day}`
          const used = counterKey === null ? 0 : (state.editCounters.get(counterKey) ?? 0)
          if (budget !== null && used >= budget.limit) {
            return yield* new DailyEditLimit({ limit: budget.limit, retryAfterSeconds: budget.retryAfterSeconds })
          }
          if (change.rewrite_id !== undefined && state.rewrites.has(change.rewrite_id)) {
            return yield* new EditConflict({ detail: `The rewrite line ${change.rewrite_id} was applied meanwhile; nothing was changed.` })
          }
          // the call's idempotency key, taken over (its lease ended while the call still ran) by the same
          // request, whose change was applied meanwhile: not made twice (as the database refuses it)
          if (change.idempotency !== undefined) {
            const held = state.idempotency.get(`${accountId}#${change.idempotency.key}`)
            const applied =
              held === undefined || held.fingerprint !== change.idempotency.fingerprint
                ? undefined
                : (held.applied ?? (held.answer !== null && "revision" in held.answer ? held.answer.revision : undefined))
            if (applied !== undefined) {
              return yield* new EditConflict({
                detail: `The request with this idempotency key was applied by another call (article '${applied.articleId}', revision ${applied.number}); nothing was changed now. Read the article for the result.`,
              })
            }
          }
          const { article, revision } = applyArticleChange(current, change)
          if (budget !== null && counterKey !== null) {
            if (used === 0 && state.editCounters.size >= MEMORY_COUNTERS_SWEEP_ABOVE) {
              // counters of past days are never read again (keys end in their day, YYYY-MM-DD)
              for (const key of state.editCounters.keys()) if (key.slice(-10) < budget.day) state.editCounters.delete(key)
            }
            state.editCounters.set(counterKey, used + 1)
          }
          if (change.rewrite_id !== undefined) {
            state.rewrites.set(change.rewrite_id, {
              rewrite_id: change.rewrite_id,
              account_id: accountId,
              article_id: articleId,
              revision: revision.number,
              applied_at: change.updated_at,
            })
          }
          state.articles.set(articleId, article)
          state.revisions.set(`${articleId}#${revision.number}`, revision)
          // the call's pending idempotency key, marked applied with this revision and held by this call
          // (its answer is the one to keep), as the database does in the change's transaction
          if (change.idempotency !== undefined) {
            const keyId = `${accountId}#${change.idempotency.key}`
            const held = state.idempotency.get(keyId)
            if (held !== undefined && held.answer === null && held.fingerprint === change.idempotency.fingerprint) {
              state.idempotency.set(keyId, { ...held, token: change.idempotency.token, applied: { articleId, number: revision.number } })
            }
          }
          if (change.activity) {
            const key = `${change.activity.channel}#${change.activity.request_id}`
            if (!state.activityRequestIds.has(key)) {
              state.activityRequestIds.add(key)
              state.activity.push(change.activity)
            }
          }
          return { current, committed: { article, revision, editsRemaining: budget === null ? null : Math.max(0, budget.limit - used - 1) } }
        }),
      ),
  })
}
