import { Schema } from "effect"
import { Id } from "./common.ts"
import { Body, Reason, Title } from "./writes.ts"

/** Longest `rewrite_id`, in characters. */
export const MAX_REWRITE_ID_LENGTH = 200

/**
 * Longest line of a rewrite batch, in bytes (8 MiB): a body is at most 1 MiB of UTF-8, at most six
 * times that written as JSON (`\u0001` for a byte), with room for the rest. A longer line is
 * refused without being read whole.
 */
export const MAX_REWRITE_LINE_BYTES = 8 * 1024 * 1024

/** The id the platform gives a line of a rewrite batch: what makes the line apply once. */
export const RewriteId = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^[\x21-\x7e]{1,200}$/)),
).annotate({
  title: "RewriteId",
  description: `The line's own id, chosen by the platform: 1 to ${MAX_REWRITE_ID_LENGTH} printable ASCII characters, no spaces.`,
})

/**
 * One line of a rewrite batch (`rewrite apply FILE.jsonl`): the new title and/or body of an
 * article, why, and optionally the revision it was written against.
 */
export const RewriteLine = Schema.Struct({
  rewrite_id: RewriteId,
  article_id: Id,
  title: Schema.optionalKey(Title),
  body: Schema.optionalKey(Body),
  reason: Schema.optionalKey(Reason),
  if_revision: Schema.optionalKey(
    Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(1))).annotate({
      description: "Apply only if the article is still at this revision; otherwise the line is refused (precondition_failed).",
    }),
  ),
})
  .pipe(
    Schema.check(
      Schema.makeFilter((o: { title?: string; body?: string }) =>
        o.title !== undefined || o.body !== undefined ? undefined : "Expected at least one of title, body",
      ),
    ),
  )
  .annotate({ title: "RewriteLine", description: "One line of a rewrite batch." })
/** One line of a rewrite batch. */
export type RewriteLine = typeof RewriteLine.Type
