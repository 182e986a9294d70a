/** The activity write-behind buffer against a stand-in for the database. */
import { afterEach, describe, expect, it, vi } from "vitest"
import { activityBuffer } from "../src/activityBuffer.ts"
import type { ActivityRow } from "../src/mapping.ts"
import type { Sql } from "../src/sql.ts"

const row = (requestId: string): ActivityRow => ({
  id: `act_${requestId}`,
  accountId: "acc",
  at: new Date("2026-11-22T10:00:00.000Z"),
  channel: "api",
  actor: null,
  action: "GET /x",
  status: "200",
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
    await new Promise((r) => setTimeout(r, 2))
    running--
    const ids = params[11] as Array<string>
    const error = fail(ids)
    if (error) throw error
    statements.push(ids)
    return [] as Array<R>
  }
  return { sql, statements, written: () => statements.flat(), mostRunning: () => mostRunning }
}

const sqlError = (code: string) => Object.assign(new Error(`error ${code}`), { code })
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe("activity write-behind", () => {
  afterEach(() => vi.restoreAllMocks())

  it("should answer each caller once its entry is written, entries of one turn in one statement", async () => {
    const db = fakeDatabase()
    const buffer = activityBuffer(db.sql)
    const written = ["r1", "r2", "r3"].map((id) => buffer.record(row(id)))
    expect(db.statements).toEqual([])
    await written[0]
    // the first caller hears back only when its statement is done, and it carried the whole turn
    expect(db.statements).toEqual([["r1", "r2", "r3"]])
    await Promise.all(written)
  })

  it("should tell callers of a failed attempt at once, keep their entries and write them later", async () => {
    let down = true
    const db = fakeDatabase(() => (down ? sqlError("08006") : undefined))
    const buffer = activityBuffer(db.sql, { retryMs: 20 })
    await expect(buffer.record(row("r1"))).rejects.toThrow("08006")
    // while the database fails, a new entry is queued without making its caller wait for a retry
    const started = Date.now()
    await expect(buffer.record(row("r2"))).rejects.toThrow("queued for retry")
    expect(Date.now() - started).toBeLessThan(15)
    down = false
    await wait(150)
    expect(db.written()).toEqual(["r1", "r2"])
    await expect(buffer.record(row("r3"))).resolves.toBeUndefined()
  })

  it("should tell the caller of an entry dropped from a full buffer", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {})
    const db = fakeDatabase()
    const buffer = activityBuffer(db.sql, { delayMs: 10_000, maxEntries: 2, batchSize: 100 })
    const first = buffer.record(row("r1"))
    buffer.record(row("r2"))
    buffer.record(row("r3"))
    await expect(first).rejects.toThrow("full")
  })

  it("should write entries recorded together in one statement shortly after the first", async () => {
    const db = fakeDatabase()
    const buffer = activityBuffer(db.sql, { delayMs: 10 })
    for (const id of ["r1", "r2", "r3"]) buffer.record(row(id))
    expect(db.statements).toEqual([])
    await wait(50)
    expect(db.statements).toEqual([["r1", "r2", "r3"]])
  })

  it("should write a full batch at once and never run two flushes together", async () => {
    const db = fakeDatabase()
    const buffer = activityBuffer(db.sql, { delayMs: 10_000, batchSize: 4 })
    for (let i = 0; i < 10; i++) buffer.record(row(`r${i}`))
    await buffer.flush()
    expect(db.statements.map((s) => s.length)).toEqual([4, 4, 2])
    expect(db.mostRunning()).toBe(1)
  })

  it("should keep the entries when the database fails and write them on a later attempt", async () => {
    let down = true
    const db = fakeDatabase(() => (down ? sqlError("08006") : undefined))
    const buffer = activityBuffer(db.sql, { delayMs: 1, retryMs: 5 })
    buffer.record(row("r1"))
    buffer.record(row("r2"))
    await expect(buffer.flush()).rejects.toThrow("08006")
    down = false
    await wait(100)
    expect(db.written()).toEqual(["r1", "r2"])
  })

  it("should drop the oldest entries past the bound and say how many", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {})
    const db = fakeDatabase(() => sqlError("08006"))
    const buffer = activityBuffer(db.sql, { delayMs: 10_000, maxEntries: 3, batchSize: 100 })
    for (let i = 0; i < 5; i++) buffer.record(row(`r${i}`))
    expect(errors.mock.calls.map((c) => String(c[0]))).toEqual([
      "activity: the buffer is full (3 entries); dropped the 1 oldest",
      "activity: the buffer is full (3 entries); dropped the 1 oldest",
    ])
    const seen: Array<string> = []
    const ok = activityBuffer(async <R>(_t: string, params: ReadonlyArray<unknown>) => {
      seen.push(...(params[11] as Array<string>))
      return [] as Array<R>
    }, { maxEntries: 3, delayMs: 10_000 })
    for (let i = 0; i < 5; i++) ok.record(row(`r${i}`))
    await ok.flush()
    expect(seen).toEqual(["r2", "r3", "r4"])
  })

  it("should drop only an entry the database refuses and write the others", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {})
    const db = fakeDatabase((ids) => (ids.includes("too-long") ? sqlError("22001") : undefined))
    const buffer = activityBuffer(db.sql, { delayMs: 10_000 })
    for (const id of ["r1", "too-long", "r2"]) buffer.record(row(id))
    await buffer.flush()
    expect(db.written()).toEqual(["r1", "r2"])
    expect(errors).toHaveBeenCalledTimes(1)
  })

  it("should write what is left when closed, and report what it could not", async () => {
    const db = fakeDatabase()
    const buffer = activityBuffer(db.sql, { delayMs: 10_000 })
    buffer.record(row("r1"))
    await buffer.close(1_000)
    expect(db.written()).toEqual(["r1"])
    const errors = vi.spyOn(console, "error").mockImplementation(() => {})
    const down = activityBuffer(fakeDatabase(() => sqlError("08006")).sql, { delayMs: 10_000, retryMs: 5 })
    down.record(row("r2"))
    await down.close(50)
    expect(errors.mock.calls.map((c) => String(c[0]))).toContain("activity: 1 entries were not written before closing (the database did not answer)")
  })

  describe("with a spool", () => {
    /** A spool that records what it is asked, in order; `slow` ms per append. */
    const fakeSpool = (slow = 0) => {
      const calls: Array<string> = []
      return {
        calls,
        spool: {
          append: async (rows: ReadonlyArray<ActivityRow>) => {
            await wait(slow)
            calls.push(`append ${rows.map((r) => r.requestId).join(",")}`)
          },
          clear: async () => void calls.push("clear"),
          close: async () => void calls.push("close"),
        },
      }
    }

    it("should tell a caller of a failed attempt only once its entry is spooled, and clear the spool once all is written", async () => {
      let down = true
      const db = fakeDatabase(() => (down ? sqlError("08006") : undefined))
      const { calls, spool } = fakeSpool(30)
      const buffer = activityBuffer(db.sql, { retryMs: 20, spool })
      const told = buffer.record(row("r1")).catch(() => calls.slice())
      // the caller hears of the failure after the append, not before
      expect(await told).toEqual(["append r1"])
      await expect(buffer.record(row("r2"))).rejects.toThrow("queued for retry")
      expect(calls).toEqual(["append r1", "append r2"])
      down = false
      await wait(200)
      expect(db.written().sort()).toEqual(["r1", "r2"])
      expect(calls).toEqual(["append r1", "append r2", "clear"])
      await buffer.close(100)
      expect(calls.at(-1)).toBe("close")
    })

    it("should tell callers queued behind a failing attempt at once, not after the next retry", async () => {
      const db = fakeDatabase(() => sqlError("08006"))
      const { calls, spool } = fakeSpool()
      const buffer = activityBuffer(db.sql, { retryMs: 60_000, spool })
      const first = buffer.record(row("r1")).catch(() => "told")
      // r2 is recorded while r1's attempt runs: it waits in the queue behind it
      await wait(0)
      const second = buffer.record(row("r2")).catch(() => "told")
      const outcome = await Promise.race([Promise.all([first, second]), wait(2_000).then(() => "still waiting")])
      expect(outcome).toEqual(["told", "told"])
      expect(calls).toEqual(["append r1,r2"])
      vi.spyOn(console, "error").mockImplementation(() => {})
      await buffer.close(10)
    })

    it("should spool what it could not write before closing, and keep the file", async () => {
      const db = fakeDatabase(() => sqlError("08006"))
      const { calls, spool } = fakeSpool()
      const errors = vi.spyOn(console, "error").mockImplementation(() => {})
      const buffer = activityBuffer(db.sql, { delayMs: 10_000, retryMs: 5, spool })
      void buffer.record(row("r1")).catch(() => undefined)
      await buffer.close(30)
      expect(calls).toEqual(["append r1", "close"])
      expect(errors.mock.calls.map((c) => String(c[0])).some((m) => m.includes("spooled to disk"))).toBe(true)
    })
  })
})
