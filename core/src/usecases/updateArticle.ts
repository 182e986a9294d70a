import { Effect } from "effect"
import { DailyEditLimit, ProtectedLinkChanged } from "../errors.ts"
import { compareProtectedBlocks, extractProtectedBlocks, knownProtectedBlocks, rememberProtectedBlocks } from "../html/index.ts"
import { isRefusal } from "../html/sanitizeArticleHtml.ts"
import { HtmlAnalyzer } from "../ports/HtmlAnalyzer.ts"
import { ArticleWriter } from "../ports/ArticleWriter.ts"
import { ArticleRepository } from "../ports/Repositories.ts"
import type { ArticleRecord } from "../ports/records.ts"
import type { UpdateArticleBody } from "../schema/writes.ts"
import type { UpdateArticleResult } from "../schema/resources.ts"
import type { Caller } from "./Caller.ts"
import { editBudgetFor, editsRemaining, makeChange } from "./editContext.ts"
import { requireRevision, requireWriteScope } from "./guards.ts"
import { articleView, revisionSummaryView } from "./views.ts"

/** Options of an article edit. */
export interface UpdateOptions {
  /** Run every check, write nothing, count nothing. */
  readonly dryRun: boolean
  /**
   * Apply only if the article is still at one of these revisions (If-Match, whose tags may name
   * several; if_revision names one); an empty list never holds. Absent: no condition.
   */
  readonly expectedRevisions?: ReadonlyArray<number> | undefined
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
    const articles = yield* ArticleRepository
    const analyzer = yield* HtmlAnalyzer
    const title = input.title?.trim()

    const checkPrecondition = (current: ArticleRecord) => requireRevision(options.expectedRevisions, current.revision)

    // The article first (it exists, it is the caller's, it is at the expected revision): a body
    // sent for any other article costs no HTML work. A dry run also needs today's edit count.
    const [found, left] = yield* Effect.all(
      [articles.get(caller.accountId, articleId), options.dryRun ? editsRemaining(caller) : Effect.succeed(undefined)],
      { concurrency: 2 },
    )
    yield* checkPrecondition(found)

    const analyze = (html: string) =>
      Effect.tap(analyzer.analyze(html, caller.accountId), (a) => Effect.sync(() => rememberProtectedBlocks(a.html, a.blocks)))
    // Sanitising is the expensive part: it needs no lock, so it happens before the article is
    // locked, wherever the analyzer runs it (off the event loop on a server).
    const proposed = input.body === undefined ? undefined : yield* analyze(input.body)
    const report = proposed?.report ?? { changed: false, removed: [] }
    // The current body's blocks the same way, unless they are known already. A body stored
    // before today's input limits is refused by the analyzer; its blocks are then read with the
    // stored form's own bound (extractProtectedBlocks), so such an article stays editable.
    const foundBlocks =
      proposed === undefined
        ? []
        : (knownProtectedBlocks(found.body) ??
          (yield* analyze(found.body).pipe(
            Effect.map((a) => a.blocks),
            Effect.catchIf(isRefusal, () => Effect.sync(() => extractProtectedBlocks(found.body))),
          )))

    const violationsAgainst = (current: ArticleRecord) =>
      proposed === undefined
        ? []
        : compareProtectedBlocks(current.body === found.body ? foundBlocks : extractProtectedBlocks(current.body), proposed.blocks)

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

    const budget = yield* editBudgetFor(caller)
    if (options.dryRun && left !== undefined) {
      const current = found
      const next = yield* decide(current)
      if (next !== null && budget !== null && left <= 0) {
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
      editsRemaining: committed?.editsRemaining ?? (yield* editsRemaining(caller)),
    } satisfies UpdateOutcome
  })
