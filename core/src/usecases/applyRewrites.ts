import { Effect, Option, Result } from "effect"
import { type CoreError, InvalidRequest, NotFound, problemKinds } from "../errors.ts"
import { Clock, Ids } from "../ports/Platform.ts"
import { ArticleRepository } from "../ports/Repositories.ts"
import { RewriteLedger } from "../ports/RewriteLedger.ts"
import { toTimestamp } from "../policy/time.ts"
import type { Actor } from "../schema/common.ts"
import { decodeInput } from "../schema/decode.ts"
import { MAX_REWRITE_LINE_BYTES, RewriteLine } from "../schema/rewrite.ts"
import { MAX_BODY_BYTES } from "../schema/writes.ts"
import type { Caller } from "./Caller.ts"
import { recordActivity } from "./recordActivity.ts"
import { updateArticle } from "./updateArticle.ts"

/** Who the rewrite job's revisions and activity entries name. */
export const REWRITE_ACTOR: Actor = { type: "platform", id: "rewrite", name: "Rewrite job" }

/** The action the rewrite job's activity entries carry. */
export const REWRITE_ACTION = "rewrite"

/** What became of one line of a rewrite batch. */
export type RewriteOutcome =
  /** The line made a new revision. */
  | { readonly kind: "applied"; readonly revision: number }
  /** The article already read as the line asks: nothing to write; the line is recorded as applied. */
  | { readonly kind: "unchanged" }
  /** A run before this one applied the line (the revision it made, or null if it changed nothing). */
  | { readonly kind: "already_applied"; readonly revision: number | null }
  /** Dry run: the line passes every check; `changed` tells whether it would make a revision. */
  | { readonly kind: "would_apply"; readonly changed: boolean }
  /** The line is refused, for the reason the error gives; nothing of it was written. */
  | { readonly kind: "refused"; readonly error: CoreError }

/** The result of one line: its number in the file (from 1), its ids when they could be read, and its outcome. */
export interface RewriteLineResult {
  readonly line: number
  readonly rewrite_id: string | null
  readonly article_id: string | null
  readonly outcome: RewriteOutcome
}

/** How many lines of a batch came to each outcome. */
export interface RewriteSummary {
  readonly lines: number
  readonly applied: number
  readonly unchanged: number
  readonly already_applied: number
  readonly would_apply: number
  readonly refused: number
}

/** Options of a rewrite batch. */
export interface RewriteBatchOptions {
  /** Check every line as a real run would, write nothing (no revision, no record, no activity). */
  readonly dryRun: boolean
}

