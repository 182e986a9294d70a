import { Context, Effect } from "effect"
import { RateLimited } from "../errors.ts"
import { LimitStore, type LimitVerdict } from "../ports/LimitStore.ts"
import { Settings } from "../ports/Platform.ts"

/**
 * Counts one request against the account's per-minute limit, shared by REST and MCP and by every
 * instance; over it fails with RateLimited. The verdict feeds the `RateLimit-*` headers.
 */
export const checkRequestLimit = (accountId: string) =>
  // every call runs this: a chain, not a generator
  Effect.contextWith((services: Context.Context<Settings | LimitStore>) =>
    Effect.flatMap(
      Context.get(services, LimitStore).hit(`req:${accountId}`, Context.get(services, Settings).limits.requestsPerMinute, 60),
      (verdict: LimitVerdict) =>
        verdict.allowed
          ? Effect.succeed(verdict)
          : Effect.fail(new RateLimited({ limit: verdict.limit, retryAfterSeconds: Math.max(1, verdict.resetSeconds) })),
    ),
  )
