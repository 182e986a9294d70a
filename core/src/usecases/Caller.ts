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
}
