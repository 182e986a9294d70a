import { Effect } from "effect"
import { EditConflict, IdempotencyKeyReused } from "../errors.ts"
import { IdempotencyStore, type RecordedAnswer } from "../ports/IdempotencyStore.ts"
import { Clock } from "../ports/Platform.ts"
import type { Caller } from "./Caller.ts"
import { requireWriteScope } from "./guards.ts"

/** How long a key answers its first answer again. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000
/** How long a running request holds its key before another may take it over (longer than any request). */
export const IDEMPOTENCY_LEASE_MS = 5 * 60 * 1000

/** What a request carrying an idempotency key does: run (it holds the key now) or send the first answer again. */
export type IdempotencyClaim = { readonly kind: "run" } | { readonly kind: "replay"; readonly answer: RecordedAnswer }

const hex = (buffer: ArrayBuffer): string => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, "0")).join("")

/**
 * The fingerprint of a request: SHA-256 of its parts (operation, target, decoded input, the
 * conditions it carries) as JSON. Two requests are "the same request" when their fingerprints are.
 */
export const requestFingerprint = (parts: unknown): Effect.Effect<string> =>
  Effect.promise(() => crypto.subtle.digest("SHA-256", new TextEncoder().encode(JSON.stringify(parts)))).pipe(Effect.map(hex))

/**
 * Claims an idempotency key for a request of the caller's account: `run` when the key is free
 * (the request must then `recordIdempotentAnswer` or `releaseIdempotencyKey`), `replay` with the
 * first answer when the same request used it within 24 hours. The same key with another request
 * is IdempotencyKeyReused; the same request while the first is still running is EditConflict
 * (retry in a moment: it then replays the first answer), so two at once make one change.
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
    if (reservation.kind === "reserved") return { kind: "run" } satisfies IdempotencyClaim as IdempotencyClaim
    if (reservation.fingerprint !== fingerprint) {
      return yield* new IdempotencyKeyReused({
        detail: "This Idempotency-Key was used within the last 24 hours for a different request; use a new key for a new request.",
      })
    }
    if (reservation.kind === "pending") {
      return yield* new EditConflict({
        detail: "A request with this Idempotency-Key is still being processed; retry in a moment to get its answer.",
      })
    }
    return { kind: "replay", answer: reservation.answer } satisfies IdempotencyClaim as IdempotencyClaim
  })

/** Whether an answer is kept for replays: final answers are; those that invite a retry (409, 429, 5xx) are not. */
export const isRecordableStatus = (status: number): boolean => status < 500 && status !== 409 && status !== 429

/** Keeps the answer of a request that claimed its key, for its retries. */
export const recordIdempotentAnswer = (caller: Caller, key: string, fingerprint: string, answer: RecordedAnswer) =>
  IdempotencyStore.use((store) => store.complete(caller.accountId, key, fingerprint, answer))

/** Frees the key of a request that ended without an answer worth repeating, so a retry runs it again. */
export const releaseIdempotencyKey = (caller: Caller, key: string, fingerprint: string) =>
  IdempotencyStore.use((store) => store.release(caller.accountId, key, fingerprint))
