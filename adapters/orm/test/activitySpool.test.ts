/** The activity spool's files: appended and synced, cleared, and replayed only when their process is gone. */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { openActivitySpool, replaySpools, spoolDir } from "../src/activitySpool.ts"
import type { ActivityRow } from "../src/mapping.ts"

const row = (requestId: string): ActivityRow => ({
  id: `act_${requestId}`,
  accountId: null,
  at: new Date("2026-11-23T01:00:00.000Z"),
  channel: "api",
  actor: null,
  action: "GET /api/v1/sites",
  siteId: null,
  articleId: null,
  status: "503",
  errorCode: "unavailable",
  durationMs: 1,
  requestId,
})

/** A pid no process has: far above any pid_max. */
const GONE = 2_000_000_000

describe("activity spool", () => {
  const dirs: Array<string> = []
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-spool-unit-"))
    dirs.push(dir)
    return dir
  }
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  it("should append entries as JSON lines, keep them for this process's lifetime and remove the file on clear", async () => {
    const dir = tempDir()
    const spool = openActivitySpool(dir)
    await spool.append([row("a"), row("b")])
    await spool.append([row("c")])
    const [file] = readdirSync(dir)
    expect(file).toMatch(new RegExp(`^${process.pid}-`))
    expect(statSync(join(dir, file!)).mode & 0o777).toBe(0o600)
    expect(readFileSync(join(dir, file!), "utf8").trim().split("\n").map((l) => JSON.parse(l).requestId)).toEqual(["a", "b", "c"])
    // this process is alive: its file is not replayed
    const written: Array<ActivityRow> = []
    expect(await replaySpools(dir, async (rows) => void written.push(...rows))).toBe(0)
    await spool.clear()
    expect(readdirSync(dir)).toEqual([])
    await spool.close()
  })

  it("should write appends asked together in one go, in order, each told once its entry is synced", async () => {
    const dir = tempDir()
    const spool = openActivitySpool(dir)
    const ids = Array.from({ length: 50 }, (_, i) => `g${i}`)
    const told: Array<string> = []
    await Promise.all(ids.map((id) => spool.append([row(id)]).then(() => told.push(id))))
    expect(told).toHaveLength(50)
    const [file] = readdirSync(dir)
    expect(readFileSync(join(dir, file!), "utf8").trim().split("\n").map((l) => JSON.parse(l).requestId)).toEqual(ids)
    // a clear asked after appends runs after them; an append after the clear starts a new file
    const late = spool.append([row("late")])
    await Promise.all([spool.clear(), late])
    expect(readdirSync(dir)).toEqual([])
    await spool.append([row("after")])
    expect(readdirSync(dir)).toHaveLength(1)
    await spool.close()
  })

  it("should replay a gone process's file once, times restored, skipping a line cut short by the kill", async () => {
    const dir = tempDir()
    writeFileSync(join(dir, `${GONE}-123-abc.jsonl`), `${JSON.stringify(row("x"))}\n${JSON.stringify(row("y"))}\n{"id":"act_z","requ`)
    const written: Array<ActivityRow> = []
    expect(await replaySpools(dir, async (rows) => void written.push(...rows))).toBe(2)
    expect(written.map((r) => r.requestId)).toEqual(["x", "y"])
    expect(written[0]!.at).toEqual(new Date("2026-11-23T01:00:00.000Z"))
    expect(readdirSync(dir)).toEqual([])
    expect(await replaySpools(dir, async (rows) => void written.push(...rows))).toBe(0)
  })

  it("should keep a file whose replay failed and try it again, and take over a replay whose replayer is gone", async () => {
    const dir = tempDir()
    writeFileSync(join(dir, `${GONE}-1-abc.jsonl`), `${JSON.stringify(row("p"))}\n`)
    await expect(replaySpools(dir, async () => Promise.reject(new Error("database away")))).rejects.toThrow("database away")
    // claimed by this (live) process: nobody else takes it over meanwhile
    expect(readdirSync(dir)).toEqual([`${GONE}-1-abc.jsonl.replaying-${process.pid}-${readdirSync(dir)[0]!.split("-").pop()}`])
    writeFileSync(join(dir, `${GONE}-2-def.jsonl.replaying-${GONE}-9`), `${JSON.stringify(row("q"))}\n`)
    const written: Array<string> = []
    // its own failed replay is tried again, the gone replayer's file taken over
    expect(await replaySpools(dir, async (rows) => void written.push(...rows.map((r) => r.requestId)))).toBe(2)
    expect(written.sort()).toEqual(["p", "q"])
    expect(readdirSync(dir)).toEqual([])
  })

  it("should keep each database's entries apart under one data directory", () => {
    const a = spoolDir("/data", "postgres://u:secret@db.example:5432/content")
    expect(spoolDir("/data", "postgres://other:pw@db.example/content")).toBe(a)
    expect(spoolDir("/data", "postgres://u@db.example:5432/staging")).not.toBe(a)
    expect(spoolDir("/data", undefined)).toBe("/data/activity-spool/embedded")
    expect(a).not.toContain("secret")
  })
})
