/** The housekeeping schedule: its sweep runs whether or not the work before it (partitions, journal replay) succeeded. */
import { describe, expect, it } from "vitest"
import { scheduleHousekeeping } from "../src/housekeeping.ts"
import type { Sql } from "../src/sql.ts"
import { eventually } from "../../../test/support/eventually.ts"

describe("scheduleHousekeeping", () => {
  it("should still sweep the counters when the replay before the sweep fails, and log that failure", async () => {
    const statements: Array<string> = []
    const sql: Sql = async <R>(text: string) => {
      statements.push(text)
      return [{ n: 0 }] as Array<R>
    }
    const warnings: Array<string> = []
    const log = { info: () => {}, warn: (_: object, message: string) => warnings.push(message), error: () => {} }
    const stop = scheduleHousekeeping(sql, 10, () => Promise.reject(new Error("a journal line the database refuses")), Date.now, log)
    try {
      const swept = await eventually(() => Promise.resolve(statements.filter((s) => s.includes("limit_counters")).length), (n) => n > 0)
      expect(swept).toBeGreaterThan(0)
      expect(warnings[0]).toMatch(/could not make the coming partitions or replay a journal/)
    } finally {
      stop()
    }
  })
})
