/**
 * The activity journal: entries of calls that change nothing (reads, refused calls) are appended to
 * a file of this process under `<DATA_DIR>/activity-journal/<database>/` before the call is
 * answered, and shipped to the database in the background in large batches. Entries written with
 * a change go in the writer's transaction instead (`insertActivity`).
 *
 * - **Append**: one `write` of the entry's JSON line (synchronous, so the line is in the kernel's
 *   page cache when `record` returns: it survives the death of the process). The file is
 *   `fdatasync`ed at most every `syncEveryMs` (50 ms) when something was appended, off the event
 *   loop; a crash of the whole machine can lose the entries of the last unsynced interval.
 * - **Ship**: one shipper at a time reads the journal from where it left off and writes up to
 *   `batchSize` entries in one multi-row insert (`unnest`), at most `shipEveryMs` after the first
 *   unshipped entry (at once when a full batch waits). A failed insert is retried with backoff
 *   (100 ms doubling to 5 s); the entries stay on disk meanwhile, however long the outage lasts.
 * - **Segments**: the journal is a run of files `<pid>-<start time>-<random>.<n>.jsonl`. A fully
 *   shipped segment is deleted once it holds `rotateBytes`; a segment is closed at `maxSegmentBytes`
 *   even while unshipped (a long outage), and deleted once shipped.
 * - **Replay**: files whose process is gone are written, at start and at each housekeeping run, by
 *   whichever instance of the same database claims them first (an atomic rename), then removed.
 * - **Idempotent**: the insert skips an entry whose (channel, request id) is written already within a
 *   day of its time (the unique key is (channel, request_id, at), since a partitioned table's unique
 *   keys hold its partition key), so a replay of entries shipped before the kill writes none twice.
 *   A summary line adds its count, which no key can skip: the statement that adds a batch's counts
 *   also moves its file's mark (`activity_journal_marks`, the bytes whose counts were added) and
 *   adds nothing unless the mark was at most where the batch begins. A batch sent again (its answer
 *   lost) adds nothing; a replay begins at the mark; a file's mark goes with the file.
 * Longer than 300 lines: the journal's whole protocol (append, group fdatasync, shipping,
 * replay of a dead instance's files) in one place, because its guarantees depend on all of it.
 */
import { outsideRequests } from "./outsideRequests.ts"
import { createHash } from "node:crypto"
import fs, { closeSync, fdatasyncSync, ftruncateSync, mkdirSync, openSync, read, readdirSync, unlinkSync, writeSync } from "node:fs"
import { readFile, rename, unlink } from "node:fs/promises"
import { basename, join } from "node:path"
import { ownerAlive, processStartTime } from "./dataDirLock.ts"
import { isDataError, isUniqueViolation } from "./failures.ts"
import type { JournalRow } from "./mapping.ts"
import { ensurePartitions, isMissingPartition } from "./partitions.ts"
import { json, type Sql } from "./sql.ts"
import { consoleEventLog, messageOf, type OrmEventLog } from "./eventLog.ts"

export interface ActivityJournalOptions {
  /** How long the first unshipped entry waits for company (default 100 ms). */
  readonly shipEveryMs?: number
  /** Entries per insert at most (default 2 000); this many waiting are shipped at once. */
  readonly batchSize?: number
  /** How often appended entries are fdatasynced at most (default 50 ms). */
  readonly syncEveryMs?: number
  /** First retry delay after a failed insert (default 100 ms), doubled up to 5 s. */
  readonly retryMs?: number
  /** A fully shipped segment this large is replaced by a new one (default 1 MiB). */
  readonly rotateBytes?: number
  /** A segment this large is closed even while unshipped (default 64 MiB). */
  readonly maxSegmentBytes?: number
  /** Where shipping failures (a database outage) and their end are reported (default: the console). */
  readonly log?: OrmEventLog
}

