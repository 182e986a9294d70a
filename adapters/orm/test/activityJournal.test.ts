/**
 * The activity journal against a stand-in for the database: entries are on disk when `record`
 * returns, shipped later in batches, kept through failures, and replayed from the files of
 * processes that are gone.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it, vi } from "vitest"
import { eventually } from "../../../test/support/eventually.ts"
import { journalDir, openActivityJournal, replayJournals, write, type ActivityJournal } from "../src/activityJournal.ts"
import type { JournalRow } from "../src/mapping.ts"
import type { Sql } from "../src/sql.ts"

const row = (requestId: string, at = "2026-11-22T10:00:00.000Z"): JournalRow => ({
  id: `act_${requestId}`,
  accountId: "acc",
  at,
  channel: "api",
  actor: null,
  action: "GET /x",
  siteId: null,
  articleId: null,
  status: "200",
  errorCode: null,
  durationMs: 1,
  requestId,
})

/** A database that records each statement's request ids; `fail` decides per call. */
const fakeDatabase = (fail: (requestIds: ReadonlyArray<string>) => Error | undefined = () => undefined) => {
  const statements: Array<Array<string>> = []
  let running = 0
  let mostRunning = 0
  const sql: Sql = async <R>(_text: string, params: ReadonlyArray<unknown>) => {
    running++
    mostRunning = Math.max(mostRunning, running)
    // the statement's latency, not a wait for anything: entries recorded meanwhile must queue behind it
    await new Promise((r) => setTimeout(r, 2))
    running--
    // (a journal file's mark, forgotten when the file is deleted, is no batch of entries)
    if (_text.startsWith("delete from activity_journal_marks")) return [] as Array<R>
    const ids = params[11] as Array<string>
    const error = fail(ids)
    if (error) throw error
    statements.push(ids)
    return [] as Array<R>
  }
  return { sql, statements, written: () => statements.flat(), mostRunning: () => mostRunning }
}

const sqlError = (code: string) => Object.assign(new Error(`error ${code}`), { code })

/** A pid no process has: far above any pid_max. */
const GONE = 2_000_000_000

