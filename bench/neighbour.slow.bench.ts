/**
 * The hostile neighbour (`npm run bench -- neighbour`, issue 28; minutes, so never in a plain run): one account sends each finding's
 * worst input over and over for a few seconds while a neighbour sends a small request one at a
 * time (in turn from eight other accounts, `NEIGHBOURS`) and `/healthz` is asked one request after
 * the other; the same two figures on the quiet
 * server are the baseline of the same run (three quiet runs, first, between the loads and last:
 * the p99 of their requests together). Goals: `/healthz` at worst 100 ms, and the neighbour's
 * p99 at most 3× its quiet p99. The clients run in processes of their own (`neighbourClients.ts`: the hostile loops in one at nice 19, the probes in another), the
 * server in this one; loopback only; every loop stops at its deadline (`BENCH_NEIGHBOUR_SECONDS`,
 * default 6 per load), then waits for the hostile requests still out (an AVIF bomb: at most its
 * 20 s budget). `BENCH_NEIGHBOUR_ONLY=H3` runs the quiet loads and those whose name starts so.
 */
import { createApiKey, importData } from "@content-site/core"
import { readFileSync } from "node:fs"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { fork } from "node:child_process"
import { setPriority } from "node:os"
import { fileURLToPath } from "node:url"
import sharp from "sharp"
import { buildArticle } from "./editPolicy.bench.ts"
import type { ClientSetup, Load, RunAnswer, RunRequest, Small } from "./neighbourClients.ts"
import { startBenchServer } from "./support.ts"

const SECONDS = Number(process.env.BENCH_NEIGHBOUR_SECONDS ?? 6)
/**
 * Accounts the neighbour's requests take turns in (one request at a time, as one client): each
 * stays within the contract's 60 requests a minute while the neighbour sends about 160 to 280 in
 * a load, so that its p99 is a percentile and not its slowest request. With four accounts a
 * 13 ms PNG upload came to 99 to 119 requests a load, and the p99 of fewer than 101 (the
 * `floor(0.99 n)`th, counted from 0) is the slowest one: a single stall decided the goal.
 */
const NEIGHBOURS = 8
/**
 * The hostile clients' process runs at this niceness (`BENCH_NEIGHBOUR_HOSTILE_NICE`, default 19;
 * 0 for the runs before 2026-11-28 evening): an attacker's CPU is on its own machine, not on the
 * server's two cores. It stands for the network's far side, as the clients' own processes do: at
 * nice 0 the hostile process took 3.3 to 4.6 s of CPU in a 6 s flood, as much as the server's
 * thread and sanitiser together, and what the neighbour waited for was partly the attacker's own
 * sending. Niced, it still sends as much (docs/benchmarks.md: 705 previews in 6 s against 405 to
 * 607 at nice 0): the kernel gives it every cycle the others leave. The probes stay at nice 0.
 */
const HOSTILE_NICE = Number(process.env.BENCH_NEIGHBOUR_HOSTILE_NICE ?? 19)
const MiB = 1024 * 1024

const quantile = (values: ReadonlyArray<number>, q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
}

const article = (id: string, body: string) => ({
  id,
  title: id,
  url: `https://neighbour.test/${id}`,
  status: "published",
  published_at: "2026-11-01T09:00:00Z",
  "target keyword": "k",
  body,
})

/**
 * Each load has accounts of its own, a hostile one and a neighbour, so that each meets the
 * contract's limits (60 requests a minute) afresh: the request limit is part of the defence.
 */
const accountsFor = (i: number) => [
  {
    id: `acc_hostile_${i}`,
    email: `hostile${i}@neighbour.test`,
    password: "hostile-password",
    name: `Hostile ${i}`,
    sites: [
      {
        id: `site_hostile_${i}`,
        name: "Hostile",
        url: "https://hostile.test",
        articles: ["long", "diff", "restore", "preview"].map((what) => article(`art_h_${what}_${i}`, "<p>start</p>")),
      },
    ],
  },
  ...Array.from({ length: NEIGHBOURS }, (_, k) => ({
    id: `acc_neighbour_${i}_${k}`,
    email: `neighbour${i}_${k}@neighbour.test`,
    password: "neighbour-password",
    name: `Neighbour ${i}.${k}`,
    sites: [{ id: `site_neighbour_${i}_${k}`, name: "Neighbour", url: "https://neighbour.test", articles: [article(`art_n_${i}_${k}`, "<p>A small article.</p>")] }],
  })),
]

/**
 * 0.5 MB of 1 000-character words, one paragraph each (the diff compares one block element a
 * line); the two revisions (`alphabet` "0123456789" and "abcdefghij") have no line in common, and
 * every pair of lines agrees up to its last character: each comparison costs a whole line.
 */
const longWords = (alphabet: string): string => {
  let html = ""
  for (let w = 0; w < 500; w++) html += `<p>${"w".repeat(999)}${alphabet[w % 10]}</p>`
  return html
}