/** The journal in front of the `activity` table. */
export interface ActivityJournal {
  /**
   * Appends the entry to the journal; resolves at once when it is there. When the disk refuses it,
   * the entry is written to the database directly and the promise says how that went.
   */
  readonly record: (row: JournalRow) => Promise<void>
  /**
   * `record` without a promise when none is needed: undefined once the entry is in the journal
   * (the usual case, so a caller on the hot path need not wait a turn), else `record`'s promise.
   */
  readonly append: (row: JournalRow) => Promise<void> | undefined
  /** Ships every entry recorded before the call; rejects (keeping them) if the database fails. */
  readonly flush: () => Promise<void>
  /** Entries appended but not yet shipped (for tests and reports). */
  readonly backlog: () => number
  /** Ships what is left, retrying for up to `waitMs`, syncs and closes; what is left stays on disk. */
  readonly close: (waitMs: number) => Promise<void>
}

const SUFFIX = ".jsonl"

/**
 * The journal directory of one database under a data directory: instances of different databases
 * may share a DATA_DIR, and an entry must only ever be replayed into its own database. PostgreSQL
 * databases are told apart by host, port and name; the embedded one lives in the directory itself.
 * `kind` "activity-spool" is where releases before the journal spooled entries during outages.
 */
export const journalDir = (dataDir: string, databaseUrl: string | undefined, kind: "activity-journal" | "activity-spool" = "activity-journal"): string => {
  if (databaseUrl === undefined) return join(dataDir, kind, "embedded")
  const url = new URL(databaseUrl)
  const where = `${url.hostname}:${url.port || "5432"}${url.pathname}`
  return join(dataDir, kind, createHash("sha256").update(where).digest("hex").slice(0, 16))
}

// One statement for any number of rows (a fixed text, so it is prepared once per connection). An
// entry whose (channel, request_id) is written already within a day of its time, by a change or an
// earlier shipment, is skipped; the unique key catches an exact copy inserted at the same moment.
const INSERT = `insert into activity (id, account_id, at, channel, actor, action, site_id, article_id, status, error_code, duration_ms, request_id)
  select u.* from unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::jsonb[], $6::text[], $7::text[], $8::text[],
    $9::text[], $10::text[], $11::int[], $12::text[])
    as u(id, account_id, at, channel, actor, action, site_id, article_id, status, error_code, duration_ms, request_id)
  where not exists (select 1 from activity a where a.channel = u.channel and a.request_id = u.request_id
    and a.at between u.at - interval '1 day' and u.at + interval '1 day')
  on conflict (channel, request_id, at) do nothing`

// The summary entries of refused calls (one per source and minute, `refusedCalls.ts` in the core):
// the first line of a minute inserts the row, every later one adds its count to it, on any instance.
// The lines of a journal file ($14, bytes $15 to $16) add their counts only when the file's mark
// is at most $15 (nothing of them added yet), and move it to $16 in the same statement; a row
// returned says they were added.
const INSERT_SUMMARIES = `with mark as (
    insert into activity_journal_marks (file, bytes, at) values ($14, $16, now())
    on conflict (file) do update set bytes = excluded.bytes, at = excluded.at where activity_journal_marks.bytes <= $15
    returning 1
  )
  insert into activity (id, account_id, at, channel, actor, action, site_id, article_id, status, error_code, duration_ms, request_id, count)
  select u.* from unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::jsonb[], $6::text[], $7::text[], $8::text[],
    $9::text[], $10::text[], $11::int[], $12::text[], $13::int[])
    as u(id, account_id, at, channel, actor, action, site_id, article_id, status, error_code, duration_ms, request_id, count)
  where $14::text is null or exists (select 1 from mark)
  on conflict (channel, request_id, at) do update set count = activity.count + excluded.count
  returning 1 as added`
const MARK_OF = `select bytes from activity_journal_marks where file = $1`
const FORGET_MARK = `delete from activity_journal_marks where file = $1`

