import { Effect } from "effect"
import { EditConflict, IdempotencyKeyReused } from "../errors.ts"
import { extractProtectedBlocks } from "../html/extractProtectedBlocks.ts"
import { IdempotencyStore, type KeptAnswer, type RecordedAnswer } from "../ports/IdempotencyStore.ts"
import { Clock } from "../ports/Platform.ts"
import { RevisionRepository } from "../ports/Repositories.ts"
import type { Caller, IdempotencyHold } from "./Caller.ts"
import { requireWriteScope } from "./guards.ts"

/** How long a key answers its first answer again. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
/** How long a running request holds its key before another may take it over (longer than any request). */
export const IDEMPOTENCY_LEASE_MS = 5 * 60 * 1000

/**
 * Largest answer kept as it was sent (UTF-8 bytes of its body) when it changed nothing: a refusal
 * past it keeps only its fingerprint (a retry runs again). A write's answer keeps a reference to
 * its revision instead of the article's body, so what a key holds stays within a few KiB
 * whatever the article's size.
 */
export const MAX_KEPT_ANSWER_BYTES = 4096

/**
 * What a request carrying an idempotency key does: run (it holds the key now) or send the first
 * answer again (`rebuilt`: its article's body was read from the revision it names).
 */
export type IdempotencyClaim =
  /** `hold`: the key as this request now holds it (absent: it runs unheld, keeping nothing). */
  | { readonly kind: "run"; readonly hold?: IdempotencyHold }
  | { readonly kind: "replay"; readonly answer: RecordedAnswer; readonly rebuilt: boolean }

/** An answer as a transport made it, before it is kept for its key. */
export interface AnswerToKeep {
  /** HTTP status (MCP: 200 for a result, the problem's status for a refusal). */
  readonly status: number
  /** The headers worth repeating. */
  readonly headers: Readonly<Record<string, string>>
  /** The JSON value sent as the body (REST) or as the structured result / error result (MCP). */
  readonly value: unknown
  /** The request was a dry run: nothing of its answer is kept, a retry runs it again. */
  readonly dryRun: boolean
}

type WrittenArticleValue = { readonly id: string; readonly revision: number; readonly body: string }
const writtenArticleOf = (value: unknown): WrittenArticleValue | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  const article = (value as { article?: unknown }).article
  if (typeof article !== "object" || article === null) return undefined
  const { id, revision, body } = article as Record<string, unknown>
  return typeof id === "string" && typeof revision === "number" && typeof body === "string" ? { id, revision, body } : undefined
}

/**
 * What a key keeps of an answer (pure): a dry run, nothing (`rerun`); a write's answer, its text
 * with the article's `body` and `protected_links` left out (null) and the revision they are read
 * from again; any other answer as sent when it is at most MAX_KEPT_ANSWER_BYTES, else nothing
 * (`rerun`: such an answer changed nothing, so running the request again is safe).
 */
export const keptAnswerOf = (answer: AnswerToKeep): KeptAnswer => {
  if (answer.dryRun) return { rerun: true }
  const article = answer.status === 200 ? writtenArticleOf(answer.value) : undefined
  if (article !== undefined) {
    const value = answer.value as { article: object }
    const body = JSON.stringify({ ...value, article: { ...value.article, body: null, protected_links: null } })
    return { status: answer.status, headers: answer.headers, body, revision: { articleId: article.id, number: article.revision } }
  }
  const body = JSON.stringify(answer.value)
  // A success that names no revision is kept whole: running a change again is never safe.
  if (answer.status >= 400 && new TextEncoder().encode(body).byteLength > MAX_KEPT_ANSWER_BYTES) return { rerun: true }
  return { status: answer.status, headers: answer.headers, body }
}

/**
 * A kept problem's text as this request sends it again: the first answer with this request's
 * `request_id` (the contract: a response's `X-Request-Id`, its problem's `request_id` and its
 * activity entry's are one id; `Idempotent-Replayed`, or the MCP result's first line, says that the
 * answer is an earlier one). Text that is no problem object is given back as it is. Linear in it.
 */
export const replayedProblemText = (kept: string, requestId: string): string => {
  let value: unknown
  try {
    value = JSON.parse(kept)
  } catch {
    return kept
  }
  if (typeof value !== "object" || value === null || Array.isArray(value) || !("request_id" in value)) return kept
  return JSON.stringify({ ...value, request_id: requestId })
}

/** The text of a kept write answer with its article's body (and the protected links read from it) put back in place. */
export const rebuiltAnswerBody = (kept: string, revisionBody: string): string => {
  const value = JSON.parse(kept) as { article: Record<string, unknown> }
  value.article["body"] = revisionBody
  value.article["protected_links"] = extractProtectedBlocks(revisionBody).map((block) => ({ type: block.type, href: block.href, text: block.text }))
  return JSON.stringify(value)
}

