/**
 * Housekeeping of the bookkeeping tables, which would otherwise grow by one row per key for ever:
 * request counters of ended windows (`limit_counters`: one row per account and per client address
 * that ever failed to authenticate), edit counters of past days (`edit_counters`) and idempotency
 * keys past their 24 hours (`idempotency_keys`), and the term changes of edits, folded into the
 * term counts (`article_term_changes` into `article_term_counts`). Each run
 * works in bounded batches; every instance runs it now and then, and runs that overlap only
 * share the work (a delete is idempotent).
 *
 * A counter row is deleted only while its window is still the old one: the condition is checked
 * again on the row itself, so a row a lease has just moved to a new window stays.
 *
 * The activity log is history people read, so nothing here deletes it; operators prune it with
 * `npm run admin -- activity prune --older-than DAYS` (`pruneActivity`). Housekeeping creates its
 * coming months' partitions ahead of time (`partitions.ts`).
 */
import { listPartitions } from "./partitions.ts"
import type { Sql } from "./sql.ts"
import { consoleEventLog, messageOf, type OrmEventLog } from "./eventLog.ts"

/** Counter rows older than this are of ended windows and past days (the longest window is a day). */
export const COUNTER_KEEP_MS = 2 * 86_400_000
/** Rows one statement deletes at most. */
export const HOUSEKEEPING_BATCH = 5_000
/** Statements one run makes at most per table, so a run stays short; the next run goes on. */
const MAX_BATCHES = 20

const STALE_LIMIT_COUNTERS = `delete from limit_counters t
  where t.window_start < $1::bigint and t.key in (select key from limit_counters where window_start < $1::bigint limit $2)`
const STALE_EDIT_COUNTERS = `delete from edit_counters t
  where t.day < $1 and (t.account_id, t.day) in (select account_id, day from edit_counters where day < $1 limit $2)`
const EXPIRED_IDEMPOTENCY_KEYS = `delete from idempotency_keys t
  where t.expires_at < $1::timestamptz and (t.account_id, t.key) in (select account_id, key from idempotency_keys where expires_at < $1::timestamptz limit $2)`
const OLD_ACTIVITY = `delete from activity t
  where t.at < $1::timestamptz and (t.id, t.at) in (select id, at from activity where at < $1::timestamptz limit $2)`

/**
 * Folds the term changes edits appended (`article_term_changes`, oldest first, a batch at a time)
 * into `article_term_counts`, in one statement: the rows it deletes are the ones it adds, so a
 * one-word search's total (the sum of both tables) reads the same before and after, and a row
 * another run folded meanwhile is neither deleted nor added twice.
 */
const FOLD_TERM_CHANGES = `with moved as (
    delete from article_term_changes where id in (select id from article_term_changes order by id limit $1)
    returning account_id, site_id, status, terms, d
  ), folded as (
    insert into article_term_counts (account_id, term, site_id, status, n)
    select account_id, term, site_id, status, sum(d) from moved, unnest(terms) as term
    group by 1, 2, 3, 4 having sum(d) <> 0 order by 1, 2, 3, 4
    on conflict (account_id, term, site_id, status) do update set n = article_term_counts.n + excluded.n
  )
  select count(*)::int as n from moved`

/** Folds term changes in batches until a batch folds less than a full one; answers the rows folded. */
const foldTermChanges = async (sql: Sql, maxBatches: number): Promise<number> => {
  let folded = 0
  for (let i = 0; i < maxBatches; i++) {
    const n = (await sql<{ n: number }>(FOLD_TERM_CHANGES, [HOUSEKEEPING_BATCH]))[0]?.n ?? 0
    folded += n
    if (n < HOUSEKEEPING_BATCH) break
  }
  return folded
}

/** Runs `statement` in batches until a batch deletes less than a full one; answers the rows deleted. */
const inBatches = async (sql: Sql, statement: string, cutoff: unknown, maxBatches: number): Promise<number> => {
  let deleted = 0
  for (let i = 0; i < maxBatches; i++) {
    const rows = await sql<{ n: number }>(`with d as (${statement} returning 1) select count(*)::int as n from d`, [cutoff, HOUSEKEEPING_BATCH])
    const n = rows[0]?.n ?? 0
    deleted += n
    if (n < HOUSEKEEPING_BATCH) break
  }
  return deleted
}

