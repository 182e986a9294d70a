import { Context, type Effect } from "effect"
import type { DailyEditLimit, EditConflict, NotFound, Unavailable } from "../errors.ts"
import type { ArticleChange, ArticleRecord, CommittedChange, EditBudget } from "./records.ts"

/**
 * The unit of work for article changes. `change` locks the article, hands its current state to
 * `plan`, and, when the plan returns a change, counts it against the daily budget and writes the
 * article, its next revision (number = current + 1) and the activity entry in one transaction.
 * The plan runs while the article is locked, so concurrent changes apply one after another; a
 * writer that cannot get the lock or loses a race fails with EditConflict, and nothing is written.
 * A plan that returns null writes nothing and counts nothing. A null budget is a change that is
 * not counted (the platform's own jobs); a change carrying a `rewrite_id` records it in the same
 * transaction, and one whose `rewrite_id` is recorded already fails with EditConflict; a change
 * carrying `idempotency` marks that key's pending entry applied with its revision in the same
 * transaction.
 */
export class ArticleWriter extends Context.Service<ArticleWriter, {
  readonly change: <E, R>(
    accountId: string,
    articleId: string,
    budget: EditBudget | null,
    plan: (current: ArticleRecord) => Effect.Effect<ArticleChange | null, E, R>,
  ) => Effect.Effect<
    { readonly current: ArticleRecord; readonly committed: CommittedChange | null },
    E | NotFound | EditConflict | DailyEditLimit | Unavailable,
    R
  >
  /** Edits counted for the account on the UTC day `day` (for `Edit-Limit-Remaining`). */
  readonly editsUsed: (accountId: string, day: string) => Effect.Effect<number, Unavailable>
}>()("core/ArticleWriter") {}
