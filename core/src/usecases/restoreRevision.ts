import { Effect } from "effect"
import { DailyEditLimit, ProtectedLinkChanged } from "../errors.ts"
import { compareProtectedBlocks, extractProtectedBlocks, knownProtectedBlocks, rememberProtectedBlocks } from "../html/index.ts"
import { ArticleWriter } from "../ports/ArticleWriter.ts"
import { HtmlAnalyzer } from "../ports/HtmlAnalyzer.ts"
import { ArticleRepository, RevisionRepository } from "../ports/Repositories.ts"
import type { Caller } from "./Caller.ts"
import { editBudgetFor, editsRemaining, makeChange } from "./editContext.ts"
import { requireRevision, requireWriteScope } from "./guards.ts"
import { articleView, revisionSummaryView } from "./views.ts"
import { decodeInput } from "../schema/decode.ts"
import { Reason } from "../schema/writes.ts"

/** Options of a restore. */
export interface RestoreOptions {
  /** Restore only if the article is still at one of these revisions (If-Match / if_revision; see `UpdateOptions`). */
  readonly expectedRevisions?: ReadonlyArray<number> | undefined
  /** Restore only if the article is at none of these revisions (If-None-Match; see `UpdateOptions`). */
  readonly unexpectedRevisions?: ReadonlyArray<number> | "*" | undefined
}

/**
 * Restores an earlier revision as a new revision (`restored_from` set, origin of the caller's
 * channel: `editor` from the pages, `api`, `mcp`), refused with ProtectedLinkChanged when it
 * would remove or change a protected block of the current body, counted against the daily edit
 * limit like any change. Restoring the state the article is already in writes nothing. The one
 * restore of the pages, the REST API and the MCP tool. Both bodies are read (protected blocks,
 * word count) where the HtmlAnalyzer runs, off the event loop on a server, before the article
 * is locked; the precondition is checked first, so a stale restore costs no HTML work.
 */
export const restoreRevision = (caller: Caller, articleId: string, number: number, reason: string | undefined, options: RestoreOptions = {}) =>
  Effect.gen(function* () {
    yield* requireWriteScope(caller)
    if (reason !== undefined) yield* decodeInput(Reason, reason, "Restore", "reason")
    const target = yield* (yield* RevisionRepository).get(caller.accountId, articleId, number)
    const found = yield* (yield* ArticleRepository).get(caller.accountId, articleId)
    yield* requireRevision(options.expectedRevisions, found.revision, options.unexpectedRevisions)
    const budget = yield* editBudgetFor(caller)
    const sameAsFound =
      found.title === target.title && found.body === target.body && JSON.stringify(found.featured_image) === JSON.stringify(target.featured_image)
    // No edits left today: a restore that would change the article is refused before either body
    // is read (an account past its limit cannot make the service parse them); restoring the state
    // the article is in is not a change and is answered below.
    if (budget !== null && !sameAsFound && (yield* editsRemaining(caller)) <= 0) {
      return yield* new DailyEditLimit({ limit: budget.limit, retryAfterSeconds: budget.retryAfterSeconds })
    }
    const analyzer = yield* HtmlAnalyzer
    const read = (html: string) => Effect.tap(analyzer.readStored(html, caller.accountId), (body) => Effect.sync(() => rememberProtectedBlocks(html, body.blocks)))
    const targetBody = yield* read(target.body)
    const foundBlocks = knownProtectedBlocks(found.body) ?? (yield* read(found.body)).blocks
    const { current, committed } = yield* (yield* ArticleWriter).change(caller.accountId, articleId, budget, (current) =>
      Effect.gen(function* () {
        yield* requireRevision(options.expectedRevisions, current.revision, options.unexpectedRevisions)
        // A body that changed since it was read (a race) is read here, in the calling thread.
        const currentBlocks = current.body === found.body ? foundBlocks : extractProtectedBlocks(current.body)
        const violations = compareProtectedBlocks(currentBlocks, targetBody.blocks)
        if (violations.length > 0) return yield* new ProtectedLinkChanged({ blocks: violations })
        if (
          current.title === target.title &&
          current.body === target.body &&
          JSON.stringify(current.featured_image) === JSON.stringify(target.featured_image)
        ) return null
        return yield* makeChange(caller, current, {
          title: target.title,
          body: target.body,
          word_count: targetBody.wordCount,
          featured_image: target.featured_image,
          reason: reason ?? `Restored revision ${number}`,
          restored_from: number,
        })
      }),
    )
    return {
      result: committed
        ? { article: articleView(committed.article), revision: revisionSummaryView(committed.revision) }
        : { article: articleView(current), revision: null },
      editsRemaining: committed?.editsRemaining ?? (yield* editsRemaining(caller)),
    }
  })
