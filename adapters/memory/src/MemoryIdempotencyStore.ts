import { IdempotencyStore, type KeptAnswer, type RevisionRef } from "@content-site/core"
import { Effect, Layer } from "effect"
import type { MemoryState } from "./MemoryState.ts"

/** One idempotency key in memory. */
export interface MemoryIdempotencyEntry {
  readonly fingerprint: string
  /** Its holding's own token (each reservation makes a new one): only that holder completes or releases it. */
  readonly token: string
  readonly answer: KeptAnswer | null
  readonly leaseUntilMs: number
  readonly expiresAtMs: number
  /** Pending, its change applied (the writer marks it): never taken over when its lease ends. */
  readonly applied?: RevisionRef
}

/**
 * Idempotency keys in memory, keyed by account and key. A reservation is one synchronous step,
 * so of two requests reserving the same key exactly one gets it. Expired entries are taken over
 * on reservation and dropped once there are many; one that kept nothing to replay is taken over
 * by its own request. Each reservation gets its own token, and only a pending entry still held
 * with it is completed or released, as the database's conditional statements do.
 */
export const memoryIdempotencyStore = (state: MemoryState) => {
  const id = (accountId: string, key: string) => `${accountId}#${key}`
  const heldWith = (accountId: string, key: string, token: string) => {
    const entry = state.idempotency.get(id(accountId, key))
    return entry !== undefined && entry.answer === null && entry.token === token ? entry : undefined
  }
  return Layer.succeed(IdempotencyStore, {
    reserve: (accountId, key, fingerprint, times) =>
      Effect.sync(() => {
        const existing = state.idempotency.get(id(accountId, key))
        const free =
          existing === undefined ||
          existing.expiresAtMs <= times.nowMs ||
          (existing.answer === null && existing.leaseUntilMs <= times.nowMs && existing.applied === undefined) ||
          (existing.answer !== null && "rerun" in existing.answer && existing.fingerprint === fingerprint)
        if (!free) {
          if (existing.answer !== null) return { kind: "completed" as const, fingerprint: existing.fingerprint, answer: existing.answer }
          return existing.applied !== undefined && existing.leaseUntilMs <= times.nowMs
            ? { kind: "applied" as const, fingerprint: existing.fingerprint, revision: existing.applied }
            : { kind: "pending" as const, fingerprint: existing.fingerprint }
        }
        if (existing === undefined && state.idempotency.size >= 10_000) {
          for (const [k, e] of state.idempotency) if (e.expiresAtMs <= times.nowMs) state.idempotency.delete(k)
        }
        const token = crypto.randomUUID()
        state.idempotency.set(id(accountId, key), { fingerprint, token, answer: null, leaseUntilMs: times.leaseUntilMs, expiresAtMs: times.expiresAtMs })
        return { kind: "reserved" as const, token }
      }),
    complete: (accountId, key, token, answer) =>
      Effect.sync(() => {
        const entry = heldWith(accountId, key, token)
        if (entry !== undefined) state.idempotency.set(id(accountId, key), { ...entry, answer })
      }),
    release: (accountId, key, token) =>
      Effect.sync(() => {
        const entry = heldWith(accountId, key, token)
        if (entry === undefined) return
        // a key whose change was applied is not freed (a retry would make it again): its lease ends now
        if (entry.applied === undefined) state.idempotency.delete(id(accountId, key))
        else state.idempotency.set(id(accountId, key), { ...entry, leaseUntilMs: 0 })
      }),
  })
}
