import { Effect } from "effect"
import { DailyEditLimit, EditConflict, InvalidRequest, type NotFound, PayloadTooLarge, ProtectedLinkChanged, type Unavailable } from "../errors.ts"
import { compareProtectedBlocks, extractProtectedBlocks, knownProtectedBlocks, MAX_PARSED_NODES, rememberProtectedBlocks } from "../html/index.ts"
import { isRefusal } from "../html/sanitizeArticleHtml.ts"
import type { AnalyzedHtml } from "../html/sanitizeArticleHtml.ts"
import { HtmlAnalyzer } from "../ports/HtmlAnalyzer.ts"
import { ArticleWriter } from "../ports/ArticleWriter.ts"
import { ArticleRepository, RevisionRepository } from "../ports/Repositories.ts"
import type { ArticleRecord, RevisionRecord } from "../ports/records.ts"
import type { MergeSide } from "../html/mergeArticle.ts"
import { MAX_BODY_BYTES, MAX_REASON_LENGTH, type UpdateArticleBody } from "../schema/writes.ts"
import type { UpdateArticleResult } from "../schema/resources.ts"
import type { Caller } from "./Caller.ts"
import { editBudgetFor, editsRemaining, makeChange, originOf } from "./editContext.ts"
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
  /**
   * Apply only if the article is at none of these revisions (If-None-Match, compared weakly);
   * `*` never applies, the article existing. Checked after `expectedRevisions`, on the revision
   * the edit replaces. Absent: no condition.
   */
  readonly unexpectedRevisions?: ReadonlyArray<number> | "*" | undefined
}

/** The answer of an edit, with the edits left today for `Edit-Limit-Remaining`. */
export interface UpdateOutcome {
  readonly result: UpdateArticleResult
  readonly editsRemaining: number
  /**
   * Set when nothing changed because this very edit was found saved already by its caller (sent
   * again on its base, `savedAlready`), not because it is the article as it is: a page says so.
   * Not in the answer's body (`UpdateArticleResult`): there it is `revision: null` either way.
   */
  readonly savedAlready?: true
}

/**
 * Edits an article's title and/or body: the body is sanitised like the editor does, every
 * protected block of the current body must survive unchanged, and a real change becomes one
 * revision tagged with the caller's origin, written atomically with its activity entry and
 * counted against the daily edit limit. An edit identical to the current article writes nothing.
 *
 * With `base_revision` behind the current revision, the edit is first merged three ways with
 * what changed since (`mergeArticle`): a clean merge is saved like any edit, with `merge` in the
 * answer and the reason saying so; a conflict is an EditConflict listing it, and writes nothing.
 * The merge is made against one revision and written only if the article is still there; if
 * another writer came in between, it is made again (a few times, then EditConflict).
 */
export const updateArticle = (caller: Caller, articleId: string, input: UpdateArticleBody, options: UpdateOptions) =>
  input.base_revision === undefined ? applyUpdate(caller, articleId, input, options) : mergeUpdate(caller, articleId, input, input.base_revision, options)

/** An outcome typed as one (its optional `savedAlready` readable on every path's answer). */
const outcomeOf = (outcome: UpdateOutcome): UpdateOutcome => outcome

/** How often a merge is made again when another writer changed the article between the read and the write. */
const MAX_MERGE_ATTEMPTS = 3

const mergedReason = (reason: string | undefined, theirs: number): string => {
  const note = `merged with revision ${theirs}`
  if (reason === undefined || reason.trim() === "") return `Merged with revision ${theirs}`
  const room = MAX_REASON_LENGTH - note.length - 3
  const kept = [...reason]
  return `${kept.length > room ? `${kept.slice(0, room - 1).join("")}…` : reason} (${note})`
}

/**
 * What a conflict says when a side changed too many blocks to compare them block by block within
 * the merge's budget of work (`ArticleMerge.coarse`): its changed middle was one part, so a
 * conflict there may cover blocks only one side changed.
 */
const COARSE_MERGE_NOTE =
  " The two edits changed too many blocks to compare them block by block within the comparison's budget of work, so the blocks between the first and the last a side changed were compared as one part: a conflict there may hold blocks only one side changed. Sending fewer changes at a time merges them block by block."

/** How many of the newest revisions since an edit's base are read to find that edit saved already by its caller. */
const MAX_REPEAT_LOOKBACK = 20
/** How many of the caller's own revisions among them are compared (two bodies and a merge each). */
const MAX_REPEAT_CANDIDATES = 3

/**
 * Whether this very edit (mine, written against `base`) was saved already by the same caller
 * (its actor, through its channel), as one of the revisions since `base`: a retried request, a
 * form sent twice, the back button and Save again. Revision R is that save when it holds what merging mine with revision R - 1 made
 * (mine itself when R - 1 is the base). Merged again with the newest revision, the edit would be
 * merged with itself: a conflict with its own text beside a neighbour's change (where taking
 * "mine" would erase that change), or a change undone since redone over whoever undid it.
 */
