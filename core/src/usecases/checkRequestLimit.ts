import { Effect } from "effect"
import { RateLimited } from "../errors.ts"
import { LimitStore, type LimitVerdict } from "../ports/LimitStore.ts"
import { Settings } from "../ports/Platform.ts"

/**
 * Counts one request against the account's per-minute limit, shared by REST and MCP and by every
 * instance; over it fails with RateLimited. The verdict feeds the `RateLimit-*` headers.
 */
export const checkRequestLimit = (accountId: string) =>
  Effect.gen(function* () {
    const { limits } = yield* Settings
    const verdict: LimitVerdict = yield* (yield* LimitStore).hit(`req:${accountId}`, limits.requestsPerMinute, 60)
    if (!verdict.allowed) {
      return yield* new RateLimited({ limit: verdict.limit, retryAfterSeconds: Math.max(1, verdict.resetSeconds) })
    }
    return verdict
  })
