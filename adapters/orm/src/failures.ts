/**
 * Database failures as the core sees them: EditConflict for lost races in an edit, Unavailable
 * when the database cannot serve the call now (a retry later can succeed), and a defect for
 * anything else: a statement the database refuses for what it says (a data exception from a
 * value the service failed to validate, a syntax error) fails again on every retry, so it is a
 * 500 `internal` logged with its cause, never a 503 that tells the client to retry while
 * `/readyz` says ready.
 */
import { EditConflict, Unavailable } from "@content-site/core"
import { Effect } from "effect"

const CONFLICT_STATES = new Set([
  "55P03", // lock_not_available (lock_timeout)
  "40001", // serialization_failure
  "40P01", // deadlock_detected
  "23505", // unique_violation
])

/** SQLSTATE classes of a database that cannot serve now, whatever the statement. */
const UNAVAILABLE_CLASSES = new Set([
  "08", // connection exception
  "28", // invalid authorization (the service's credentials are refused)
  "53", // insufficient resources (disk full, out of memory, too many connections)
  "57", // operator intervention (shutdown, crash, cannot connect now, database dropped, statement timeout)
  "58", // system error (I/O)
])

/** Single SQLSTATEs of a database that cannot serve now. */
const UNAVAILABLE_STATES = new Set([
  "3D000", // invalid_catalog_name: the database is gone (dropped while the service runs)
  "25006", // read_only_sql_transaction: connected to a standby, as during a failover
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

/**
 * Whether the database could not serve the call now, so that a retry later can succeed: an error
 * without a SQLSTATE (the connection refused, broken or timed out, the pool exhausted, the client
 * closed), a SQLSTATE of an unreachable or failing database, or a lost race (a retry runs alone).
 * A JavaScript TypeError, RangeError, ReferenceError or SyntaxError is a fault of the code.
 */
export const isUnavailable = (error: unknown): boolean => {
  const state = stateOf(error)
  if (state === undefined) {
    return !(error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError || error instanceof SyntaxError)
  }
  // 08P01 protocol_violation is in the connection class but about the message sent (a NUL in a
  // text parameter is one): sending it again fails again.
  if (state === "08P01") return false
  return UNAVAILABLE_CLASSES.has(state.slice(0, 2)) || UNAVAILABLE_STATES.has(state) || CONFLICT_STATES.has(state)
}

/**
 * A database error as Unavailable: nothing was written, the caller may retry. The answer does not
 * say why (the driver's message names the database's address, `connect ECONNREFUSED 10.0.0.5:5432`):
 * the adapter's outage events in the log do.
 */
export const toUnavailable = (_error: unknown): Unavailable =>
  new Unavailable({ detail: "The database cannot answer now; nothing was changed. Retry in a few seconds." })

/**
 * What an edit transaction the database failed is answered: whether its `COMMIT` was heard is not
 * known when the connection broke on it (the change may be saved, its answer lost), so the
 * answer does not say "nothing was changed"; what holds either way is that the change is whole or
 * absent, and that a retry with the same `Idempotency-Key` (or `If-Match`) cannot apply it twice.
 */
export const EDIT_UNAVAILABLE_DETAIL =
  "The database cannot answer now; the change was saved whole or not at all. Retry in a few seconds: with the same Idempotency-Key (or If-Match), a retry cannot apply it twice."

/** A failure of the edit transaction: a lost race is EditConflict, an unavailable database Unavailable, anything else none (a defect). */
export const editFailureOf = (error: unknown): EditConflict | Unavailable | undefined =>
  isConflict(error)
    ? new EditConflict({ detail: "Another change to this article was being written; nothing was changed. Retry." })
    : isUnavailable(error)
      ? new Unavailable({ detail: EDIT_UNAVAILABLE_DETAIL })
      : undefined

/**
 * Runs a database call: a failure `domainError` names becomes that error, any other a defect
 * (the error itself, so that it is logged with its cause and answered 500 without its text).
 */
export const tryDatabase = <A, E>(f: () => Promise<A>, domainError: (error: unknown) => E | undefined): Effect.Effect<A, E> =>
  Effect.tryPromise({ try: f, catch: (error) => error }).pipe(
    Effect.catch((error) => {
      const known = domainError(error)
      return known === undefined ? Effect.die(error) : Effect.fail(known)
    }),
  )

/** Runs a database call; a failure of an unavailable database becomes Unavailable, any other a defect. */
export const attempt = <A>(f: () => Promise<A>): Effect.Effect<A, Unavailable> =>
  tryDatabase(f, (error) => (isUnavailable(error) ? toUnavailable(error) : undefined))
