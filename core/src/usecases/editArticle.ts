import { Effect } from "effect"
import { EditConflict, EditNotApplicable, InvalidRequest } from "../errors.ts"
import { unstorableEditTexts } from "../policy/textEdits.ts"
import { HtmlAnalyzer } from "../ports/HtmlAnalyzer.ts"
import { ArticleRepository } from "../ports/Repositories.ts"
import { isWithinBodyLimit, type EditArticleBody } from "../schema/writes.ts"
import type { Caller } from "./Caller.ts"
import { requireRevision, requireWriteScope } from "./guards.ts"
import { updateArticle, type UpdateOptions } from "./updateArticle.ts"

/** How often an edit is re-applied when another writer changed the article between the read and the write. */
const MAX_ATTEMPTS = 3

/**
 * Edits an article by find and replace (PATCH, `edit_article`): each `find` must occur exactly
 * once in the current body (as it is served), the edits apply in order, and the resulting body
 * then goes through `updateArticle`, the same pipeline as a full edit (sanitising, protected
 * blocks, precondition, dry run, daily limit, revision, answer). What a full edit's body may not
 * hold, the edits may not bring: text that cannot be stored is refused by its edit
 * (`edits/<index>/replace`), and an edited body over 1 MiB as a full edit's body is (400).
 *
 * The edits are made on the body of one revision and written only if the article is still at
 * that revision, so a change made in between is never overwritten: without the caller's own
 * precondition the edits are made again on the newer body (a few times, then EditConflict);
 * with it (`If-Match` / `if_revision`) the answer is PreconditionFailed, as for a full edit, and
 * so it is when the newer revision is one the caller's `If-None-Match` names.
 */
export const editArticle = (caller: Caller, articleId: string, input: EditArticleBody, options: UpdateOptions) =>
  Effect.gen(function* () {
    yield* requireWriteScope(caller)
    const { edits = [], ...fields } = input
    const unstorable = unstorableEditTexts(edits)
    if (unstorable.length > 0) {
      return yield* new InvalidRequest({ detail: `Edits: ${unstorable.map((e) => `${e.path}: ${e.message}`).join("; ")}.`, errors: unstorable })
    }
    if (edits.length === 0) return yield* updateArticle(caller, articleId, fields, options)
    const articles = yield* ArticleRepository
    const attempt = (n: number): ReturnType<typeof once> =>
      once().pipe(
        Effect.catchTag("PreconditionFailed", (error) =>
          options.expectedRevisions !== undefined || error.noneMatch !== undefined
            ? Effect.fail(error)
            : n + 1 < MAX_ATTEMPTS
              ? attempt(n + 1)
              : Effect.fail(new EditConflict({ detail: "The article kept changing while the edits were applied; nothing was changed. Retry." })),
        ),
      )
    const once = () =>
      Effect.gen(function* () {
        const current = yield* articles.get(caller.accountId, articleId)
        yield* requireRevision(options.expectedRevisions, current.revision, options.unexpectedRevisions)
        // Each edit is a linear search of the body: off the event loop, where the analyzer runs.
        const applied = yield* (yield* HtmlAnalyzer).applyEdits(current.body, edits, caller.accountId)
        if ("mismatches" in applied) return yield* new EditNotApplicable({ errors: applied.mismatches })
        if (!isWithinBodyLimit(applied.text)) {
          return yield* new InvalidRequest({
            detail: "The edits would make the body larger than 1 MiB, the most an article body may hold (as for PUT); nothing was changed.",
            errors: [{ path: "body", message: "The edits would make the body larger than 1 MiB of HTML" }],
          })
        }
        return yield* updateArticle(caller, articleId, { ...fields, body: applied.text }, { ...options, expectedRevisions: [current.revision] })
      })
    return yield* attempt(0)
  })
