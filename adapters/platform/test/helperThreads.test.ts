import { execFile } from "node:child_process"
import { getPriority } from "node:os"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

const run = promisify(execFile)
const helperThreads = fileURLToPath(new URL("../src/helperThreads.ts", import.meta.url))
const pool = fileURLToPath(new URL("../src/workerHtmlAnalyzer.ts", import.meta.url))

/**
 * A process of its own (nice values are per thread and stay with the process): it lowers its V8
 * helpers, starts the sanitiser pool and sanitises a body past the inline size in it, then
 * answers each thread's name and nice value, read from Linux's /proc.
 */
const child = `
import { lowerV8HelperThreads } from ${JSON.stringify(helperThreads)}
import { workerHtmlAnalyzer } from ${JSON.stringify(pool)}
import { HtmlAnalyzer } from "@content-site/core"
import { Effect } from "effect"
import { readdirSync, readFileSync } from "node:fs"
const lowered = lowerV8HelperThreads()
const threadsNow = () => readdirSync("/proc/self/task").map((tid) => {
  const stat = readFileSync("/proc/self/task/" + tid + "/stat", "utf8")
  return { tid: Number(tid), name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), nice: Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]) }
})
// read while the pool is open, once it has sanitised a body
const threads = await Effect.runPromise(
  Effect.gen(function* () {
    const analyzer = yield* HtmlAnalyzer
    yield* analyzer.analyze("<p>" + "word ".repeat(10000) + "</p>", "acc")
    return threadsNow()
  }).pipe(Effect.provide(workerHtmlAnalyzer({ maxThreads: 1 }))),
)
console.log(JSON.stringify({ lowered, pid: process.pid, threads }))
`

describe("V8's helper threads and the sanitiser's threads", () => {
  it("should run below the event loop (nice 10), the event loop's thread unchanged", async () => {
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", child], { cwd: fileURLToPath(new URL("..", import.meta.url)) })
    const { lowered, pid, threads } = JSON.parse(stdout) as { lowered: number; pid: number; threads: ReadonlyArray<{ tid: number; name: string; nice: number }> }
    const helpers = threads.filter((t) => t.name === "V8Worker")
    expect(helpers.length).toBeGreaterThan(0)
    expect(lowered).toBe(helpers.length)
    expect(helpers.map((t) => t.nice)).toEqual(helpers.map(() => 10))
    // The pool's thread lowers itself (htmlWorker.ts); the event loop's thread stays where it was.
    const poolThreads = threads.filter((t) => t.name === "WorkerThread")
    expect(poolThreads.length).toBe(1)
    expect(poolThreads[0]!.nice).toBe(10)
    // (the child starts at this process's priority)
    expect(threads.find((t) => t.tid === pid)?.nice).toBe(getPriority())
  }, 60_000)
})