/** What one run deleted. */
export interface Swept {
  readonly limitCounters: number
  readonly editCounters: number
  readonly idempotencyKeys: number
  /** Rows of `article_term_changes` folded into `article_term_counts`. */
  readonly termChanges: number
}

/** One housekeeping run at `now` (ms since the epoch). */
export const sweepCounters = async (sql: Sql, now: number): Promise<Swept> => {
  const cutoff = now - COUNTER_KEEP_MS
  return {
    limitCounters: await inBatches(sql, STALE_LIMIT_COUNTERS, cutoff, MAX_BATCHES),
    editCounters: await inBatches(sql, STALE_EDIT_COUNTERS, new Date(cutoff).toISOString().slice(0, 10), MAX_BATCHES),
    idempotencyKeys: await inBatches(sql, EXPIRED_IDEMPOTENCY_KEYS, new Date(now).toISOString(), MAX_BATCHES),
    termChanges: await foldTermChanges(sql, MAX_BATCHES),
  }
}

/** What a prune removed. */
export interface Pruned {
  /** Entries removed in all. */
  readonly deleted: number
  /** Month partitions dropped whole. */
  readonly droppedPartitions: ReadonlyArray<string>
}

/**
 * Deletes activity entries from before `before`: months that end by then are dropped whole (their
 * rows counted first, from the partition alone, and their days' counts deleted with the table);
 * the rows of the month `before` falls in are deleted in batches, which touch that month's
 * partition only (the delete trigger keeps the counts).
 */
export const pruneActivity = async (sql: Sql, before: Date): Promise<Pruned> => {
  let deleted = 0
  const droppedPartitions: Array<string> = []
  for (const partition of await listPartitions(sql)) {
    if (partition.to > before) continue
    const rows = await sql<{ n: number }>(`select count(*)::int as n from "${partition.name}"`, [])
    // a dropped table fires no delete trigger: its days' counts go with it, in the same statement
    const days = [partition.from.toISOString().slice(0, 10), partition.to.toISOString().slice(0, 10)]
    await sql(`do $$ begin
      delete from activity_counts where day >= '${days[0]}' and day < '${days[1]}';
      drop table "${partition.name}";
    end $$`, [])
    deleted += rows[0]?.n ?? 0
    droppedPartitions.push(partition.name)
  }
  deleted += await inBatches(sql, OLD_ACTIVITY, before.toISOString(), Number.POSITIVE_INFINITY)
  return { deleted, droppedPartitions }
}

/**
 * Runs `more` (the activity log's partitions ahead, the replay of dead instances' journals), then `sweepCounters` (whether
 * `more` succeeded or not), every `intervalMs`
 * (first run after one interval, with up to 10 % jitter so instances started together spread out);
 * failures wait for the next run. Answers the stop.
 */
export const scheduleHousekeeping = (
  sql: Sql,
  intervalMs: number,
  more: () => Promise<void> = async () => {},
  now: () => number = Date.now,
  log: OrmEventLog = consoleEventLog,
): (() => void) => {
  let timer: ReturnType<typeof setTimeout> | undefined
  let stopped = false
  const next = () => {
    if (stopped) return
    timer = setTimeout(() => {
      // the sweep does not wait on `more`'s success: a journal that cannot be replayed yet (or
      // partitions that cannot be made) must not let expired counters and keys pile up meanwhile
      more()
        .catch((e: unknown) => log.warn({ err: messageOf(e) }, "housekeeping: could not make the coming partitions or replay a journal; the next run tries again"))
        .then(() => sweepCounters(sql, now()))
        .then(
          (swept) => {
            if (swept.limitCounters + swept.editCounters + swept.idempotencyKeys > 0) {
              log.info(
                swept,
                `housekeeping: deleted ${swept.limitCounters} request counters of ended windows, ${swept.editCounters} edit counters of past days, ${swept.idempotencyKeys} expired idempotency keys`,
              )
            }
          },
          (e: unknown) => log.warn({ err: messageOf(e) }, "housekeeping failed; the next run tries again"),
        )
        .finally(next)
    }, intervalMs * (1 + Math.random() * 0.1))
    timer.unref()
  }
  next()
  return () => {
    stopped = true
    if (timer !== undefined) clearTimeout(timer)
  }
}
