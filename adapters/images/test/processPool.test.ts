import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { processPool } from "../src/processPool.ts"
import type { PoolJob } from "./fixtures/poolProcess.ts"

const script = new URL("./fixtures/poolProcess.ts", import.meta.url)

describe("processPool", () => {
  it("should give a job to another process when the idle one it took had ended before the pool heard of it", async () => {
    const pool = processPool<PoolJob, number>(script, 1)
    try {
      const first = await pool.run({ pid: true }, 10_000)
      if (!("answer" in first)) throw new Error(`no answer: ${JSON.stringify(first)}`)
      // The process that answered is idle, the next to be handed a job. It is killed and the job
      // sent in the same turn of the event loop: its exit cannot have been heard yet.
      process.kill(first.answer, "SIGKILL")
      expect(await pool.run({ double: 21 }, 10_000)).toEqual({ answer: 42 })
    } finally {
      pool.close()
    }
  }, 30_000)

  it("should report a process that ended under a job it had taken, without giving that job to another", async () => {
    const pool = processPool<PoolJob, number>(script, 2)
    const dir = mkdtempSync(join(tmpdir(), "pool-"))
    try {
      const crashed = join(dir, "crashed")
      // the pool has processes (so there is another one the job could be given to)
      expect(await pool.run({ double: 1 }, 10_000)).toEqual({ answer: 2 })
      expect(await pool.run({ crash: crashed }, 10_000)).toEqual({ ended: "SIGKILL" })
      expect(readFileSync(crashed, "utf8").trim().split("\n")).toHaveLength(1)
      expect(await pool.run({ double: 5 }, 10_000)).toEqual({ answer: 10 })
    } finally {
      pool.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)

  it("should kill a process whose job outlives its time, and answer the next job", async () => {
    const pool = processPool<PoolJob, number>(script, 1)
    try {
      expect(await pool.run({ hang: true }, 300)).toEqual({ killed: true })
      expect(await pool.run({ double: 5 }, 10_000)).toEqual({ answer: 10 })
    } finally {
      pool.close()
    }
  }, 30_000)
})