/** Where a batch lies in its journal file: the file's name (without a replay's suffix) and its bytes. */
export interface JournalPosition {
  readonly file: string
  readonly start: number
  readonly end: number
}

/** The bytes of `file` whose summary counts were added already (0: none). */
const markOf = async (sql: Sql, file: string): Promise<number> => Number((await sql<{ bytes: number | string }>(MARK_OF, [file]))[0]?.bytes ?? 0)

/** Forgets the mark of a file deleted; a mark left behind (the database did not answer) is harmless. */
const forgetMark = (sql: Sql, file: string): Promise<void> => sql(FORGET_MARK, [file]).then(() => undefined, () => undefined)

/** The marks of journal files, for `replayJournals`. */
export interface JournalMarks {
  readonly of: (file: string) => Promise<number>
  readonly forget: (file: string) => Promise<void>
}

/** The marks of journal files in the database behind `sql`. */
export const journalMarks = (sql: Sql): JournalMarks => ({ of: (file) => markOf(sql, file), forget: (file) => forgetMark(sql, file) })

/** The summary lines of a batch, one row per entry with their counts added (a statement may touch a row once). */
const mergedSummaries = (rows: ReadonlyArray<JournalRow>): Array<JournalRow> => {
  const merged = new Map<string, JournalRow>()
  for (const r of rows) {
    if (r.summary !== true) continue
    const key = `${r.channel}\u0000${r.requestId}\u0000${r.at}`
    const seen = merged.get(key)
    merged.set(key, seen === undefined ? r : { ...seen, count: (seen.count ?? 1) + (r.count ?? 1) })
  }
  return [...merged.values()]
}

