/** Database failures as the core sees them: EditConflict for lost races, Unavailable for the rest. */
import { EditConflict, Unavailable } from "@content-site/core"
import { Effect } from "effect"

const CONFLICT_STATES = new Set([
  "55P03", // lock_not_available (lock_timeout)
  "40001", // serialization_failure
  "40P01", // deadlock_detected
  "23505", // unique_violation
])

/** The SQLSTATE of a database error (looked up through `cause`/`previous`), if any. */
export const stateOf = (error: unknown): string | undefined => {
  let e: unknown = error
  for (let i = 0; i < 4 && e && typeof e === "object"; i++) {
    const code = (e as { code?: unknown; sqlState?: unknown }).sqlState ?? (e as { code?: unknown }).code
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code
    e = (e as { cause?: unknown; previous?: unknown }).cause ?? (e as { previous?: unknown }).previous
  }
  return undefined
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message.split("\n")[0] : String(error))

/** Whether the error is a lost race (lock timeout, serialization failure, deadlock, duplicate key). */
export const isConflict = (error: unknown): boolean => {
  const state = stateOf(error)
  return state !== undefined && CONFLICT_STATES.has(state)
}

/** Whether the error is a duplicate key. */
export const isUniqueViolation = (error: unknown): boolean => stateOf(error) === "23505"

/**
 * Whether the error is about the data sent (class 22 data exception, class 23 integrity violation):
 * sending the same rows again fails again, unlike a lost connection or a timeout.
 */
export const isDataError = (error: unknown): boolean => {
  const state = stateOf(error)
  return state !== undefined && (state.startsWith("22") || state.startsWith("23"))
}

/** Any database error as Unavailable: nothing was written, the caller may retry. */
export const toUnavailable = (error: unknown): Unavailable =>
  new Unavailable({ detail: `The database is unavailable: ${messageOf(error)}` })

/** A failure of the edit transaction: a lost race is EditConflict, anything else Unavailable. */
export const toEditFailure = (error: unknown): EditConflict | Unavailable =>
  isConflict(error)
    ? new EditConflict({ detail: "Another change to this article was being written; nothing was changed. Retry." })
    : toUnavailable(error)

/** Runs a database call; any failure becomes Unavailable. */
export const attempt = <A>(f: () => Promise<A>): Effect.Effect<A, Unavailable> =>
  Effect.tryPromise({ try: f, catch: toUnavailable })
