/** Idempotency keys in the database, so that every instance answers a retry the same way. */
import { IdempotencyStore, type KeptAnswer, type Reservation } from "@content-site/core"
import { Effect, Layer } from "effect"
import { attempt, isUnavailable } from "./failures.ts"
import { outsideRequests } from "./outsideRequests.ts"
import { json, type Sql } from "./sql.ts"

// Status 0: the request was answered and nothing of its answer is kept (`rerun`).
const RERUN = 0
// One statement reserves the key: a new row, or a row that is free (expired, pending past its
// lease with no change applied, or kept nothing and asked by the same request again) taken over.
// A pending row's revision columns say its change was applied (the writer sets them in the
// change's transaction); `complete` then writes the answer over them. Concurrent reservations
// of one key queue on the row; exactly one inserts or updates it, the others find it held and read it.
// The holder's own token ($7, new for each reservation) is set with it: `complete` and `release` are
// each one statement conditional on it, so a first holder whose key was taken over after its lease
// ended (it still ran) neither writes its answer over its successor's nor frees its successor's key.
const RESERVE = `insert into idempotency_keys (account_id, key, fingerprint, status, headers, body, revision_article_id, revision_number, lease_token, lease_until, expires_at)
  values ($1, $2, $3, null, null, null, null, null, $7, $4::timestamptz, $5::timestamptz)
  on conflict (account_id, key) do update set fingerprint = excluded.fingerprint, status = null, headers = null, body = null,
    revision_article_id = null, revision_number = null, lease_token = excluded.lease_token, lease_until = excluded.lease_until, expires_at = excluded.expires_at
  where idempotency_keys.expires_at <= $6::timestamptz
    or (idempotency_keys.status is null and idempotency_keys.lease_until <= $6::timestamptz and idempotency_keys.revision_number is null)
    or (idempotency_keys.status = ${RERUN} and idempotency_keys.fingerprint = excluded.fingerprint)
  returning 1 as reserved`
const HOLDER = `select fingerprint, status, headers, body, revision_article_id, revision_number, lease_until <= $3::timestamptz as lease_ended
  from idempotency_keys where account_id = $1 and key = $2`
const COMPLETE = `update idempotency_keys set status = $4, headers = $5::jsonb, body = $6, revision_article_id = $7, revision_number = $8
  where account_id = $1 and key = $2 and lease_token = $3 and status is null`
// A key whose change was applied is not freed (a retry would make the change again): its lease ends
// now instead, so that a retry is told at once that it was applied.
const RELEASE = `with freed as (
    delete from idempotency_keys where account_id = $1 and key = $2 and lease_token = $3 and status is null and revision_number is null
  )
  update idempotency_keys set lease_until = 'epoch'::timestamptz
  where account_id = $1 and key = $2 and lease_token = $3 and status is null and revision_number is not null`

interface HolderRow {
  readonly fingerprint: string
  readonly status: number | null
  readonly headers: Record<string, string> | null
  readonly body: string | null
  readonly revision_article_id: string | null
  readonly revision_number: number | null
  readonly lease_ended: boolean
}

/** What a completed row keeps. */
const keptOf = (row: HolderRow & { status: number }): KeptAnswer => {
  if (row.status === RERUN) return { rerun: true }
  const revision = row.revision_article_id !== null && row.revision_number !== null ? { articleId: row.revision_article_id, number: row.revision_number } : undefined
  return { status: row.status, headers: row.headers ?? {}, body: row.body ?? "", ...(revision === undefined ? {} : { revision }) }
}

/** The columns `complete` writes for what is kept. */
const columnsOf = (kept: KeptAnswer): ReadonlyArray<unknown> =>
  "rerun" in kept
    ? [RERUN, null, null, null, null]
    : [kept.status, json(kept.headers), kept.body, kept.revision?.articleId ?? null, kept.revision?.number ?? null]