/** The rows as the statement's twelve column arrays. */
const columns = (rows: ReadonlyArray<JournalRow>): Array<Array<unknown>> => [
  rows.map((r) => r.id),
  rows.map((r) => r.accountId ?? null),
  rows.map((r) => r.at),
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

/** The first entry of each (channel, request id): one statement cannot skip a copy of its own rows. */
const firstOfEach = (rows: ReadonlyArray<JournalRow>): Array<JournalRow> => {
  const seen = new Set<string>()
  return rows.filter((r) => {
    const key = `${r.channel}\u0000${r.requestId}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/**
 * Writes `rows` in one statement. A month with no partition yet is created and the statement sent
 * again. When the database refuses the data itself (a value too long, a duplicate id), sending it
 * again cannot help: the rows are written one by one and the refused ones dropped, so one bad
 * entry does not hold back the others. Rows of a journal file name their `position` in it: their
 * summary counts are added only if no earlier sending added them; answers false when the file's
 * mark says they were (then nothing of them was added now).
 */
export const write = async (sql: Sql, rows: ReadonlyArray<JournalRow>, position?: JournalPosition, log: OrmEventLog = consoleEventLog): Promise<boolean> => {
  await writeEntries(sql, rows.filter((r) => r.summary !== true), log)
  return writeSummaries(sql, mergedSummaries(rows), position, log)
}

/** Adds the counts of summary lines to their entries (inserted by the first); false when their file's mark says they were. */
const writeSummaries = async (sql: Sql, summaries: ReadonlyArray<JournalRow>, position: JournalPosition | undefined, log: OrmEventLog): Promise<boolean> => {
  if (summaries.length === 0) return true
  const params = [...columns(summaries), summaries.map((r) => r.count ?? 1), position?.file ?? null, position?.start ?? 0, position?.end ?? 0]
  try {
    return (await sql(INSERT_SUMMARIES, params)).length > 0
  } catch (e) {
    if (!isMissingPartition(e)) throw e
    const times = summaries.map((r) => Date.parse(r.at))
    await ensurePartitions(sql, new Date(Math.min(...times)), new Date(Math.max(...times)), log)
    return (await sql(INSERT_SUMMARIES, params)).length > 0
  }
}

const writeEntries = async (sql: Sql, rows: ReadonlyArray<JournalRow>, log: OrmEventLog): Promise<void> => {
  const unique = firstOfEach(rows)
  if (unique.length === 0) return
  try {
    await sql(INSERT, columns(unique))
  } catch (e) {
    if (isMissingPartition(e)) {
      const times = unique.map((r) => Date.parse(r.at))
      await ensurePartitions(sql, new Date(Math.min(...times)), new Date(Math.max(...times)), log)
      await sql(INSERT, columns(unique))
      return
    }
    if (!isDataError(e)) throw e
    if (unique.length > 1) {
      for (const row of unique) await writeEntries(sql, [row], log)
      return
    }
    // a duplicate id is an entry written already (the port's record is idempotent)
    // (the database's sentence only: the error's other fields may quote the row)
    if (!isUniqueViolation(e)) log.error({ request_id: unique[0]?.requestId, err: messageOf(e) }, "activity: dropped an entry the database refused")
  }
}

/** An entry as read back from a journal line (its time is the RFC 3339 text it was written with). */
const rowOf = (line: string): JournalRow | undefined => {
  try {
    const value: unknown = JSON.parse(line)
    // JSON that is no entry object (`null`, a number, an array: a file the service did not write
    // as it writes) is unreadable too; taken as a row it would fail its batch at every replay
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JournalRow) : undefined
  } catch {
    return undefined // a line cut short by a crash of the machine: its call may not have been answered
  }
}

const readAt = (fd: number, buffer: Buffer, position: number): Promise<number> =>
  new Promise((resolve, reject) => read(fd, buffer, 0, buffer.length, position, (e, n) => (e ? reject(e) : resolve(n))))


/**
 * A wait that keeps the process alive (`close` is awaited by whoever is stopping: with an unref'd
 * timer and nothing else left, the process would exit in the middle of its `await`), cleared by
 * `cancel` so that a close that is done early does not hold the process until it ends.
 */
const heldSleep = (ms: number) => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const done = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, ms))
  })
  return { done, cancel: () => clearTimeout(timer) }
}

interface Segment {
  readonly n: number
  readonly path: string
  readonly fd: number
  /** Bytes appended. */
  size: number
  /** Bytes shipped (always at a line's end). */
  shipped: number
  /** Entries appended and shipped (for `backlog`). */
  entries: number
  shippedEntries: number
  /** Bytes known to be on disk. */
  synced: number
  syncing: boolean
  /** Close once the running sync is done (the segment is retired). */
  closeAfterSync: boolean
}

/** This process's journal in `dir`, shipping through `sql`; files are made on the first append. */
export const openActivityJournal = (dir: string, sql: Sql, options: ActivityJournalOptions = {}): ActivityJournal => {
  const shipEveryMs = options.shipEveryMs ?? 100
  const batchSize = options.batchSize ?? 2_000
  const syncEveryMs = options.syncEveryMs ?? 50
  const retryMs = options.retryMs ?? 100
  const rotateBytes = options.rotateBytes ?? 1 << 20
  const maxSegmentBytes = options.maxSegmentBytes ?? 64 << 20
  const log = options.log ?? consoleEventLog
  // room for a full batch of long entries per read
  const readBytes = Math.max(64 << 10, batchSize * 1_024)
  const base = `${process.pid}-${processStartTime(process.pid) ?? "x"}-${Math.random().toString(36).slice(2, 8)}`
  const segments: Array<Segment> = []
  let nextSegment = 0
  let shipping: Promise<void> | undefined
  let shipTimer: ReturnType<typeof setTimeout> | undefined
  let syncTimer: ReturnType<typeof setTimeout> | undefined
  let failures = 0
  let closed = false

  const openSegment = (): Segment => {
    // entries name accounts and actors: readable by the service's user only
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const n = nextSegment++
    const path = join(dir, `${base}.${n}${SUFFIX}`)
    const segment: Segment = {
      n, path, fd: openSync(path, "a+", 0o600), size: 0, shipped: 0, entries: 0, shippedEntries: 0, synced: 0, syncing: false, closeAfterSync: false,
    }
    segments.push(segment)
    return segment
  }
  /** Closes and deletes a fully shipped segment. */
  const retire = (segment: Segment) => {
    segments.splice(segments.indexOf(segment), 1)
    if (segment.syncing) segment.closeAfterSync = true
    else closeSync(segment.fd)
    try {
      unlinkSync(segment.path)
    } catch {
      // gone already
    }
    void forgetMark(sql, basename(segment.path))
  }
  /** Retires shipped segments but the current one, and replaces the current one when it is shipped and large. */
  const tidy = () => {
    for (const s of segments.slice(0, -1)) if (s.shipped >= s.size && !closed) retire(s)
    const current = segments.at(-1)
    if (current !== undefined && current.shipped >= current.size && current.size >= rotateBytes && !closed) {
      openSegment()
      retire(current)
    }
  }
  const unshippedEntries = () => segments.reduce((n, s) => n + s.entries - s.shippedEntries, 0)

  const syncAll = () => {
    syncTimer = undefined
    for (const s of segments) {
      if (s.syncing || s.synced >= s.size) continue
      const target = s.size
      s.syncing = true
      // through the module object, where a test can watch it
      fs.fdatasync(s.fd, (e) => {
        s.syncing = false
        if (e) log.error({ path: s.path, err: e.message }, "activity: could not sync the journal")
        else s.synced = Math.max(s.synced, target)
        if (s.closeAfterSync) closeSync(s.fd)
      })
    }
  }
  const scheduleSync = () => {
    if (syncTimer === undefined && !closed) syncTimer = outsideRequests(() => setTimeout(syncAll, syncEveryMs).unref())
  }
  const scheduleShip = (ms: number) => {
    if (closed || shipTimer !== undefined || shipping !== undefined || unshippedEntries() === 0) return
    shipTimer = outsideRequests(() =>
      setTimeout(() => {
        shipTimer = undefined
        shipOnce().catch(() => undefined)
      }, ms).unref(),
    )
  }

  /** Reads the next entries of the oldest unshipped segment: the rows, the bytes they take and where each row's line ends. */
  const nextBatch = async (segment: Segment): Promise<{ rows: Array<JournalRow>; bytes: number; ends: Array<number> }> => {
    const buffer = Buffer.allocUnsafe(Math.min(readBytes, segment.size - segment.shipped))
    const got = await readAt(segment.fd, buffer, segment.shipped)
    const rows: Array<JournalRow> = []
    const ends: Array<number> = []
    let at = 0
    while (rows.length < batchSize) {
      const end = buffer.indexOf(10, at)
      if (end === -1 || end >= got) break
      const row = rowOf(buffer.toString("utf8", at, end))
      if (row !== undefined) {
        rows.push(row)
        ends.push(segment.shipped + end + 1)
      } else log.warn({ path: segment.path }, "activity: skipped an unreadable line of the journal")
      at = end + 1
    }
    if (at === 0 && got > 0) throw new Error(`an entry of the journal ${segment.path} is longer than ${readBytes} bytes`)
    return { rows, bytes: at, ends }
  }

  /** Ships one batch; on failure the entries stay where they are and a retry is scheduled. */
  const shipOnce = (): Promise<void> => {
    if (shipping) return shipping
    if (shipTimer !== undefined) clearTimeout(shipTimer)
    shipTimer = undefined
    shipping = (async () => {
      tidy()
      const segment = segments.find((s) => s.shipped < s.size)
      if (segment === undefined) return
      const { rows, bytes, ends } = await nextBatch(segment)
      const file = basename(segment.path)
      if (await write(sql, rows, { file, start: segment.shipped, end: segment.shipped + bytes }, log)) {
        segment.shipped += bytes
        segment.shippedEntries += rows.length
      } else {
        // An earlier sending of these lines added their counts and its answer was lost: the batch
        // is shipped up to the file's mark (its entries were written again now, skipped as copies).
        const mark = Math.min(segment.shipped + bytes, await markOf(sql, file))
        if (mark > segment.shipped) {
          segment.shippedEntries += ends.filter((end) => end <= mark).length
          segment.shipped = mark
        }
      }
      if (failures > 0) log.info({ failed_attempts: failures, backlog: unshippedEntries() }, "activity: the database takes the journal's entries again; shipping resumed")
      failures = 0
      tidy()
    })().then(
      () => {
        shipping = undefined
        scheduleShip(unshippedEntries() >= batchSize ? 0 : shipEveryMs)
      },
      (e: unknown) => {
        shipping = undefined
        // Said once per outage: the first failure, then again only after shipping resumed.
        if (failures === 0 && !closed) log.warn({ err: messageOf(e), backlog: unshippedEntries() }, "activity: the database refused the journal's entries; they wait on disk, retrying")
        if (!closed) {
          const retryInMs = Math.min(5_000, retryMs * 2 ** failures++)
          shipTimer = outsideRequests(() =>
            setTimeout(() => {
              shipTimer = undefined
              shipOnce().catch(() => undefined)
            }, retryInMs).unref(),
          )
        }
        throw e
      },
    )
    return shipping
  }

  /** Until every entry appended before the call is shipped; a failed attempt of its own rejects. */
  const flush = async (): Promise<void> => {
    const current = segments.at(-1)
    if (current === undefined) return
    const target = { n: current.n, size: current.size }
    const done = () => segments.every((s) => s.n > target.n || s.shipped >= (s.n === target.n ? target.size : s.size))
    while (!done()) {
      if (shipping) await shipping.catch(() => undefined)
      else await shipOnce()
    }
  }

  const append = (row: JournalRow): Promise<void> | undefined => {
    if (closed) return Promise.reject(new Error("The activity journal is closed."))
    const line = Buffer.from(`${JSON.stringify(row)}\n`)
    let segment: Segment | undefined
    try {
      segment = segments.at(-1)
      if (segment === undefined || segment.size + line.length > maxSegmentBytes) segment = openSegment()
      let written = 0
      while (written < line.length) written += writeSync(segment.fd, line, written)
      segment.size += line.length
      segment.entries++
    } catch (e) {
      // A line the disk took only in part (full half-way) is cut off again: the next line begins
      // where the segment's count of bytes ends, as the shipper reads it.
      if (segment !== undefined) {
        try {
          ftruncateSync(segment.fd, segment.size)
        } catch (cut) {
          log.error({ path: segment.path, err: messageOf(cut) }, "activity: could not cut off a line written in part")
        }
      }
      log.error({ err: messageOf(e) }, "activity: could not append to the journal; writing the entry to the database directly")
      return write(sql, [row], undefined, log).then(() => undefined)
    }
    scheduleSync()
    if (unshippedEntries() >= batchSize && shipping === undefined && failures === 0) outsideRequests(shipOnce).catch(() => undefined)
    else scheduleShip(shipEveryMs)
    return undefined
  }

  return {
    record: (row) => append(row) ?? Promise.resolve(),
    append,
    flush,
    backlog: unshippedEntries,
    close: async (waitMs) => {
      const giveUpAt = Date.now() + waitMs
      let shipped = false
      for (let attempt = 0; !shipped && Date.now() < giveUpAt; attempt++) {
        const deadline = heldSleep(giveUpAt - Date.now())
        const outcome = await Promise.race([flush().then(() => true, () => false), deadline.done]).finally(deadline.cancel)
        shipped = outcome === true
        if (!shipped) await heldSleep(Math.min(giveUpAt - Date.now(), retryMs * 2 ** attempt)).done
      }
      await shipping?.catch(() => undefined)
      closed = true
      if (shipTimer !== undefined) clearTimeout(shipTimer)
      if (syncTimer !== undefined) clearTimeout(syncTimer)
      const left = unshippedEntries()
      for (const s of segments.splice(0)) {
        try {
          if (s.synced < s.size) fdatasyncSync(s.fd)
        } finally {
          if (s.syncing) s.closeAfterSync = true
          else closeSync(s.fd)
        }
        if (s.shipped >= s.size) {
          await unlink(s.path).catch(() => undefined)
          await forgetMark(sql, basename(s.path))
        }
      }
      if (left > 0) {
        log.warn(
          { entries: left, dir },
          `activity: ${left} entries were not written before closing (the database did not answer); they stay in the journal and are written by the next instance to start`,
        )
      }
    },
  }
}

/**
 * Writes the entries of journal files whose process is gone through `sql`, and removes them;
 * answers how many entries were read. A file is claimed by renaming it first, so two instances
 * never replay the same file; a failed write leaves the claimed file for the next run, and the
 * files after it are still replayed (the first failure is thrown once all were tried). A file is
 * read from its mark on (the lines before it were shipped by its process, summary counts and all).
 * Also reads the spool files of releases before the journal (`<pid>-<start>-<random>.jsonl`).
 */
export const replayJournals = async (
  dir: string,
  write: (rows: ReadonlyArray<JournalRow>, position: JournalPosition) => Promise<unknown>,
  batchSize = 2_000,
  marks: JournalMarks = { of: async () => 0, forget: async () => {} },
): Promise<number> => {
  let names: Array<string>
  try {
    names = readdirSync(dir).sort()
  } catch {
    return 0
  }
  let written = 0
  let failed: { error: unknown } | undefined
  for (const name of names) {
    const claimedBy = /\.replaying-(\d+)-([^.]+)$/.exec(name)
    const owner = /^(\d+)-([^-]+)-[a-z0-9]+(?:\.\d+)?\.jsonl$/.exec(name)
    let path = join(dir, name)
    if (claimedBy !== null) {
      // a replay that failed or died half-way: this process tries its own again, another's once it is gone
      const mine = Number(claimedBy[1]) === process.pid
      if (!mine && ownerAlive(Number(claimedBy[1]), claimedBy[2] === "x" ? undefined : claimedBy[2])) continue
    } else if (owner !== null) {
      if (ownerAlive(Number(owner[1]), owner[2] === "x" ? undefined : owner[2])) continue
    } else continue
    const claimed = `${join(dir, name.replace(/\.replaying-.*$/, ""))}.replaying-${process.pid}-${processStartTime(process.pid) ?? "x"}`
    if (claimed !== path) {
      try {
        await rename(path, claimed)
      } catch {
        continue // another instance claimed it first
      }
      path = claimed
    }
    // the file's own name, as its process shipped it (a claim's suffix left out)
    const file = name.replace(/\.replaying-.*$/, "")
    try {
      const text = await readFile(path)
      const mark = await marks.of(file)
      const lines: Array<{ row: JournalRow; end: number }> = []
      for (let at = 0; at < text.length; ) {
        const newline = text.indexOf(10, at)
        const end = newline === -1 ? text.length : newline + 1
        const row = end > mark ? rowOf(text.toString("utf8", at, newline === -1 ? text.length : newline)) : undefined
        if (row !== undefined) lines.push({ row, end })
        at = end
      }
      for (let i = 0; i < lines.length; i += batchSize) {
        const batch = lines.slice(i, i + batchSize)
        const start = i === 0 ? mark : lines[i - 1]!.end
        await write(batch.map((l) => l.row), { file, start, end: batch.at(-1)!.end })
        written += batch.length
      }
      await unlink(path)
      await marks.forget(file)
    } catch (e) {
      // this file stays claimed for the next run; the files after it are not held back by it
      failed ??= { error: e }
    }
  }
  if (failed !== undefined) throw failed.error
  return written
}