/** Every request id in the journal files of `dir`, in file order. */
const journaled = (dir: string): Array<string> => {
  let files: Array<string>
  try {
    files = readdirSync(dir).sort((a, b) => Number(a.split(".").at(-2)) - Number(b.split(".").at(-2)))
  } catch {
    return []
  }
  return files.flatMap((f) => readFileSync(join(dir, f), "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l).requestId as string))
}

describe("activity journal", () => {
  const dirs: Array<string> = []
  const journals: Array<ActivityJournal> = []
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-journal-unit-"))
    dirs.push(dir)
    return join(dir, "journal")
  }
  const open = (dir: string, sql: Sql, options: Parameters<typeof openActivityJournal>[2] = {}) => {
    const journal = openActivityJournal(dir, sql, options)
    journals.push(journal)
    return journal
  }
  afterEach(async () => {
    vi.restoreAllMocks()
    vi.spyOn(console, "error").mockImplementation(() => {})
    for (const j of journals.splice(0)) await j.close(10)
    vi.restoreAllMocks()
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  it("should have the entry in the journal file when record returns, before any statement, and ship it later", async () => {
    const dir = tempDir()
    const db = fakeDatabase()
    const journal = open(dir, db.sql, { shipEveryMs: 20 })
    await journal.record(row("r1"))
    // answered: the line is in this process's file, readable by anyone reading it now
    expect(journaled(dir)).toEqual(["r1"])
    expect(db.statements).toEqual([])
    const [file] = readdirSync(dir)
    expect(file).toMatch(new RegExp(`^${process.pid}-[^-]+-[a-z0-9]+\\.0\\.jsonl$`))
    expect(statSync(join(dir, file!)).mode & 0o777).toBe(0o600)
    expect(await eventually(() => db.written(), (w) => w.length === 1)).toEqual(["r1"])
    expect(journal.backlog()).toBe(0)
  })

  it("should ship entries recorded together in one statement, a full batch at once, one statement at a time", async () => {
    const dir = tempDir()
    const db = fakeDatabase()
    const together = open(dir, db.sql, { shipEveryMs: 10_000, batchSize: 4 })
    for (let i = 0; i < 3; i++) await together.record(row(`a${i}`))
    // three wait for company; the fourth fills a batch and goes at once, without waiting 10 s
    expect(db.statements).toEqual([])
    await together.record(row("a3"))
    expect(await eventually(() => db.statements.length, (n) => n === 1)).toBe(1)
    expect(db.statements).toEqual([["a0", "a1", "a2", "a3"]])
    for (let i = 4; i < 14; i++) await together.record(row(`a${i}`))
    await together.flush()
    expect(db.statements.map((s) => s.length)).toEqual([4, 4, 4, 2])
    expect(db.written()).toEqual(Array.from({ length: 14 }, (_, i) => `a${i}`))
    expect(db.mostRunning()).toBe(1)
  })

  it("should keep entries on disk while the database fails and ship them when it is back, unasked", async () => {
    const dir = tempDir()
    let down = true
    const db = fakeDatabase(() => (down ? sqlError("08006") : undefined))
    const journal = open(dir, db.sql, { shipEveryMs: 1, retryMs: 5 })
    // recording does not depend on the database at all
    for (const id of ["r1", "r2"]) await expect(journal.record(row(id))).resolves.toBeUndefined()
    await expect(journal.flush()).rejects.toThrow("08006")
    expect(journaled(dir)).toEqual(["r1", "r2"])
    expect(journal.backlog()).toBe(2)
    down = false
    expect(await eventually(() => db.written(), (w) => w.length === 2)).toEqual(["r1", "r2"])
    expect(journal.backlog()).toBe(0)
  })

  it("should send one entry per (channel, request id) in a statement", async () => {
    const dir = tempDir()
    const db = fakeDatabase()
    const journal = open(dir, db.sql, { shipEveryMs: 10_000 })
    await journal.record(row("twice"))
    await journal.record({ ...row("twice"), id: "act_other", at: "2026-11-22T10:00:01.000Z" })
    await journal.record({ ...row("twice"), channel: "mcp" })
    await journal.flush()
    expect(db.statements).toEqual([["twice", "twice"]])
  })

  it("should drop only an entry the database refuses and ship the others", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {})
    const dir = tempDir()
    const db = fakeDatabase((ids) => (ids.includes("too-long") ? sqlError("22001") : undefined))
    const journal = open(dir, db.sql, { shipEveryMs: 10_000 })
    for (const id of ["r1", "too-long", "r2"]) await journal.record(row(id))
    await journal.flush()
    expect(db.written()).toEqual(["r1", "r2"])
    expect(errors).toHaveBeenCalledTimes(1)
  })

  it("should report a dropped entry to the service's log (a JSON line): its request id and the database's sentence, not stderr", async () => {
    const stderr = vi.spyOn(console, "error").mockImplementation(() => {})
    const logged: Array<{ fields: object; msg: string }> = []
    const log = { info: () => {}, warn: () => {}, error: (fields: object, msg: string) => logged.push({ fields, msg }) }
    const dir = tempDir()
    const db = fakeDatabase((ids) => (ids.includes("too-long") ? sqlError("22001") : undefined))
    const journal = open(dir, db.sql, { shipEveryMs: 10_000, log })
    for (const id of ["r1", "too-long", "r2"]) await journal.record(row(id))
    await journal.flush()
    expect(db.written()).toEqual(["r1", "r2"])
    expect(logged).toEqual([{ fields: { request_id: "too-long", err: "error 22001" }, msg: "activity: dropped an entry the database refused" }])
    expect(stderr).not.toHaveBeenCalled()
  })

  it("should delete a shipped segment once it is large, and keep one that is not shipped", async () => {
    const dir = tempDir()
    let down = false
    const db = fakeDatabase(() => (down ? sqlError("08006") : undefined))
    const line = Buffer.byteLength(`${JSON.stringify(row("s0"))}\n`)
    const journal = open(dir, db.sql, { shipEveryMs: 10_000, rotateBytes: line * 3.5, maxSegmentBytes: line * 6.5, retryMs: 60_000 })
    const segments = () => readdirSync(dir).map((f) => Number(f.split(".").at(-2))).sort((a, b) => a - b)
    for (let i = 0; i < 8; i++) await journal.record(row(`s${i}`))
    // six entries fill a segment: the seventh begins a new one
    expect(segments()).toEqual([0, 1])
    await journal.flush()
    // shipped: the closed segment is gone; the current one (two entries) is kept while small
    expect(segments()).toEqual([1])
    for (let i = 8; i < 12; i++) await journal.record(row(`s${i}`))
    await journal.flush()
    // shipped and large (six entries): replaced by a fresh segment
    expect(segments()).toEqual([2])
    expect(journaled(dir)).toEqual([])
    down = true
    for (let i = 12; i < 30; i++) await journal.record(row(`s${i}`))
    await expect(journal.flush()).rejects.toThrow("08006")
    // unshipped segments are kept, in order
    expect(segments().length).toBeGreaterThan(2)
    expect(journaled(dir)).toEqual(Array.from({ length: 18 }, (_, i) => `s${i + 12}`))
    down = false
    await journal.flush()
    expect(db.written()).toEqual(Array.from({ length: 30 }, (_, i) => `s${i}`))
    expect(segments()).toHaveLength(1)
    expect(journal.backlog()).toBe(0)
  })

  it("should write an entry to the database directly when the disk refuses it", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {})
    const parent = tempDir()
    writeFileSync(parent, "not a directory")
    const db = fakeDatabase()
    const journal = open(join(parent, "x"), db.sql)
    await journal.record(row("direct"))
    expect(db.written()).toEqual(["direct"])
    expect(String(errors.mock.calls[0]?.[0])).toContain("could not append to the journal")
  })

  it("should ship what is left when closed and remove its files; keep them when the database does not answer", async () => {
    const dir = tempDir()
    const db = fakeDatabase()
    const journal = openActivityJournal(dir, db.sql, { shipEveryMs: 10_000 })
    await journal.record(row("c1"))
    await journal.close(1_000)
    expect(db.written()).toEqual(["c1"])
    expect(readdirSync(dir)).toEqual([])
    const errors = vi.spyOn(console, "error").mockImplementation(() => {})
    const down = openActivityJournal(dir, fakeDatabase(() => sqlError("08006")).sql, { shipEveryMs: 10_000, retryMs: 5 })
    await down.record(row("c2"))
    await down.close(50)
    expect(journaled(dir)).toEqual(["c2"])
    expect(errors.mock.calls.map((c) => String(c[0])).some((m) => m.includes("1 entries were not written before closing"))).toBe(true)
    await expect(down.record(row("c3"))).rejects.toThrow("closed")
  })

  it("should keep the process alive while close waits for a database that fails, so that an awaited close ends (not the process in the middle of it)", async () => {
    const dir = tempDir()
    const { spawnSync } = await import("node:child_process")
    const journalModule = new URL("../src/activityJournal.ts", import.meta.url).href
    // A process with nothing else to wait for: its top-level await of close is all that is left.
    const script = `
      const { openActivityJournal } = await import(${JSON.stringify(journalModule)})
      const sql = async () => { throw Object.assign(new Error("connection refused"), { code: "ECONNREFUSED" }) }
      const journal = openActivityJournal(${JSON.stringify(dir)}, sql, { shipEveryMs: 10_000, retryMs: 20, log: { warn() {}, info() {}, error() {} } })
      await journal.record(${JSON.stringify(row("k1"))})
      await journal.close(300)
      console.log("closed")
    `
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8", timeout: 20_000 })
    expect(child.stdout.trim()).toBe("closed")
    expect(child.status).toBe(0)
    expect(journaled(dir)).toEqual(["k1"])
  })

  it("should not replay the journal of a live process, and replay a gone process's files once, times restored", async () => {
    const dir = tempDir()
    const journal = open(dir, fakeDatabase(() => sqlError("08006")).sql, { shipEveryMs: 10_000, retryMs: 60_000 })
    await journal.record(row("live"))
    const written: Array<JournalRow> = []
    expect(await replayJournals(dir, async (rows) => void written.push(...rows))).toBe(0)
    writeFileSync(join(dir, `${GONE}-123-abc.0.jsonl`), `${JSON.stringify(row("x"))}\n${JSON.stringify(row("y"))}\n{"id":"act_z","requ`)
    writeFileSync(join(dir, `${GONE}-123-abc.1.jsonl`), `${JSON.stringify(row("w"))}\n`)
    // a spool file of a release before the journal
    writeFileSync(join(dir, `${GONE}-456-def.jsonl`), `${JSON.stringify(row("v"))}\n`)
    expect(await replayJournals(dir, async (rows) => void written.push(...rows))).toBe(4)
    expect(written.map((r) => r.requestId)).toEqual(["x", "y", "w", "v"])
    expect(written[0]!.at).toBe("2026-11-22T10:00:00.000Z")
    expect(await replayJournals(dir, async (rows) => void written.push(...rows))).toBe(0)
    expect(journaled(dir)).toEqual(["live"])
  })

  it("should keep a file whose replay failed and try it again, and take over a replay whose replayer is gone", async () => {
    const dir = tempDir()
    const { mkdirSync } = await import("node:fs")
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, `${GONE}-1-abc.0.jsonl`), `${JSON.stringify(row("p"))}\n`)
    await expect(replayJournals(dir, async () => Promise.reject(new Error("database away")))).rejects.toThrow("database away")
    // claimed by this (live) process: nobody else takes it over meanwhile
    expect(readdirSync(dir)).toEqual([`${GONE}-1-abc.0.jsonl.replaying-${process.pid}-${readdirSync(dir)[0]!.split("-").pop()}`])
    writeFileSync(join(dir, `${GONE}-2-def.0.jsonl.replaying-${GONE}-9`), `${JSON.stringify(row("q"))}\n`)
    const written: Array<string> = []
    expect(await replayJournals(dir, async (rows) => void written.push(...rows.map((r) => r.requestId)))).toBe(2)
    expect(written.sort()).toEqual(["p", "q"])
    expect(readdirSync(dir)).toEqual([])
  })

  it("should replay the files after one whose entries the database refuses, keep that one claimed, and answer its failure", async () => {
    const dir = tempDir()
    const { mkdirSync } = await import("node:fs")
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, `${GONE}-1-abc.0.jsonl`), `${JSON.stringify(row("refused"))}\n`)
    writeFileSync(join(dir, `${GONE}-2-def.0.jsonl`), `${JSON.stringify(row("later"))}\n`)
    const written: Array<string> = []
    const refusing = async (rows: ReadonlyArray<JournalRow>) => {
      if (rows.some((r) => r.requestId === "refused")) throw new Error("the database refuses this entry")
      written.push(...rows.map((r) => r.requestId))
    }
    await expect(replayJournals(dir, refusing)).rejects.toThrow("the database refuses this entry")
    expect(written).toEqual(["later"])
    expect(readdirSync(dir)).toEqual([`${GONE}-1-abc.0.jsonl.replaying-${process.pid}-${readdirSync(dir)[0]!.split("-").pop()}`])
  })

  it("should skip a line that is JSON but no entry, as an unreadable one, and replay the rest", async () => {
    const dir = tempDir()
    const { mkdirSync } = await import("node:fs")
    mkdirSync(dir, { recursive: true })
    // a file of the journal's name that the service did not write as it writes (or a line damaged into another JSON value)
    writeFileSync(join(dir, `${GONE}-1-abc.0.jsonl`), `null\n${JSON.stringify(row("a"))}\n"text"\n42\n[]\n${JSON.stringify(row("b"))}\n`)
    writeFileSync(join(dir, `${GONE}-2-def.0.jsonl`), `${JSON.stringify(row("c"))}\n`)
    const db = fakeDatabase()
    expect(await replayJournals(dir, (rows, position) => write(db.sql, rows, position))).toBe(3)
    expect(db.written().sort()).toEqual(["a", "b", "c"])
    expect(readdirSync(dir)).toEqual([])
  })

  it("should cut off a line the disk took only in part, so that the entries after it still ship", async () => {
    const fs = (await import("node:fs")).default
    const { syncBuiltinESMExports } = await import("node:module")
    vi.spyOn(console, "error").mockImplementation(() => {})
    const dir = tempDir()
    const db = fakeDatabase()
    const journal = open(dir, db.sql, { shipEveryMs: 10_000 })
    await journal.record(row("before"))
    // the disk fills half-way through the next line: part of it is written, then ENOSPC
    const realWrite = fs.writeSync
    let calls = 0
    vi.spyOn(fs, "writeSync").mockImplementation(((fd: number, buffer: Buffer, offset: number) => {
      calls++
      if (calls === 1) return realWrite(fd, buffer, offset, Math.floor((buffer.length - offset) / 2))
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" })
    }) as typeof fs.writeSync)
    syncBuiltinESMExports()
    try {
      // written to the database directly instead
      await journal.record(row("refused-by-disk"))
    } finally {
      vi.mocked(fs.writeSync).mockRestore()
      syncBuiltinESMExports()
    }
    await journal.record(row("after"))
    await journal.flush()
    expect(db.written().sort()).toEqual(["after", "before", "refused-by-disk"])
    expect(journal.backlog()).toBe(0)
  })

  it("should keep each database's entries apart under one data directory", () => {
    const a = journalDir("/data", "postgres://u:secret@db.example:5432/content")
    expect(journalDir("/data", "postgres://other:pw@db.example/content")).toBe(a)
    expect(journalDir("/data", "postgres://u@db.example:5432/staging")).not.toBe(a)
    expect(journalDir("/data", undefined)).toBe("/data/activity-journal/embedded")
    expect(journalDir("/data", undefined, "activity-spool")).toBe("/data/activity-spool/embedded")
    expect(a).not.toContain("secret")
  })

  it("should sync appended entries to disk shortly after, in groups", async () => {
    const fs = (await import("node:fs")).default
    const dir = tempDir()
    const journal = open(dir, fakeDatabase().sql, { shipEveryMs: 10_000, syncEveryMs: 20 })
    const syncs = vi.spyOn(fs, "fdatasync")
    for (let i = 0; i < 50; i++) await journal.record(row(`f${i}`))
    expect(await eventually(() => syncs.mock.calls.length, (n) => n > 0)).toBe(1)
  })
})
