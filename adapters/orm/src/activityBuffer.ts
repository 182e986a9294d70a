/**
 * Group commit for activity entries that belong to no change (reads, refused calls): `record`
 * appends to an in-process buffer and resolves once its entry is written; one flusher at a time
 * writes the buffer in one multi-row statement at the end of the event-loop turn (or after
 * `delayMs`), so calls answered side by side share one insert and a call is answered only after
 * its entry is in the database. Entries written with a change go in the writer's transaction
 * instead (`insertActivity`).
 *
 * While the database fails, `record` rejects after the first failed attempt but the entry stays
 * queued and is retried in the background (the call is answered; its entry follows when the
 * database is back). With a spool (`activitySpool.ts`) such an entry is first appended to local
 * disk, and `record` rejects only once it is there, so a process killed during the outage loses
 * none; the spool is emptied once everything queued is written. Limit: past `maxEntries` pending
 * entries the oldest are dropped from memory (and counted on stderr); spooled ones stay on disk.
 */
import type { ActivitySpool } from "./activitySpool.ts"
import { isDataError, isUniqueViolation } from "./failures.ts"
import type { ActivityRow } from "./mapping.ts"
import { json, type Sql } from "./sql.ts"

export interface ActivityBufferOptions {
  /** How long the first pending entry waits for company (default 0: the end of the current turn). */
  readonly delayMs?: number
  /** This many pending entries are flushed at once (default 500); also the most per statement. */
  readonly batchSize?: number
  /** Most entries kept while the database is away (default 50 000); the oldest go first. */
  readonly maxEntries?: number
  /** First retry delay after a failed flush (default 100 ms), doubled up to 5 s. */
  readonly retryMs?: number
  /** Where entries go while the database fails, so they outlive the process (default: nowhere). */
  readonly spool?: ActivitySpool
}

/** The buffer in front of the `activity` table. */
export interface ActivityBuffer {
  /**
   * Queues an entry; resolves when it is written, rejects when the first attempt fails (the entry
   * stays queued and is retried). Safe to ignore: a rejection nobody awaits is not reported.
   */
  readonly record: (row: ActivityRow) => Promise<void>
  /** Writes every entry recorded before the call; rejects (keeping them) if the database fails. */
  readonly flush: () => Promise<void>
  /** Flushes, retrying for up to `waitMs`, then stops; entries left unwritten are reported on stderr. */
  readonly close: (waitMs: number) => Promise<void>
}

// One statement for any number of rows (a fixed text, so it is prepared once per connection).
// A (channel, request_id) already written, by a change or an earlier flush, is skipped.
const INSERT = `insert into activity (id, account_id, at, channel, actor, action, site_id, article_id, status, error_code, duration_ms, request_id)
  select * from unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::jsonb[], $6::text[], $7::text[], $8::text[],
    $9::text[], $10::text[], $11::int[], $12::text[])
  on conflict (channel, request_id) do nothing`

/** The rows as the statement's twelve column arrays. */
const columns = (rows: ReadonlyArray<ActivityRow>): Array<Array<unknown>> => [
  rows.map((r) => r.id),
  rows.map((r) => r.accountId ?? null),
  rows.map((r) => r.at.toISOString()),
  rows.map((r) => r.channel),
  rows.map((r) => json(r.actor)),
  rows.map((r) => r.action),
  rows.map((r) => r.siteId ?? null),
  rows.map((r) => r.articleId ?? null),
  rows.map((r) => r.status),
  rows.map((r) => r.errorCode ?? null),
  rows.map((r) => r.durationMs),
  rows.map((r) => r.requestId),
]

/**
 * Writes `rows` in one statement. When the database refuses the data itself (a value too long, a
 * duplicate id), sending it again cannot help: the rows are written one by one and the refused
 * ones dropped, so one bad entry does not hold back the others.
 */
export const write = async (sql: Sql, rows: ReadonlyArray<ActivityRow>): Promise<void> => {
  try {
    await sql(INSERT, columns(rows))
  } catch (e) {
    if (!isDataError(e)) throw e
    if (rows.length > 1) {
      for (const row of rows) await write(sql, [row])
      return
    }
    // a duplicate id is an entry written already (the port's record is idempotent)
    if (!isUniqueViolation(e)) console.error(`activity: dropped entry ${rows[0]?.requestId}, refused by the database:`, e)
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)).unref())

interface Pending {
  readonly seq: number
  readonly row: ActivityRow
  /** Already in the spool. */
  spooled: boolean
  /** Whoever waits for this entry's first attempt; gone once told. */
  readonly waiter?: { readonly resolve: () => void; readonly reject: (e: unknown) => void }
}

