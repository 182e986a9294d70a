/** The rewrite job's ledger on the database: one row per applied line, keyed by rewrite_id. */
import { RewriteLedger, type AppliedRewriteRecord } from "@content-site/core"
import { Effect, Layer, Option } from "effect"
import { attempt } from "./failures.ts"
import type { Em, Orm } from "./orm.ts"
import { nativeSql } from "./sql.ts"

interface AppliedRewriteWire {
  rewriteId: string
  accountId: string
  articleId: string
  revision: number | null
  appliedAt: string | Date
}

const COLUMNS = `rewrite_id as "rewriteId", account_id as "accountId", article_id as "articleId", revision, applied_at as "appliedAt"`

const recordOf = (r: AppliedRewriteWire): AppliedRewriteRecord => ({
  rewrite_id: r.rewriteId,
  account_id: r.accountId,
  article_id: r.articleId,
  revision: r.revision,
  applied_at: new Date(r.appliedAt).toISOString(),
})

/**
 * Records an applied line inside the article change's transaction. A rewrite_id recorded already
 * is a unique violation: the transaction rolls back and the writer answers EditConflict.
 */
export const insertAppliedRewrite = async (em: Em, entry: AppliedRewriteRecord): Promise<void> => {
  await em.execute(
    `insert into applied_rewrites (rewrite_id, account_id, article_id, revision, applied_at) values (?, ?, ?, ?, ?)`,
    [entry.rewrite_id, entry.account_id, entry.article_id, entry.revision, new Date(entry.applied_at)],
  )
}

/** The RewriteLedger Layer over one ORM. */
export const ormRewriteLedger = (orm: Orm) => {
  const sql = nativeSql(orm)
  return Layer.succeed(RewriteLedger, {
    find: (rewriteId) =>
      Effect.map(
        attempt(() => sql<AppliedRewriteWire>(`select ${COLUMNS} from applied_rewrites where rewrite_id = $1`, [rewriteId])),
        (rows) => (rows[0] === undefined ? Option.none() : Option.some(recordOf(rows[0]))),
      ),
    record: (entry) =>
      attempt(() =>
        sql(
          `insert into applied_rewrites (rewrite_id, account_id, article_id, revision, applied_at) values ($1, $2, $3, $4, $5)
           on conflict (rewrite_id) do nothing`,
          [entry.rewrite_id, entry.account_id, entry.article_id, entry.revision, entry.applied_at],
        ),
      ).pipe(Effect.asVoid),
  })
}
