import { Effect } from "effect"
import { RateLimited } from "../errors.ts"
import { LimitStore } from "../ports/LimitStore.ts"
import { Settings } from "../ports/Platform.ts"

const REGISTRATION_WINDOW_SECONDS = 3600

/**
 * Counts one OAuth client registration (RFC 7591, open to anyone) against the client address's
 * hourly budget, so nobody can fill the client table at speed; over it fails with RateLimited.
 */
export const checkRegistrationLimit = (clientAddress: string) =>
  Effect.gen(function* () {
    const { limits } = yield* Settings
    const verdict = yield* (yield* LimitStore).hit(`oauthreg:${clientAddress}`, limits.clientRegistrationsPerHour, REGISTRATION_WINDOW_SECONDS)
    if (!verdict.allowed) {
      return yield* new RateLimited({
        limit: verdict.limit,
        retryAfterSeconds: Math.max(1, verdict.resetSeconds),
        counted: "client registrations from this address in an hour",
      })
    }
    return verdict
  })