const idsOf = (raw: unknown): { rewrite_id: string | null; article_id: string | null } => {
  const o = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {}
  return {
    rewrite_id: typeof o["rewrite_id"] === "string" ? o["rewrite_id"] : null,
    article_id: typeof o["article_id"] === "string" ? o["article_id"] : null,
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** A line as read from a file: its bytes must be UTF-8, as an API body's must (nothing is replaced). */
const textOf = (line: string | Uint8Array): Result.Result<string, InvalidRequest> => {
  if (typeof line === "string") return Result.succeed(line)
  try {
    return Result.succeed(utf8.decode(line))
  } catch {
    return Result.fail(new InvalidRequest({ detail: "The line is not valid UTF-8.", errors: [{ path: "(line)", message: "Invalid UTF-8" }] }))
  }
}

const parseJson = (text: string): Result.Result<unknown, InvalidRequest> => {
  try {
    return Result.succeed(JSON.parse(text) as unknown)
  } catch (err) {
    const message = err instanceof Error ? err.message : "Malformed JSON"
    return Result.fail(new InvalidRequest({ detail: `The line is not valid JSON: ${message}.`, errors: [{ path: "(line)", message }] }))
  }
}

/**
 * A batch of the platform's rewrite job. Each line, one JSON object
 * `{ rewrite_id, article_id, title?, body?, reason?, if_revision? }`, goes through the same edit
 * policy as an API edit (`updateArticle`: sanitising, protected blocks, `if_revision`) as the
 * platform (channel `platform`, origin `rewrite`, actor "Rewrite job"), on the article's own
 * account, without counting against its daily edit limit. A refused line refuses that line only.
 * A line whose `rewrite_id` was applied by an earlier run is reported as such and applies
 * nothing; a `rewrite_id` given twice in one batch is refused the second time. Every line that
 * reaches an article is in that account's activity log (action `rewrite`), a change in its own
 * transaction. A dry run checks every line and writes nothing.
 */
export const makeRewriteBatch = (options: RewriteBatchOptions) => {
  const seen = new Map<string, number>()
  let lines = 0
  const counts = { applied: 0, unchanged: 0, already_applied: 0, would_apply: 0, refused: 0 }

  const applyParsed = (line: RewriteLine) =>
    Effect.gen(function* () {
      const ledger = yield* RewriteLedger
      const done = yield* ledger.find(line.rewrite_id)
      if (Option.isSome(done)) return { kind: "already_applied", revision: done.value.revision } satisfies RewriteOutcome
      const located = yield* (yield* ArticleRepository).locate(line.article_id)
      if (Option.isNone(located)) return yield* new NotFound({ resource: "article", id: line.article_id })
      const { account_id, site_id } = located.value
      const caller: Caller = {
        accountId: account_id,
        actor: REWRITE_ACTOR,
        scope: "write",
        channel: "platform",
        requestId: yield* (yield* Ids).make("rw"),
        action: REWRITE_ACTION,
        startedAt: yield* (yield* Clock).now,
        rewriteId: line.rewrite_id,
      }
      const input = {
        ...(line.title !== undefined ? { title: line.title } : {}),
        ...(line.body !== undefined ? { body: line.body } : {}),
        ...(line.reason !== undefined ? { reason: line.reason } : {}),
      }
      const edit = updateArticle(caller, line.article_id, input, {
        dryRun: options.dryRun,
        expectedRevisions: line.if_revision === undefined ? undefined : [line.if_revision],
      })

      if (options.dryRun) {
        const current = yield* (yield* ArticleRepository).get(account_id, line.article_id)
        // A dry run fails exactly as the real run would (protected blocks, if_revision, ...).
        const { result } = yield* edit
        const changed = result.article.title !== current.title || result.article.body !== current.body
        return { kind: "would_apply", changed } satisfies RewriteOutcome
      }

      const attempt = yield* Effect.result(edit)
      if (Result.isFailure(attempt)) {
        const error = attempt.failure
        // Another run of the same batch may have applied this line meanwhile (it then holds the record).
        if (error._tag === "EditConflict" || error._tag === "PreconditionFailed") {
          const now = yield* ledger.find(line.rewrite_id)
          if (Option.isSome(now)) return { kind: "already_applied", revision: now.value.revision } satisfies RewriteOutcome
        }
        const kind = problemKinds[error._tag]
        yield* recordActivity(caller, { ok: false, httpStatus: kind.status, errorCode: kind.code, siteId: site_id, articleId: line.article_id })
        return yield* Effect.fail(error)
      }
      const revision = attempt.success.result.revision
      if (revision !== null) return { kind: "applied", revision: revision.number } satisfies RewriteOutcome
      const at = yield* (yield* Clock).now
      yield* ledger.record({ rewrite_id: line.rewrite_id, account_id, article_id: line.article_id, revision: null, applied_at: toTimestamp(at) })
      yield* recordActivity(caller, { ok: true, httpStatus: 200, siteId: site_id, articleId: line.article_id })
      return { kind: "unchanged" } satisfies RewriteOutcome
    })

  /**
   * Applies (or, in a dry run, checks) the next line of the batch, given as the text of one line
   * or its bytes (refused unless valid UTF-8), and its number in the file (by default, how many
   * lines were given so far, this one included).
   */
  const apply = (line: string | Uint8Array, lineNumber?: number) =>
    Effect.gen(function* () {
      const number = lineNumber ?? lines + 1
      lines += 1
      const text = textOf(line)
      const json = Result.isSuccess(text) ? parseJson(text.success) : text
      const ids = Result.isSuccess(json) ? idsOf(json.success) : { rewrite_id: null, article_id: null }
      const outcome: RewriteOutcome = yield* Effect.gen(function* () {
        const raw = yield* Effect.fromResult(json)
        const line = yield* decodeInput(RewriteLine, raw, "Rewrite line")
        const earlier = seen.get(line.rewrite_id)
        if (earlier !== undefined) {
          return yield* new InvalidRequest({
            detail: `rewrite_id '${line.rewrite_id}' is given on line ${earlier} of this batch already; each line needs its own.`,
            errors: [{ path: "rewrite_id", message: `Repeats line ${earlier}` }],
          })
        }
        seen.set(line.rewrite_id, number)
        return yield* applyParsed(line)
      }).pipe(Effect.catch((error: CoreError) => Effect.succeed({ kind: "refused", error } satisfies RewriteOutcome)))
      counts[outcome.kind] += 1
      return { line: number, ...ids, outcome } satisfies RewriteLineResult
    })

  /**
   * Refuses a line longer than any line can be (`MAX_REWRITE_LINE_BYTES`), which the reader did
   * not keep: `byteLength` is how long it was.
   */
  const refuseOversized = (byteLength: number, lineNumber?: number): RewriteLineResult => {
    const number = lineNumber ?? lines + 1
    lines += 1
    counts.refused += 1
    const error = new InvalidRequest({
      detail: `The line is ${byteLength} bytes, longer than any rewrite line can be (${MAX_REWRITE_LINE_BYTES} bytes: a body is at most ${MAX_BODY_BYTES} bytes); it was not read.`,
      errors: [{ path: "(line)", message: `Longer than ${MAX_REWRITE_LINE_BYTES} bytes` }],
    })
    return { line: number, rewrite_id: null, article_id: null, outcome: { kind: "refused", error } }
  }

  /** How many lines came to each outcome so far. */
  const summary = (): RewriteSummary => ({ lines, ...counts })

  return { apply, refuseOversized, summary }
}