const hex = (buffer: ArrayBuffer): string => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, "0")).join("")

/**
 * The fingerprint of a request: SHA-256 of its parts (operation, target, decoded input, the
 * conditions it carries) as JSON. Two requests are "the same request" when their fingerprints are.
 */
export const requestFingerprint = (parts: unknown): Effect.Effect<string> =>
  Effect.promise(() => crypto.subtle.digest("SHA-256", new TextEncoder().encode(JSON.stringify(parts)))).pipe(Effect.map(hex))

/**
 * Claims an idempotency key for a request of the caller's account: `run` when the key is free
 * (the request then holds it, `hold`, and must `recordIdempotentAnswer` or `releaseIdempotencyKey`
 * with it: a holder whose key was taken over after its lease ended keeps and frees nothing), `replay` with the
 * first answer when the same request used it within 24 hours (a write's answer rebuilt from the
 * revision it names; a dry run, or a refusal too large to keep, is `run` again, as is a key
 * without a request of its own). The same key with another request is IdempotencyKeyReused; the same request while the first is still running is EditConflict
 * (retry in a moment: it then replays the first answer), so two at once make one change. A
 * request whose change was applied but whose answer was never kept (the service stopped in
 * between) is EditConflict naming the revision it made, and nothing runs again.
 * Keys serve writes only: a caller that may not write is InsufficientScope before any key is
 * looked up, so a read-only key never replays (or learns of) a write key's answer.
 */
export const claimIdempotencyKey = (caller: Caller, key: string, fingerprint: string) =>
  Effect.gen(function* () {
    yield* requireWriteScope(caller)
    const now = yield* (yield* Clock).now
    const reservation = yield* (yield* IdempotencyStore).reserve(caller.accountId, key, fingerprint, {
      nowMs: now,
      leaseUntilMs: now + IDEMPOTENCY_LEASE_MS,
      expiresAtMs: now + IDEMPOTENCY_TTL_MS,
    })
    if (reservation.kind === "reserved") return { kind: "run", hold: { key, fingerprint, token: reservation.token } } satisfies IdempotencyClaim as IdempotencyClaim
    if (reservation.fingerprint !== fingerprint) {
      return yield* new IdempotencyKeyReused({
        detail: "This idempotency key was used within the last 24 hours for a different request; use a new key for a new request.",
      })
    }
    if (reservation.kind === "pending") {
      return yield* new EditConflict({
        detail: "A request with this idempotency key is still being processed; retry in a moment to get its answer.",
        retryAfterSeconds: 1,
      })
    }
    if (reservation.kind === "applied") {
      const { articleId, number } = reservation.revision
      return yield* new EditConflict({
        detail: `The request with this idempotency key was applied (article '${articleId}', revision ${number}), but the service stopped before its answer was kept, so it cannot be sent again. Nothing was changed now; read the article for the result.`,
      })
    }
    const kept = reservation.answer
    // The store takes a `rerun` key over for its own request; were one left, the request runs unheld.
    if ("rerun" in kept) return { kind: "run" } satisfies IdempotencyClaim as IdempotencyClaim
    if (kept.revision === undefined) return { kind: "replay", answer: kept, rebuilt: false } satisfies IdempotencyClaim as IdempotencyClaim
    const revision = yield* (yield* RevisionRepository).get(caller.accountId, kept.revision.articleId, kept.revision.number)
    const answer: RecordedAnswer = { status: kept.status, headers: kept.headers, body: rebuiltAnswerBody(kept.body, revision.body) }
    return { kind: "replay", answer, rebuilt: true } satisfies IdempotencyClaim as IdempotencyClaim
  })

/** Whether an answer is kept for replays: final answers are; those that invite a retry (409, 429, 5xx) are not. */
export const isRecordableStatus = (status: number): boolean => status < 500 && status !== 409 && status !== 429

/**
 * Keeps the answer of a request that claimed its key, for its retries, as `keptAnswerOf` says; only
 * while the request still holds the key (`hold.token`): never over a successor's.
 */
export const recordIdempotentAnswer = (caller: Caller, hold: IdempotencyHold, answer: AnswerToKeep) =>
  IdempotencyStore.use((store) => store.complete(caller.accountId, hold.key, hold.token, keptAnswerOf(answer)))

/** Frees the key of a request that ended without an answer worth repeating, so a retry runs it again; only while the request still holds it. */
export const releaseIdempotencyKey = (caller: Caller, hold: IdempotencyHold) =>
  IdempotencyStore.use((store) => store.release(caller.accountId, hold.key, hold.token))
