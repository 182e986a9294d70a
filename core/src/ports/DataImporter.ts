import { Context, type Effect } from "effect"
import type { Unavailable } from "../errors.ts"
import type { AccountRecord, ApiKeyRecord, ArticleRecord, BacklinkRecord, RevisionRecord, SiteRecord } from "./records.ts"

/** Everything an import writes, prepared by the core (hashes, word counts, first revisions). */
export interface ImportPlan {
  readonly accounts: ReadonlyArray<AccountRecord>
  readonly apiKeys: ReadonlyArray<ApiKeyRecord>
  readonly sites: ReadonlyArray<SiteRecord>
  readonly articles: ReadonlyArray<{ readonly article: ArticleRecord; readonly firstRevision: RevisionRecord }>
  readonly backlinks: ReadonlyArray<BacklinkRecord>
}

/** How many rows of each kind an import created; rows whose id exists already are left as they are. */
export interface ImportSummary {
  readonly created: { readonly accounts: number; readonly apiKeys: number; readonly sites: number; readonly articles: number; readonly backlinks: number }
  readonly skipped: number
}

/** The kinds of rows an import writes that belong to an account through their own `account_id`. */
export type ImportedKind = "apiKeys" | "sites" | "articles" | "backlinks"

/** Writes an import plan in one transaction, idempotent by id: existing ids are left untouched. */
export class DataImporter extends Context.Service<DataImporter, {
  readonly apply: (plan: ImportPlan) => Effect.Effect<ImportSummary, Unavailable>
  /** The account of each stored row of this kind whose id is among `ids` (ids not stored are left out). */
  readonly owners: (kind: ImportedKind, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<{ readonly id: string; readonly accountId: string }>, Unavailable>
  /**
   * Runs `effect` (an import's checks against the stored rows, then its `apply`) while no other
   * import runs on this database, in this process or another: the checks then still hold when the
   * plan is written. Waits for an import in hand to end.
   */
  readonly exclusive: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | Unavailable, R>
}>()("core/DataImporter") {}
