import { Effect } from "effect"
import { DailyEditLimit, PreconditionFailed, ProtectedLinkChanged } from "../errors.ts"
import { analyzeArticleHtml, compareProtectedBlocks, extractProtectedBlocks, rememberProtectedBlocks } from "../html/index.ts"
import { ArticleWriter } from "../ports/ArticleWriter.ts"
import { ArticleRepository } from "../ports/Repositories.ts"
import type { ArticleRecord } from "../ports/records.ts"
import type { UpdateArticleBody } from "../schema/writes.ts"
import type { UpdateArticleResult } from "../schema/resources.ts"
import type { Caller } from "./Caller.ts"
import { editBudget, editsRemaining, makeChange } from "./editContext.ts"
import { requireWriteScope } from "./guards.ts"
import { articleView, revisionSummaryView } from "./views.ts"

/** Options of an article edit. */
export interface UpdateOptions {
  /** Run every check, write nothing, count nothing. */
  readonly dryRun: boolean
  /** Apply only if the article is still at this revision (If-Match / if_revision). */
  readonly expectedRevision?: number | undefined
}

/** The answer of an edit, with the edits left today for `Edit-Limit-Remaining`. */
export interface UpdateOutcome {
  readonly result: UpdateArticleResult
  readonly editsRemaining: number
}

/**
 * Edits an article's title and/or body: the body is sanitised like the editor does, every
 * protected block of the current body must survive unchanged, and a real change becomes one
 * revision tagged with the caller's origin, written atomically with its activity entry and
 * counted against the daily edit limit. An edit identical to the current article writes nothing.
 */
export const updateArticle = (caller: Caller, articleId: string, input: UpdateArticleBody, options: UpdateOptions) =>
  Effect.gen(function* () {
    yield* requireWriteScope(caller)
    // Sanitising is the expensive part; it needs no lock, so it happens before the article is locked.
    const proposed =
      input.body === undefined
        ? undefined
        : yield* Effect.tap(analyzeArticleHtml(input.body), (a) => Effect.sync(() => rememberProtectedBlocks(a.html, a.blocks)))
    const title = input.title?.trim()
    const report = proposed?.report ?? { changed: false, removed: [] }

    const checkPrecondition = (current: ArticleRecord) =>
      options.expectedRevision !== undefined && options.expectedRevision !== current.revision
        ? Effect.fail(new PreconditionFailed({ expected: options.expectedRevision, current: current.revision }))
        : Effect.void

    const violationsAgainst = (current: ArticleRecord) =>
      proposed === undefined ? [] : compareProtectedBlocks(extractProtectedBlocks(current.body), proposed.blocks)

    // One decision for the real call and its dry run, so a dry run answers what the call would:
    // the new state, null when nothing would change, or the error the call would fail with.
    const decide = (current: ArticleRecord) =>
      Effect.gen(function* () {
        yield* checkPrecondition(current)
        const violations = violationsAgainst(current)
        if (violations.length > 0) return yield* new ProtectedLinkChanged({ blocks: violations })
        const next = {
          title: title ?? current.title,
          body: proposed?.html ?? current.body,
          word_count: proposed?.wordCount ?? current.word_count,
        }
        return next.title === current.title && next.body === current.body ? null : next
      })

    const budget = yield* editBudget
    if (options.dryRun) {
      // Two independent reads: the article and today's edit count, side by side.
      const [current, left] = yield* Effect.all([(yield* ArticleRepository).get(caller.accountId, articleId), editsRemaining(caller)], {
        concurrency: 2,
      })
      const next = yield* decide(current)
      if (next !== null && left <= 0) {
        return yield* new DailyEditLimit({ limit: budget.limit, retryAfterSeconds: budget.retryAfterSeconds })
      }
      const result: UpdateArticleResult = {
        article: articleView(next === null ? current : { ...current, ...next }),
        revision: null,
        sanitized: report,
        dry_run: true,
      }
      return { result, editsRemaining: left } satisfies UpdateOutcome
    }

    const { current, committed } = yield* (yield* ArticleWriter).change(caller.accountId, articleId, budget, (current) =>
      Effect.gen(function* () {
        const next = yield* decide(current)
        if (next === null) return null
        return yield* makeChange(caller, current, {
          ...next,
          featured_image: current.featured_image,
          reason: input.reason ?? null,
          restored_from: null,
        })
      }),
    )
    const result: UpdateArticleResult = committed
      ? { article: articleView(committed.article), revision: revisionSummaryView(committed.revision), sanitized: report }
      : { article: articleView(current), revision: null, sanitized: report }
    return {
      result,
      editsRemaining: committed ? committed.editsRemaining : yield* editsRemaining(caller),
    } satisfies UpdateOutcome
  })
