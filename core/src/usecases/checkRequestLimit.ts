import { Context, Effect } from "effect"
import { RateLimited } from "../errors.ts"
import { LimitStore, type LimitVerdict } from "../ports/LimitStore.ts"
import { Settings } from "../ports/Platform.ts"

/** The counter of an account's requests, one window a minute. */
const requestKey = (accountId: string) => `req:${accountId}`

/**
 * Counts one request against the account's per-minute limit, shared by REST and MCP and by every
 * instance; over it fails with RateLimited. The verdict feeds the `RateLimit-*` headers.
 */
export const checkRequestLimit = (accountId: string) =>
  // every call runs this: a chain, not a generator
  Effect.contextWith((services: Context.Context<Settings | LimitStore>) =>
    Effect.flatMap(
      Context.get(services, LimitStore).hit(requestKey(accountId), Context.get(services, Settings).limits.requestsPerMinute, 60),
      (verdict: LimitVerdict) =>
        verdict.allowed
          ? Effect.succeed(verdict)
          : Effect.fail(new RateLimited({ limit: verdict.limit, retryAfterSeconds: Math.max(1, verdict.resetSeconds) })),
    ),
  )

/**
 * Reads the account's per-minute limit as it stands, without counting a request: the
 * `RateLimit-*` headers of an answer that is not counted (the MCP endpoint's own refusals of an
 * authenticated request: 405, 406, 415, 413, 400). Never fails for being over the limit.
 */
export const peekRequestLimit = (accountId: string) =>
  Effect.contextWith((services: Context.Context<Settings | LimitStore>) =>
    Context.get(services, LimitStore).peek(requestKey(accountId), Context.get(services, Settings).limits.requestsPerMinute, 60),
  )
