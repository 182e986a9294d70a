import { Context, type Effect } from "effect"

/** The wall clock, as a service so tests fix "now". */
export class Clock extends Context.Service<Clock, {
  /** Milliseconds since the Unix epoch. */
  readonly now: Effect.Effect<number>
}>()("core/Clock") {}

/** Identifier generation. */
export class Ids extends Context.Service<Ids, {
  /** A new unique id with the given prefix, such as `rev_…`. */
  readonly make: (prefix: string) => Effect.Effect<string>
}>()("core/Ids") {}

/** Secrets: API key generation and hashing, password hashing. */
export class Secrets extends Context.Service<Secrets, {
  /** A new API key: `cs_` followed by at least 32 random base62 characters. */
  readonly generateApiKey: Effect.Effect<string>
  /** A deterministic hash of an API key, used to look it up. */
  readonly hashApiKey: (key: string) => Effect.Effect<string>
  /** A salted, memory-hard hash of a password. */
  readonly hashPassword: (password: string) => Effect.Effect<string>
  /** Checks a password against its stored hash in constant time. */
  readonly verifyPassword: (password: string, hash: string) => Effect.Effect<boolean>
}>()("core/Secrets") {}

/** Limits in force; defaults are the seed's. */
export interface LimitSettings {
  readonly requestsPerMinute: number
  readonly dailyEdits: number
  readonly maxPerPage: number
  readonly authFailuresPerMinute: number
  /** OAuth client registrations (RFC 7591) per client address per hour. */
  readonly clientRegistrationsPerHour: number
  /**
   * OAuth authorization requests (`/oauth/authorize`, `/oauth/par`) per client address per hour:
   * each may store an interaction for an hour.
   */
  readonly authorizationRequestsPerHour: number
}

/** The service's configuration as the core needs it. */
export class Settings extends Context.Service<Settings, {
  readonly limits: LimitSettings
  /** `{base_url}` without a trailing slash. */
  readonly publicUrl: string
}>()("core/Settings") {}

/** The contract's default limits. */
export const defaultLimits: LimitSettings = {
  requestsPerMinute: 60,
  dailyEdits: 200,
  maxPerPage: 100,
  authFailuresPerMinute: 30,
  clientRegistrationsPerHour: 20,
  authorizationRequestsPerHour: 60,
}
