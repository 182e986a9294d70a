import type { Actor, Channel, KeyScope } from "../schema/common.ts"

/**
 * Who a logged call was made by, as its activity entry names it: a caller, or nobody known (a
 * call refused before any key or token named an account has a null account and actor).
 */
export interface LoggedCaller {
  readonly accountId: string | null
  readonly actor: Actor | null
  readonly channel: Channel
  readonly requestId: string
  readonly action: string
  readonly startedAt: number
  /** The client address of a call no key or token named: what its refusals are counted against. */
  readonly address?: string
}

/** Who is calling, through which channel, and which request this is: every use case is scoped by it. */
export interface Caller {
  readonly accountId: string
  readonly actor: Actor
  readonly scope: KeyScope
  readonly channel: Channel
  /** The request id carried by `X-Request-Id`, the problem body and the activity entry. */
  readonly requestId: string
  /** The logged action: `PUT /api/v1/articles/{id}` or a tool name. */
  readonly action: string
  /** Clock milliseconds when the call started, for `duration_ms`. */
  readonly startedAt: number
  /**
   * The rewrite job's line being applied (channel `platform`): a change this caller makes records
   * the id in its own transaction, so the line is never applied twice.
   */
  readonly rewriteId?: string
  /**
   * The idempotency key this call holds (`claimIdempotencyKey` answered `run`): a change it makes
   * marks the key applied in its own transaction, so that a retry after the call died between
   * the change and its answer's keeping never applies it again.
   */
  readonly idempotency?: IdempotencyHold
}

/**
 * An idempotency key held by a call: the key, the fingerprint of its request and the token its
 * reservation gave this holding alone (what the call keeps or frees at its end, only while it still holds the key).
 */
export interface IdempotencyHold {
  readonly key: string
  readonly fingerprint: string
  readonly token: string
}