/** A group-commit queue writing through `sql`. */
export const activityBuffer = (sql: Sql, options: ActivityBufferOptions = {}): ActivityBuffer => {
  const delayMs = options.delayMs ?? 0
  const batchSize = options.batchSize ?? 500
  const maxEntries = options.maxEntries ?? 50_000
  const retryMs = options.retryMs ?? 100
  const spool = options.spool
  /** Whether the spool may hold entries (cleared once everything queued is written). */
  let spoolInUse = false
  /** Spooled entries were dropped from memory: only a replay after this process writes them. */
  let spoolKeeps = false
  /** Appends the entries not in the spool yet; resolves when they are on disk (or the disk failed). */
  const toSpool = (entries: ReadonlyArray<Pending>): Promise<void> => {
    const fresh = entries.filter((p) => !p.spooled)
    if (spool === undefined || fresh.length === 0) return Promise.resolve()
    for (const p of fresh) p.spooled = true
    spoolInUse = true
    return spool.append(fresh.map((p) => p.row)).catch((e: unknown) => {
      console.error(`activity: could not spool ${fresh.length} entries to disk:`, e instanceof Error ? e.message : e)
    })
  }
  let pending: Array<Pending> = []
  let inFlight: Array<Pending> = []
  let flushing: Promise<void> | undefined
  let timer: { readonly cancel: () => void } | undefined
  let failures = 0
  let lastSeq = 0
  let closed = false

  const dropOldest = () => {
    const excess = pending.length - maxEntries
    if (excess <= 0) return
    const dropped = pending.slice(0, excess)
    pending = pending.slice(excess)
    if (dropped.some((p) => p.spooled)) spoolKeeps = true
    for (const p of dropped) p.waiter?.reject(new Error("The activity buffer is full; the entry was dropped."))
    console.error(`activity: the buffer is full (${maxEntries} entries); dropped the ${excess} oldest`)
  }
  const schedule = (ms: number) => {
    if (closed || timer !== undefined || flushing !== undefined || pending.length === 0) return
    const fire = () => {
      timer = undefined
      runOnce().catch(() => {})
    }
    if (ms <= 0) {
      const immediate = setImmediate(fire)
      timer = { cancel: () => clearImmediate(immediate) }
    } else {
      const timeout = setTimeout(fire, ms)
      timeout.unref()
      timer = { cancel: () => clearTimeout(timeout) }
    }
  }
  /** Writes one batch; on failure the batch goes back to the front and a retry is scheduled. */
  const runOnce = (): Promise<void> => {
    if (flushing) return flushing
    timer?.cancel()
    timer = undefined
    const batch = pending.slice(0, batchSize)
    inFlight = batch
    pending = pending.slice(batch.length)
    flushing = write(sql, batch.map((p) => p.row)).then(
      () => {
        failures = 0
        inFlight = []
        flushing = undefined
        for (const p of batch) p.waiter?.resolve()
        if (spoolInUse && !spoolKeeps && pending.length === 0 && spool !== undefined) {
          spoolInUse = false
          spool.clear().catch(() => undefined)
        }
        schedule(pending.length >= batchSize ? 0 : delayMs)
      },
      (e: unknown) => {
        // The batch and everything queued behind it: spooled, their callers told at once (the
        // retries go on in the background), and queued again for them.
        const queued = batch.concat(pending)
        const waiters = queued.map((p) => p.waiter)
        void toSpool(queued).then(() => {
          for (const w of waiters) w?.reject(e)
        })
        pending = queued.map(({ seq, row, spooled }) => ({ seq, row, spooled }))
        inFlight = []
        flushing = undefined
        dropOldest()
        schedule(Math.min(5_000, retryMs * 2 ** failures++))
        throw e
      },
    )
    return flushing
  }
  const oldestSeq = (): number | undefined => inFlight[0]?.seq ?? pending[0]?.seq
  /** Until every entry up to the last recorded one is written; a failed attempt of its own rejects. */
  const flush = async (): Promise<void> => {
    const target = lastSeq
    for (let seq = oldestSeq(); seq !== undefined && seq <= target; seq = oldestSeq()) {
      if (flushing) await flushing.catch(() => {})
      else await runOnce()
    }
  }
  return {
    record: (row) => {
      // While the database is failing nobody waits for it: the entry is queued for the retries (and
      // spooled) at once.
      let written: Promise<void>
      if (failures > 0) {
        const entry: Pending = { seq: ++lastSeq, row, spooled: false }
        pending.push(entry)
        written = toSpool([entry]).then(() => Promise.reject(new Error("The database is failing; the entry is queued for retry.")))
      } else {
        written = new Promise<void>((resolve, reject) => {
          pending.push({ seq: ++lastSeq, row, spooled: false, waiter: { resolve, reject } })
        })
      }
      written.catch(() => {})
      if (pending.length > maxEntries) dropOldest()
      // a full batch goes at once, unless the database just failed (then the retry timer decides)
      if (pending.length >= batchSize && flushing === undefined && failures === 0) runOnce().catch(() => {})
      else schedule(delayMs)
      return written
    },
    flush,
    close: async (waitMs) => {
      const giveUpAt = Date.now() + waitMs
      let written = false
      for (let attempt = 0; !written && Date.now() < giveUpAt; attempt++) {
        const outcome = await Promise.race([flush().then(() => true, () => false), sleep(giveUpAt - Date.now())])
        written = outcome === true
        if (!written) await sleep(Math.min(giveUpAt - Date.now(), retryMs * 2 ** attempt))
      }
      closed = true
      timer?.cancel()
      const unwritten = [...inFlight, ...pending]
      if (unwritten.length > 0) {
        await toSpool(unwritten)
        console.error(
          spool !== undefined
            ? `activity: ${unwritten.length} entries were not written before closing (the database did not answer); they are spooled to disk and written by the next instance to start`
            : `activity: ${unwritten.length} entries were not written before closing (the database did not answer)`,
        )
      }
      await spool?.close()
    },
  }
}
