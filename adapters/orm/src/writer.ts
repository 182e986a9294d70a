/** The article unit of work on MikroORM: row lock, plan under the lock, budget, revision, activity. */
import {
  applyArticleChange,
  ArticleWriter,
  DailyEditLimit,
  EditConflict,
  NotFound,
  type ArticleChange,
  type ArticleRecord,
  type CommittedChange,
  type EditBudget,
} from "@content-site/core"
import { LockMode } from "@mikro-orm/core"
import { CompiledQuery } from "kysely"
import { Cause, Effect, Exit, Layer } from "effect"
import { ArticleEntity } from "./entities.ts"
import { attempt, editFailureOf, tryDatabase } from "./failures.ts"
import { activityRow, articleOf, articleRow, revisionRow } from "./mapping.ts"
import type { Em, Orm } from "./orm.ts"
import { insertActivity } from "./repositories.ts"
import { insertAppliedRewrite } from "./rewrites.ts"
import { json, nativeSql } from "./sql.ts"

/** Thrown inside the transaction to roll it back when the daily budget is spent. */
class BudgetSpent extends Error {
  readonly budget: EditBudget
  constructor(budget: EditBudget) {
    super("daily edit budget spent")
    this.budget = budget
  }
}

type Outcome<E> =
  | { readonly kind: "missing" }
  | { readonly kind: "plan-failed"; readonly cause: Cause.Cause<E> }
  | { readonly kind: "unchanged"; readonly current: ArticleRecord }
  | { readonly kind: "committed"; readonly current: ArticleRecord; readonly committed: CommittedChange }

export interface WriterOptions {
  /** How long a change waits for another change's row lock before EditConflict. */
  readonly lockTimeoutMs: number
}

/** Upserts the account's counter for the day by one and returns the new count (same transaction). */
const countEdit = async (em: Em, accountId: string, day: string): Promise<number> => {
  const rows = await em.execute<Array<{ count: number | string }>>(
    `insert into edit_counters (account_id, day, count) values (?, ?, 1)
     on conflict (account_id, day) do update set count = edit_counters.count + 1
     returning count`,
    [accountId, day],
  )
  return Number(rows[0]?.count ?? 1)
}

/**
 * Thrown inside the transaction to roll it back when the call's idempotency key was taken over
 * (its lease ended while the call still ran) and the same request's change was applied by its new holder.
 */
class KeyAppliedElsewhere extends Error {
  readonly revision: { readonly articleId: string; readonly number: number }
  constructor(revision: { readonly articleId: string; readonly number: number }) {
    super("idempotency key applied by another call")
    this.revision = revision
  }
}

/** The transaction's own connection, on which a statement is sent with real bind parameters. */
interface BoundContext {
  readonly executeQuery: (query: CompiledQuery) => Promise<unknown>
}

/**
 * Inserts a change's revision and sets its article's new state (title, body, word count,
 * featured image, time, revision number), on the transaction's connection with bind parameters.
 * MikroORM 7 sends none: its unit of work would write the body into the text of both statements,
 * a 1 MiB literal escaped and joined into each, then copied flat once more to be sent, about 4 MB of
 * garbage on the event loop's heap for one 1 MiB edit. Bound, the body is sent as it is.
 */
const writeChange = async (em: Em, revision: ReturnType<typeof revisionRow>, article: ReturnType<typeof articleRow>): Promise<void> => {
  const trx = em.getTransactionContext<BoundContext>()
  if (trx === undefined) throw new Error("an article's change is written inside its transaction")
  await trx.executeQuery(
    CompiledQuery.raw(
      `insert into revisions (id, account_id, article_id, number, origin, title, body, featured_image, reason, actor, restored_from, created_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10::jsonb, $11, $12::timestamptz)`,
      [
        revision.id, revision.accountId, revision.articleId, revision.number, revision.origin, revision.title, revision.body, json(revision.featuredImage),
        revision.reason, json(revision.actor), revision.restoredFrom, revision.createdAt.toISOString(),
      ],
    ),
  )
  await trx.executeQuery(
    CompiledQuery.raw(
      `update articles set title = $1, body = $2, word_count = $3, featured_image = $4::jsonb, updated_at = $5::timestamptz, revision = $6 where id = $7`,
      [article.title, article.body, article.wordCount, json(article.featuredImage), article.updatedAt.toISOString(), article.revision, article.id],
    ),
  )
}

/**
 * Marks a call's pending idempotency key applied with the revision its change made (same transaction).
 * The key's row is locked and read first (the newest committed version): a key whose lease ended
 * while its call still ran may have been taken over by the same request, retried elsewhere, whose
 * change was applied meanwhile; this change is then refused (KeyAppliedElsewhere), not made twice.
 * The key is then this call's (its token), whoever held it: the answer kept for it is that of the
 * call whose change was made.
 */
