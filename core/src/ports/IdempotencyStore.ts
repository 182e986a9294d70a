import { Context, type Effect } from "effect"
import type { Unavailable } from "../errors.ts"

/** An answer as a transport sent it, kept so that a retry gets it again. */
export interface RecordedAnswer {
  /** HTTP status (MCP: 200). */
  readonly status: number
  /** The headers worth repeating (`ETag`, `Edit-Limit-Remaining`, `Content-Type`). */
  readonly headers: Readonly<Record<string, string>>
  /** The body as sent. */
  readonly body: string
}

/** What holds an idempotency key when a request asks for it. */
export type Reservation =
  /** The key is now this request's: run it, then `complete` or `release`. */
  | { readonly kind: "reserved" }
  /** Another request holds the key and is still running. */
  | { readonly kind: "pending"; readonly fingerprint: string }
  /** A request with this key was answered: its fingerprint and answer. */
  | { readonly kind: "completed"; readonly fingerprint: string; readonly answer: RecordedAnswer }

/**
 * Idempotency keys per account, shared by every instance. `reserve` is atomic: of any number of
 * requests reserving the same free key at once, exactly one gets `reserved`; the others see it
 * `pending` (then `completed`). An entry expired at `nowMs`, or a pending one whose lease has
 * ended (its request died), counts as free and is taken over.
 */
export class IdempotencyStore extends Context.Service<IdempotencyStore, {
  readonly reserve: (
    accountId: string,
    key: string,
    fingerprint: string,
    times: { readonly nowMs: number; readonly leaseUntilMs: number; readonly expiresAtMs: number },
  ) => Effect.Effect<Reservation, Unavailable>
  /** Keeps the answer of the request that reserved the key (pending, same fingerprint). */
  readonly complete: (accountId: string, key: string, fingerprint: string, answer: RecordedAnswer) => Effect.Effect<void, Unavailable>
  /** Frees a key whose request ended without an answer worth repeating (pending, same fingerprint). */
  readonly release: (accountId: string, key: string, fingerprint: string) => Effect.Effect<void, Unavailable>
}>()("core/IdempotencyStore") {}