const savedAlready = (caller: Caller, articleId: string, base: RevisionRecord, current: number, mine: MergeSide) =>
  Effect.gen(function* () {
    const revisions = yield* RevisionRepository
    const analyzer = yield* HtmlAnalyzer
    const { items } = yield* revisions.list(caller.accountId, articleId, { offset: 0, limit: Math.min(MAX_REPEAT_LOOKBACK, current - base.number) })
    // (a title mine changed is the title of the revision that saved it)
    const own = items
      .filter((r) => r.number > base.number && r.restored_from === null && r.origin === originOf(caller) && r.actor.type === caller.actor.type && r.actor.id === caller.actor.id)
      .filter((r) => mine.title === base.title || r.title === mine.title)
      .slice(0, MAX_REPEAT_CANDIDATES)
    for (const summary of own) {
      const saved = yield* revisions.get(caller.accountId, articleId, summary.number)
      if (summary.number === base.number + 1) {
        if (saved.title === mine.title && saved.body === mine.body) return true
        continue
      }
      const before = yield* revisions.get(caller.accountId, articleId, summary.number - 1)
      const merge = yield* analyzer.merge({ title: base.title, body: base.body }, { title: before.title, body: before.body }, mine, caller.accountId)
      if (merge.title !== saved.title || merge.body === null) continue
      const merged = yield* analyzer.analyze(merge.body, caller.accountId)
      if (merged.html === saved.body) return true
    }
    return false
  }).pipe(Effect.orElseSucceed(() => false))

const mergeUpdate = (caller: Caller, articleId: string, input: UpdateArticleBody, base: number, options: UpdateOptions) =>
  Effect.gen(function* () {
    yield* requireWriteScope(caller)
    if (options.expectedRevisions !== undefined) {
      return yield* new InvalidRequest({
        detail: "base_revision and If-Match (or if_revision) cannot be sent together: base_revision merges with newer changes, a precondition refuses them. Send one.",
        errors: [{ path: "base_revision", message: "Not together with If-Match or if_revision" }],
      })
    }
    const articles = yield* ArticleRepository
    const revisions = yield* RevisionRepository
    const analyzer = yield* HtmlAnalyzer
    const { base_revision: _, ...fields } = input
    // The article first, as without base_revision: a body sent for a missing (or another
    // account's) article is a 404 that costs no HTML work.
    const first = yield* articles.get(caller.accountId, articleId)
    // Mine is sanitised once, and only when a merge needs it (the merge compares sanitised
    // bodies block by block); at the current revision the edit is an edit like any other.
    let mine: AnalyzedHtml | undefined
    const mineOnce = () =>
      input.body === undefined || mine !== undefined
        ? Effect.succeed(mine)
        : Effect.map(analyzer.analyze(input.body, caller.accountId), (analyzed) => (mine = analyzed))
    const attempt = (n: number): Effect.Effect<UpdateOutcome, Effect.Error<ReturnType<typeof applyUpdate>> | EditConflict | InvalidRequest | NotFound | Unavailable, Effect.Services<ReturnType<typeof applyUpdate>> | RevisionRepository> =>
      Effect.gen(function* () {
        const current = n === 0 ? first : yield* articles.get(caller.accountId, articleId)
        if (base > current.revision) {
          return yield* new InvalidRequest({
            detail: `base_revision ${base} is newer than the article, which is at revision ${current.revision}.`,
            errors: [{ path: "base_revision", message: `Expected at most ${current.revision}, the current revision` }],
          })
        }
        // If-None-Match naming the revision to merge with: refused before any merging work.
        yield* requireRevision(undefined, current.revision, options.unexpectedRevisions)
        if (base === current.revision) return yield* applyUpdate(caller, articleId, fields, { ...options, expectedRevisions: [current.revision] })
        const baseRevision = yield* revisions.get(caller.accountId, articleId, base)
        const mine = yield* mineOnce()
        const mineSide = { title: fields.title?.trim() ?? baseRevision.title, body: mine?.html ?? baseRevision.body }
        // Saved already (sent again): nothing to change, whatever was saved since stays. The body
        // sent was sanitised all the same: the answer says what was removed, as the first one did.
        if (mine !== undefined && (yield* savedAlready(caller, articleId, baseRevision, current.revision, mineSide))) {
          const unchanged = yield* applyUpdate(caller, articleId, { title: current.title }, { ...options, expectedRevisions: [current.revision] })
          return { ...unchanged, result: { ...unchanged.result, sanitized: mine.report }, savedAlready: true } satisfies UpdateOutcome
        }
        const merge = yield* analyzer.merge(
          { title: baseRevision.title, body: baseRevision.body },
          { title: current.title, body: current.body },
          mineSide,
          caller.accountId,
        )
        if (merge.title === null || merge.body === null) {
          return yield* new EditConflict({
            detail:
              `Revision ${current.revision} changed ${merge.conflicts.length === 1 ? "a part" : `${merge.conflicts.length} parts`} of the article that your edit (written against revision ${base}) changed differently; nothing was changed.` +
              (merge.coarse ? COARSE_MERGE_NOTE : "") +
              ` Each conflict shows base, theirs and mine: settle them and send the result with base_revision ${current.revision}.`,
            conflicts: merge.conflicts,
          })
        }
        // A title-only edit changed no block: the merged body is theirs, the current one, and is
        // not sent again (a stored body over today's input limits stays as it is, as it does for
        // a title-only edit without base_revision).
        const outcome = yield* applyUpdate(
          caller,
          articleId,
          { title: merge.title, ...(fields.body === undefined ? {} : { body: merge.body }), reason: mergedReason(fields.reason, current.revision) },
          { ...options, expectedRevisions: [current.revision] },
        ).pipe(
          // Mine alone was within a body's limits (sanitised above): the merged body is over them.
          Effect.catchTag("PayloadTooLarge", () =>
            Effect.fail(
              new PayloadTooLarge({
                detail:
                  `Your edit merged with the changes of revision ${current.revision} makes a body over a body's limits (${MAX_BODY_BYTES} bytes of sanitised HTML, ` +
                  `${MAX_PARSED_NODES} elements and attributes), though your edit alone is within them; nothing was changed. Send less, or read revision ${current.revision} and send your edit with base_revision ${current.revision}.`,
              }),
            ),
          ),
        )
        return {
          ...outcome,
          result: {
            ...outcome.result,
            sanitized: mine?.report ?? { changed: false, removed: [] },
            merge: { base, theirs: current.revision, merged_units: merge.mergedUnits },
          },
        } satisfies UpdateOutcome
      }).pipe(
        // The caller's If-None-Match is the answer; the merge's own precondition (another writer came in) is tried again.
        Effect.catchTag("PreconditionFailed", (error) =>
          error.noneMatch !== undefined
            ? Effect.fail(error)
            : n + 1 < MAX_MERGE_ATTEMPTS
            ? attempt(n + 1)
            : Effect.fail(new EditConflict({ detail: "The article kept changing while your edit was merged; nothing was changed. Retry." })),
        ),
      )
    return yield* attempt(0)
  })

