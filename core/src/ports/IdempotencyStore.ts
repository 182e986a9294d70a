import { Context, type Effect } from "effect"
import type { Unavailable } from "../errors.ts"

/** The immutable revision an answer's article is at: its body is read from there on replay. */
export interface RevisionRef {
  readonly articleId: string
  readonly number: number
}

/** An answer as a transport sent it, kept so that a retry gets it again. */
export interface RecordedAnswer {
  /** HTTP status (MCP: 200). */
  readonly status: number
  /** The headers worth repeating (`ETag`, `Edit-Limit-Remaining`, `Content-Type`). */
  readonly headers: Readonly<Record<string, string>>
  /**
   * The body as sent; with `revision`, as sent but for the article's `body` and `protected_links`
   * (null in the kept text), which are rebuilt from that revision.
   */
  readonly body: string
  /** The revision the answer's article is at, when its body is not kept (absent in records made before). */
  readonly revision?: RevisionRef | undefined
}

/**
 * What a key keeps once its request is answered: the answer, or only that the request was made
 * (`rerun`: a dry run, or a refusal too large to keep; a retry of it runs again, changing nothing
 * the first did not).
 */
export type KeptAnswer = RecordedAnswer | { readonly rerun: true }

/** What holds an idempotency key when a request asks for it. */
export type Reservation =
  /**
   * The key is now this request's: run it, then `complete` or `release` with `token`, this holding's
   * own (a request that takes the key over after the lease ended gets another).
   */
  | { readonly kind: "reserved"; readonly token: string }
  /** Another request holds the key and is still running. */
  | { readonly kind: "pending"; readonly fingerprint: string }
  /** A request with this key was answered: its fingerprint and what was kept of its answer. */
  | { readonly kind: "completed"; readonly fingerprint: string; readonly answer: KeptAnswer }
  /**
   * The request that held the key made its change (this revision) and then died before its answer
   * was kept (its lease has ended): the key is not taken over, so the change is never made twice.
   */
  | { readonly kind: "applied"; readonly fingerprint: string; readonly revision: RevisionRef }

/**
 * Idempotency keys per account, shared by every instance. `reserve` is atomic: of any number of
 * requests reserving the same free key at once, exactly one gets `reserved`; the others see it
 * `pending` (then `completed`). An entry expired at `nowMs`, a pending one whose lease has
 * ended (its request died) unless its change was applied (`ArticleChange.idempotency`: then it is
 * `applied`), and one that kept nothing to replay (`rerun`) reserved again by the same request
 * (same fingerprint) count as free and are taken over.
 */
export class IdempotencyStore extends Context.Service<IdempotencyStore, {
  readonly reserve: (
    accountId: string,
    key: string,
    fingerprint: string,
    times: { readonly nowMs: number; readonly leaseUntilMs: number; readonly expiresAtMs: number },
  ) => Effect.Effect<Reservation, Unavailable>
  /**
   * Keeps what is kept of the answer of the request that reserved the key (pending, still held with
   * `token`), in one step: a holder whose key was taken over keeps nothing over its successor's.
   */
  readonly complete: (accountId: string, key: string, token: string, answer: KeptAnswer) => Effect.Effect<void, Unavailable>
  /**
   * Frees a key whose request ended without an answer worth repeating (pending, still held with
   * `token`); one whose change was applied is not freed but its lease ended (a retry is then
   * `applied`). A holder whose key was taken over frees nothing.
   */
  readonly release: (accountId: string, key: string, token: string) => Effect.Effect<void, Unavailable>
}>()("core/IdempotencyStore") {}