/**
 * CPU time of this thread (the server's event loop, with its share of garbage collection), in
 * milliseconds, from Linux's per-thread counters (clock ticks of 10 ms); NaN elsewhere. Unlike
 * latency it hardly moves with what other processes do on the machine, so it compares runs made
 * under different loads.
 */
const mainThreadCpuMs = (): number => {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
  } catch {
    return Number.NaN
  }
}

/** Runs one role of one load in a process of its own (structured-clone IPC carries the setup's bytes). */
const runRole = (setup: ClientSetup, request: RunRequest): Promise<RunAnswer> =>
  new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL("./neighbourClients.ts", import.meta.url)), [], { serialization: "advanced", stdio: ["ignore", "inherit", "inherit", "ipc"] })
    if (request.role === "hostile" && child.pid !== undefined && HOSTILE_NICE !== 0) setPriority(child.pid, HOSTILE_NICE)
    child.once("message", (answer: RunAnswer) => resolve(answer))
    child.once("error", reject)
    child.once("exit", (code) => reject(new Error(`the ${request.role} clients exited (${code}) before answering`)))
    child.send({ setup, request })
  })

/** Runs one load: the hostile loops and the probes, each in a process of its own, at the same time. */
const runClients = async (setup: ClientSetup, request: Omit<RunRequest, "role">): Promise<RunAnswer & { readonly hostileStallMs: number; readonly hostileCpuMs: number }> => {
  const [hostile, probes] = await Promise.all([runRole(setup, { ...request, role: "hostile" }), runRole(setup, { ...request, role: "probes" })])
  return { ...probes, hostileStatuses: hostile.hostileStatuses, hostileStallMs: hostile.ownStallMs, hostileCpuMs: hostile.ownCpuMs }
}