const markKeyApplied = async (
  em: Em,
  accountId: string,
  hold: { readonly key: string; readonly fingerprint: string; readonly token: string },
  articleId: string,
  number: number,
) => {
  const rows = await em.execute<Array<{ revision_article_id: string | null; revision_number: number | null }>>(
    `select revision_article_id, revision_number from idempotency_keys where account_id = ? and key = ? and fingerprint = ? for update`,
    [accountId, hold.key, hold.fingerprint],
  )
  const held = rows[0]
  if (held !== undefined && held.revision_article_id !== null && held.revision_number !== null) {
    throw new KeyAppliedElsewhere({ articleId: held.revision_article_id, number: held.revision_number })
  }
  await em.execute(
    `update idempotency_keys set revision_article_id = ?, revision_number = ?, lease_token = ?
     where account_id = ? and key = ? and fingerprint = ? and status is null`,
    [articleId, number, hold.token, accountId, hold.key, hold.fingerprint],
  )
}

export const ormArticleWriter = (orm: Orm, options: WriterOptions) => {
  const sql = nativeSql(orm)
  return Layer.succeed(ArticleWriter, {
    editsUsed: (accountId, day) =>
      attempt(async () => {
        const rows = await sql<{ count: number }>("select count from edit_counters where account_id = $1 and day = $2", [accountId, day])
        return rows[0]?.count ?? 0
      }),
    change: <E, R>(
      accountId: string,
      articleId: string,
      budget: EditBudget | null,
      plan: (current: ArticleRecord) => Effect.Effect<ArticleChange | null, E, R>,
    ) =>
      Effect.gen(function* () {
        const context = yield* Effect.context<R>()
        const runPlan = Effect.runPromiseExitWith(context)
        const outcome = yield* tryDatabase(
          () =>
            (orm.em.fork() as Em).transactional(async (em): Promise<Outcome<E>> => {
              await em.execute(`set local lock_timeout = ${Math.max(1, Math.round(options.lockTimeoutMs))}`)
              // SELECT ... FOR UPDATE: concurrent changes of this article queue here, one after another
              const row = await em.findOne(ArticleEntity, { id: articleId, accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE })
              if (!row) return { kind: "missing" }
              const current = articleOf(row)
              const exit = await runPlan(plan(current))
              if (Exit.isFailure(exit)) return { kind: "plan-failed", cause: exit.cause }
              const change = exit.value
              if (change === null) return { kind: "unchanged", current }
              // A change of the platform's own jobs (no budget) is not counted.
              const used = budget === null ? null : await countEdit(em, accountId, budget.day)
              if (budget !== null && used !== null && used > budget.limit) throw new BudgetSpent(budget)
              const { article: next, revision } = applyArticleChange(current, change)
              if (change.rewrite_id !== undefined) {
                await insertAppliedRewrite(em, {
                  rewrite_id: change.rewrite_id,
                  account_id: accountId,
                  article_id: articleId,
                  revision: revision.number,
                  applied_at: change.updated_at,
                })
              }
              // The revision and the article's new state, the body a bind parameter of each (not
              // through the unit of work: MikroORM writes every parameter into the statement's text).
              const written = articleRow(next)
              await writeChange(em, revisionRow(revision), written)
              if (change.activity) await insertActivity(em, activityRow(change.activity))
              // The call's idempotency key, still pending, marked applied with this revision: a retry
              // after the call died before keeping its answer finds it so and does not run again.
              if (change.idempotency !== undefined) await markKeyApplied(em, accountId, change.idempotency, articleId, revision.number)
              // (the row read under the lock is left as it was read: the transaction's flush finds nothing to write)
              const article: ArticleRecord = articleOf(written)
              return {
                kind: "committed",
                current,
                committed: { article, revision, editsRemaining: budget === null || used === null ? null : Math.max(0, budget.limit - used) },
              }
            }),
          (error) =>
            error instanceof BudgetSpent
              ? new DailyEditLimit({ limit: error.budget.limit, retryAfterSeconds: error.budget.retryAfterSeconds })
              : error instanceof KeyAppliedElsewhere
                ? new EditConflict({
                    detail: `The request with this idempotency key was applied by another call (article '${error.revision.articleId}', revision ${error.revision.number}); nothing was changed now. Read the article for the result.`,
                  })
                : editFailureOf(error),
        )
        switch (outcome.kind) {
          case "missing":
            return yield* new NotFound({ resource: "article", id: articleId })
          case "plan-failed":
            return yield* Effect.failCause(outcome.cause)
          case "unchanged":
            return { current: outcome.current, committed: null }
          case "committed":
            return { current: outcome.current, committed: outcome.committed }
        }
      }),
  })
}
