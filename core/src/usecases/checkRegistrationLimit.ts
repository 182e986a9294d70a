import { Effect } from "effect"
import { RateLimited } from "../errors.ts"
import { LimitStore } from "../ports/LimitStore.ts"
import { type LimitSettings, Settings } from "../ports/Platform.ts"

const HOUR_SECONDS = 3600

/** Counts one hit on an address's hourly budget `key`; over it fails with RateLimited, saying what it counts. */
const hourlyBudget = (key: string, limitOf: (limits: LimitSettings) => number, counted: string) =>
  Effect.gen(function* () {
    const { limits } = yield* Settings
    const verdict = yield* (yield* LimitStore).hit(key, limitOf(limits), HOUR_SECONDS)
    if (!verdict.allowed) {
      return yield* new RateLimited({ limit: verdict.limit, retryAfterSeconds: Math.max(1, verdict.resetSeconds), counted })
    }
    return verdict
  })

/**
 * Counts one OAuth client registration (RFC 7591, open to anyone) against the client address's
 * hourly budget, so nobody can fill the client table at speed; over it fails with RateLimited.
 */
export const checkRegistrationLimit = (clientAddress: string) =>
  hourlyBudget(`oauthreg:${clientAddress}`, (limits) => limits.clientRegistrationsPerHour, "client registrations from this address in an hour")

/**
 * Counts one OAuth authorization request (`/oauth/authorize`, or a pushed one at `/oauth/par`,
 * both open to anyone) against the client address's hourly budget: each may store an interaction
 * (and a session) for an hour, so nobody can fill the store at speed; over it fails with
 * RateLimited. The same machinery as registrations, under a key of its own.
 */
export const checkAuthorizationLimit = (clientAddress: string) =>
  hourlyBudget(`oauthauthz:${clientAddress}`, (limits) => limits.authorizationRequestsPerHour, "authorization requests from this address in an hour")