/** How long a release or an answer the database could not take is tried again: the lease frees the key after that anyway. */
const LATER_MS = 5 * 60 * 1000
/** Statements tried again at once at most (an outage under load; an answer is a few KiB): past it a key waits for its lease. */
const MAX_LATER = 2_000

export interface IdempotencyStoreOptions {
  /** Whether the database was closed: nothing is tried again then. */
  readonly closed?: () => boolean
}

/** The IdempotencyStore on PostgreSQL / PGlite (table `idempotency_keys`). */
export const ormIdempotencyStore = (sql: Sql, options: IdempotencyStoreOptions = {}) => {
  const closed = options.closed ?? (() => false)
  let waiting = 0
  /**
   * A `complete` or `release` refused by an outage is tried again in the background until the
   * database takes it. Else the key stays pending for its whole lease (5 minutes), and the retry
   * with the same key that a 503 invites, or that a client whose answer was lost sends, is told
   * that its request "is still being processed" (none is) instead of running or getting the first
   * answer. Late is safe: each statement is conditional on the holder's token (a successor's key is
   * never touched), a release frees only a key whose change was not applied, and both wait for the
   * row lock of a change transaction still ending.
   */
  const tryLater = (text: string, params: ReadonlyArray<unknown>) => {
    if (waiting >= MAX_LATER) return
    waiting++
    const giveUpAt = Date.now() + LATER_MS
    let delayMs = 250
    const again = () => {
      if (closed()) return void waiting--
      sql(text, params).then(
        () => void waiting--,
        (error: unknown) => {
          if (!isUnavailable(error) || closed() || Date.now() + delayMs > giveUpAt) return void waiting--
          setTimeout(again, delayMs).unref()
          delayMs = Math.min(delayMs * 2, 5_000)
        },
      )
    }
    // (its timer set outside the request: what it runs, long after the answer, is no call of that request's)
    outsideRequests(() => setTimeout(again, delayMs).unref())
    delayMs *= 2
  }
  /** Runs one of the holder's statements; refused by an outage, it is Unavailable now and tried again later. */
  const holderStatement = (text: string, params: ReadonlyArray<unknown>) =>
    Effect.asVoid(attempt(() => sql(text, params))).pipe(Effect.tapError(() => Effect.sync(() => tryLater(text, params))))
  return Layer.succeed(IdempotencyStore, {
    reserve: (accountId, key, fingerprint, times) =>
      attempt(async (): Promise<Reservation> => {
        // A held row can vanish between the two statements only when it expired meanwhile; then reserve again.
        for (let round = 0; round < 3; round++) {
          const token = crypto.randomUUID()
          const reserved = await sql<{ reserved: number }>(RESERVE, [
            accountId,
            key,
            fingerprint,
            new Date(times.leaseUntilMs).toISOString(),
            new Date(times.expiresAtMs).toISOString(),
            new Date(times.nowMs).toISOString(),
            token,
          ])
          if (reserved.length > 0) return { kind: "reserved", token }
          const holder = (await sql<HolderRow>(HOLDER, [accountId, key, new Date(times.nowMs).toISOString()]))[0]
          if (holder === undefined) continue
          if (holder.status === null) {
            // pending; with a revision, its change was applied (in the change's transaction): once the
            // lease has ended its request is gone and its answer was never kept
            return holder.lease_ended && holder.revision_article_id !== null && holder.revision_number !== null
              ? { kind: "applied", fingerprint: holder.fingerprint, revision: { articleId: holder.revision_article_id, number: holder.revision_number } }
              : { kind: "pending", fingerprint: holder.fingerprint }
          }
          return { kind: "completed", fingerprint: holder.fingerprint, answer: keptOf({ ...holder, status: holder.status }) }
        }
        throw new Error("idempotency key: could not reserve or read it")
      }),
    complete: (accountId, key, token, answer) => holderStatement(COMPLETE, [accountId, key, token, ...columnsOf(answer)]),
    release: (accountId, key, token) => holderStatement(RELEASE, [accountId, key, token]),
  })
}