const applyUpdate = (caller: Caller, articleId: string, input: Omit<UpdateArticleBody, "base_revision">, options: UpdateOptions) =>
  Effect.gen(function* () {
    yield* requireWriteScope(caller)
    const articles = yield* ArticleRepository
    const analyzer = yield* HtmlAnalyzer
    const title = input.title?.trim()

    const checkPrecondition = (current: ArticleRecord) => requireRevision(options.expectedRevisions, current.revision, options.unexpectedRevisions)

    // The article first (it exists, it is the caller's, it is at the expected revision): a body
    // sent for any other article costs no HTML work. A dry run also needs today's edit count, and
    // so does a body sent by a caller with a budget (see below).
    const budget = yield* editBudgetFor(caller)
    const [found, left] = yield* Effect.all(
      [articles.get(caller.accountId, articleId), options.dryRun || (budget !== null && input.body !== undefined) ? editsRemaining(caller) : Effect.succeed(undefined)],
      { concurrency: 2 },
    )
    yield* checkPrecondition(found)
    // No edits left today: a body other than the current one, or the current one with another
    // title, is refused before it is sanitised (an account past its limit cannot make the service
    // parse megabytes); the current body and title sent again change nothing, answered below.
    const changesTitle = title !== undefined && title !== found.title
    if (budget !== null && left !== undefined && left <= 0 && ((input.body !== undefined && input.body !== found.body) || changesTitle)) {
      return yield* new DailyEditLimit({ limit: budget.limit, retryAfterSeconds: budget.retryAfterSeconds })
    }

    const analyze = (html: string) =>
      Effect.tap(analyzer.analyze(html, caller.accountId), (a) => Effect.sync(() => rememberProtectedBlocks(a.html, a.blocks)))
    // Sanitising is the expensive part: it needs no lock, so it happens before the article is
    // locked, wherever the analyzer runs it (off the event loop on a server).
    const proposed = input.body === undefined ? undefined : yield* analyze(input.body)
    const report = proposed?.report ?? { changed: false, removed: [] }
    // The current body's blocks the same way, unless they are known already. A body stored
    // before today's input limits is refused by the analyzer; its blocks are then read with the
    // stored form's own bound (readStored, off the event loop too), so such an article stays editable.
    const foundBlocks =
      proposed === undefined
        ? []
        : (knownProtectedBlocks(found.body) ??
          (yield* analyze(found.body).pipe(
            Effect.map((a) => a.blocks),
            Effect.catchIf(isRefusal, () => Effect.map(analyzer.readStored(found.body, caller.accountId), (body) => body.blocks)),
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

    if (options.dryRun && left !== undefined) {
      const current = found
      const next = yield* decide(current)
      if (next !== null && budget !== null && left <= 0) {
        return yield* new DailyEditLimit({ limit: budget.limit, retryAfterSeconds: budget.retryAfterSeconds })
      }
      const result: UpdateArticleResult = {
        article: articleView({ ...current, ...next }),
        revision: null,
        sanitized: report,
        dry_run: true,
      }
      return outcomeOf({ result, editsRemaining: left })
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
    return outcomeOf({
      result,
      editsRemaining: committed?.editsRemaining ?? (yield* editsRemaining(caller)),
    })
  })