/** The bench: every load in turn, the quiet ones first. */
export const run = async (): Promise<void> => {
  console.log("preparing: an AVIF bomb (8000×8000 of one colour) and a 1×1 PNG ...")
  const avifBomb = new Uint8Array(await sharp({ create: { width: 8000, height: 8000, channels: 3, background: "#336699" } }).avif({ quality: 50, effort: 0 }).toBuffer())
  const png = new Uint8Array(await sharp({ create: { width: 1, height: 1, channels: 3, background: "#ffffff" } }).png().toBuffer())
  // The contract's request limit (60 a minute) holds; the daily edit limit is out of the way.
  const server = await startBenchServer("bench_neighbour", { SEED_DEMO: "false", RATE_LIMIT_PER_MINUTE: "60" })
  try {
    const app = server.app
    // Without protected links: a body that adds some is refused before the work this bench is about.
    const oneArticle = buildArticle().replaceAll(` data-service-protected="backlink"`, "")
    const bigBody = oneArticle.repeat(Math.floor(MiB / oneArticle.length))
    console.log(
      `${server.database}; ${SECONDS} s per load; hostile clients at nice ${HOSTILE_NICE}; AVIF bomb ${avifBomb.byteLength} bytes, PNG ${png.byteLength} bytes, 1 MiB body ${(bigBody.length / 1024).toFixed(0)} KB`,
    )
    // The quiet baseline three times (first, between the loads, last): its p99 is taken over the
    // requests of the three together. One quiet run's p99 is its second- or third-slowest request of about
    // 180 to 280; a single slow stretch (86 ms against 8 ms seen) made every load "within 3x" of it.
    const quietPut = ["quiet server, neighbour's dry-run PUT", "quiet", "put"] as const
    const quietPng = ["quiet server, neighbour's PNG", "quiet", "png"] as const
    const loads: ReadonlyArray<readonly [string, Load, Small]> = [
      quietPut,
      quietPng,
      ["H1 PATCH dry run, 20 000-char find on 1 M chars (one at a time)", "H1 find", "put"],
      ["H2 /diff of two 0.5 MB revisions of 1 000-char words (one at a time)", "H2 diff", "put"],
      ["H2 restoring a 1 MiB revision (one at a time)", "H2 restore", "put"],
      quietPut,
      quietPng,
      ["H3 four AVIF bombs at once", "H3 images", "png"],
      ["H3 twenty 1 MiB dry-run PUTs at once", "H3 dry runs", "put"],
      ["H3 twenty 1 MiB previews at once (web)", "H3 previews", "put"],
      quietPut,
      quietPng,
    ]
    const only = process.env.BENCH_NEIGHBOUR_ONLY
    await app.runtime.runPromise(importData({ accounts: loads.flatMap((_, i) => accountsFor(i)) }))

    /** The accounts of load `i`, their keys and the hostile account's articles as the load needs them. */
    const setupFor = async (i: number, load: Load): Promise<ClientSetup> => {
      const hostileKey = (await app.runtime.runPromise(createApiKey(`acc_hostile_${i}`, { name: "hostile", scope: "write" }))).key
      const neighbours = await Promise.all(
        Array.from({ length: NEIGHBOURS }, async (_, k) => ({
          key: (await app.runtime.runPromise(createApiKey(`acc_neighbour_${i}_${k}`, { name: "neighbour", scope: "write" }))).key,
          article: `art_n_${i}_${k}`,
        })),
      )
      const put = async (id: string, body: string): Promise<number> => {
        const res = await fetch(`${app.url}/api/v1/articles/${id}`, {
          method: "PUT",
          headers: { authorization: `Bearer ${hostileKey}`, "content-type": "application/json" },
          body: JSON.stringify({ body }),
        })
        const answer = (await res.json()) as { revision?: { number: number } | null }
        if (res.status !== 200 || !answer.revision) throw new Error(`setup PUT ${id}: ${res.status} ${JSON.stringify(answer).slice(0, 200)}`)
        return answer.revision.number
      }
      const ids = { long: `art_h_long_${i}`, diff: `art_h_diff_${i}`, restore: `art_h_restore_${i}` }
      if (load === "H1 find") await put(ids.long, `<p>${"a".repeat(1_040_000)}</p>`)
      const diffFrom = load === "H2 diff" ? await put(ids.diff, longWords("0123456789")) : 0
      const diffTo = load === "H2 diff" ? await put(ids.diff, longWords("abcdefghij")) : 0
      const restoreBig = load === "H2 restore" ? await put(ids.restore, bigBody) : 0
      const restoreSmall = load === "H2 restore" ? await put(ids.restore, "<p>small again</p>") : 0
      return {
        url: app.url,
        hostile: {
          key: hostileKey,
          email: `hostile${i}@neighbour.test`,
          password: "hostile-password",
          longArticle: ids.long,
          diffArticle: ids.diff,
          diffFrom,
          diffTo,
          restoreArticle: ids.restore,
          restoreBig,
          restoreSmall,
          previewArticle: `art_h_preview_${i}`,
          avifBomb,
          bigBody,
        },
        neighbour: { accounts: neighbours, png },
      }
    }

    const quiet = new Map<Small, Array<RunAnswer>>()
    const measured: Array<{ name: string; load: Load; small: Small; answer: RunAnswer & { readonly hostileStallMs: number; readonly hostileCpuMs: number }; cpu: number; stallMs: number }> = []
    for (const [i, [name, load, small]] of loads.entries()) {
      if (only !== undefined && load !== "quiet" && !load.startsWith(only)) continue
      const setup = await setupFor(i, load)
      const cpuBefore = mainThreadCpuMs()
      const serverStalls = monitorEventLoopDelay({ resolution: 10 })
      serverStalls.enable()
      const answer = await runClients(setup, { load, small, seconds: SECONDS })
      serverStalls.disable()
      const cpu = mainThreadCpuMs() - cpuBefore
      if (load === "quiet") quiet.set(small, [...(quiet.get(small) ?? []), answer])
      measured.push({ name, load, small, answer, cpu, stallMs: serverStalls.max / 1e6 })
    }
    // each small request's quiet p99: over the requests of all its quiet runs together (about 440)
    const baseP99 = (small: Small) => quantile((quiet.get(small) ?? []).flatMap((a) => a.small), 0.99)
    for (const { name, load, small, answer, cpu, stallMs } of measured) {
      const hMax = Math.max(...answer.healthz)
      const p99 = quantile(answer.small, 0.99)
      const ratio = p99 / baseP99(small)
      // how many of the neighbour's requests took longer than the goal allows its p99 (of about 160 to 280, the p99 is the second- or third-slowest: met while at most one or two are over)
      const over = answer.small.filter((ms) => ms > 3 * baseP99(small)).length
      const goals =
        load === "quiet" ? "" : `  healthz ${hMax <= 100 ? "met" : "NOT met"}, neighbour ${ratio <= 3 ? "met" : "NOT met"} (${over} of ${answer.small.length} over 3x quiet)`
      const line =
        `${name.padEnd(68)} /healthz p50 ${quantile(answer.healthz, 0.5).toFixed(1).padStart(6)} ms  max ${hMax.toFixed(0).padStart(5)} ms` +
        `   neighbour (${small}) n=${String(answer.small.length).padStart(3)} p50 ${quantile(answer.small, 0.5).toFixed(1).padStart(6)} ms  p99 ${p99.toFixed(0).padStart(5)} ms` +
        `${load === "quiet" ? "" : ` = ${ratio.toFixed(2)}x quiet (${baseP99(small).toFixed(0)} ms)`}${goals}` +
        `\n${"".padEnd(68)} neighbour's answers ${JSON.stringify(answer.smallStatuses)}  hostile's answers ${JSON.stringify(answer.hostileStatuses)}` +
        `  server thread CPU ${cpu.toFixed(0)} ms, its loop's longest stall ${stallMs.toFixed(0)} ms; longest stall of the probes' own thread ${answer.ownStallMs.toFixed(0)} ms (hostile's ${answer.hostileStallMs.toFixed(0)} ms)` +
        `; client processes' CPU: probes ${answer.ownCpuMs.toFixed(0)} ms, hostile ${answer.hostileCpuMs.toFixed(0)} ms`
      console.log(line)
    }
  } finally {
    await server.close()
  }
}
