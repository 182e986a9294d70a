/**
 * The activity entries an instance could not write while the database was failing, kept on local
 * disk until they are written: a call refused during an outage is answered only once its entry is
 * in this spool (appended and fsynced), so a process killed before the database returns loses
 * nothing. Each process appends to a file of its own under `<DATA_DIR>/activity-spool/<database>/`,
 * named by its pid and start time; the file goes once every spooled entry is in the database.
 *
 * Files of processes that are gone are replayed, at start and at each housekeeping run, by
 * whichever instance claims them first (an atomic rename). Writing an entry is idempotent by
 * (channel, request id), so an entry both written and still spooled is written once.
 */
import { createHash } from "node:crypto"
import { mkdirSync, readdirSync } from "node:fs"
import { open, readFile, rename, unlink, type FileHandle } from "node:fs/promises"
import { join } from "node:path"
import { ownerAlive, processStartTime } from "./dataDirLock.ts"
import type { ActivityRow } from "./mapping.ts"

export interface ActivitySpool {
  /** Appends the entries and syncs the file; resolves once they are on disk. */
  readonly append: (rows: ReadonlyArray<ActivityRow>) => Promise<void>
  /** Every spooled entry is in the database: removes the file. */
  readonly clear: () => Promise<void>
  /** Closes the file, keeping what it holds (for a replay after this process). */
  readonly close: () => Promise<void>
}

const SUFFIX = ".jsonl"

/**
 * The spool directory of one database under a data directory: instances of different databases
 * may share a DATA_DIR, and an entry must only ever be replayed into its own database. PostgreSQL
 * databases are told apart by host, port and name; the embedded one lives in the directory itself.
 */
export const spoolDir = (dataDir: string, databaseUrl: string | undefined): string => {
  if (databaseUrl === undefined) return join(dataDir, "activity-spool", "embedded")
  const url = new URL(databaseUrl)
  const where = `${url.hostname}:${url.port || "5432"}${url.pathname}`
  return join(dataDir, "activity-spool", createHash("sha256").update(where).digest("hex").slice(0, 16))
}

/**
 * This process's spool in `dir`; the file is made by the first append. Appends, clears and the
 * close run in the order asked; appends asked while the file is being written go together in the
 * next write and share its sync (a group commit, as during an outage every refused call appends).
 */
export const openActivitySpool = (dir: string): ActivitySpool => {
  const file = join(dir, `${process.pid}-${processStartTime(process.pid) ?? "x"}-${Math.random().toString(36).slice(2, 8)}${SUFFIX}`)
  type Op =
    | { readonly kind: "append"; readonly rows: ReadonlyArray<ActivityRow>; readonly done: (e?: unknown) => void }
    | { readonly kind: "clear" | "close"; readonly done: (e?: unknown) => void }
  let handle: FileHandle | undefined
  let ops: Array<Op> = []
  let running = false
  const appendAll = async (rows: ReadonlyArray<ActivityRow>) => {
    if (rows.length === 0) return
    if (handle === undefined) {
      // entries name accounts and actors: readable by the service's user only
      mkdirSync(dir, { recursive: true, mode: 0o700 })
      handle = await open(file, "a", 0o600)
    }
    await handle.appendFile(rows.map((r) => JSON.stringify(r)).join("\n") + "\n")
    await handle.sync()
  }
  const pump = async () => {
    if (running) return
    running = true
    while (ops.length > 0) {
      const first = ops[0]!
      if (first.kind === "append") {
        // every append waiting now, up to the next clear or close, in one write and one sync
        const end = ops.findIndex((op) => op.kind !== "append")
        const group = (end === -1 ? ops : ops.slice(0, end)) as Array<Extract<Op, { kind: "append" }>>
        ops = end === -1 ? [] : ops.slice(end)
        const outcome = await appendAll(group.flatMap((op) => op.rows)).then(() => undefined, (e: unknown) => e ?? new Error("spool write failed"))
        for (const op of group) op.done(outcome)
      } else {
        ops = ops.slice(1)
        const outcome = await (async () => {
          await handle?.close()
          handle = undefined
          if (first.kind === "clear") await unlink(file).catch(() => undefined)
        })().then(() => undefined, (e: unknown) => e ?? new Error("spool close failed"))
        first.done(outcome)
      }
    }
    running = false
  }
  const enqueue = (op: (done: (e?: unknown) => void) => Op): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      ops.push(op((e) => (e === undefined ? resolve() : reject(e))))
      void pump()
    })
  return {
    append: (rows) => enqueue((done) => ({ kind: "append", rows, done })),
    clear: () => enqueue((done) => ({ kind: "clear", done })),
    close: () => enqueue((done) => ({ kind: "close", done })),
  }
}

/** An entry as read back from a spool line (its time was written as an ISO string). */
const rowOf = (line: string): ActivityRow | undefined => {
  try {
    const raw = JSON.parse(line) as ActivityRow & { at: string }
    return { ...raw, at: new Date(raw.at) }
  } catch {
    return undefined // a line cut short by the kill: its call was not answered yet
  }
}

/**
 * Writes the entries of spool files whose process is gone, through `write`, and removes them;
 * answers how many entries were written. A file is claimed by renaming it first, so two instances
 * never replay the same file; a failed write leaves the claimed file for the next run.
 */
export const replaySpools = async (dir: string, write: (rows: ReadonlyArray<ActivityRow>) => Promise<void>): Promise<number> => {
  let names: Array<string>
  try {
    names = readdirSync(dir)
  } catch {
    return 0
  }
  let written = 0
  for (const name of names) {
    const claimedBy = /\.replaying-(\d+)-([^.]+)$/.exec(name)
    const owner = /^(\d+)-([^-]+)-[a-z0-9]+\.jsonl$/.exec(name)
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
    const rows = (await readFile(path, "utf8")).split("\n").filter((l) => l !== "").map(rowOf).filter((r): r is ActivityRow => r !== undefined)
    for (let i = 0; i < rows.length; i += 500) await write(rows.slice(i, i + 500))
    await unlink(path)
    written += rows.length
  }
  return written
}
