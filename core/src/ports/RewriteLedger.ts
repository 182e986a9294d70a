import { Context, type Effect, type Option } from "effect"
import type { Unavailable } from "../errors.ts"
import type { AppliedRewriteRecord } from "./records.ts"

/**
 * The lines of the platform's rewrite job already applied, by `rewrite_id`: what makes running a
 * batch again apply nothing twice. A line that changed its article is recorded by the
 * ArticleWriter in the change's own transaction (`ArticleChange.rewrite_id`); `record` keeps a
 * line that applied without a change, and keeps the first record of an id.
 */
export class RewriteLedger extends Context.Service<RewriteLedger, {
  readonly find: (rewriteId: string) => Effect.Effect<Option.Option<AppliedRewriteRecord>, Unavailable>
  readonly record: (entry: AppliedRewriteRecord) => Effect.Effect<void, Unavailable>
}>()("core/RewriteLedger") {}
