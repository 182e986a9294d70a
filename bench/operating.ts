/**
 * What operating the service costs a GET (issue 31): the same `npm start` entry point in child
 * processes on the bench's database, loaded in alternating rounds: off (no access lines, no
 * metrics, no tracing), logs + metrics (a JSON access line per request written to a file, as a
 * log shipper would tail it; every request counted for /metrics), tracing on top (sampling 1.0,
 * every span exported over OTLP/HTTP to a sink in this process), and off again in a second process
 * (the control: what the bench reads between two identical servers is its own noise). Goals: logs
 * + metrics >= 0.95x off, tracing >= 0.8x off, judged against the mean of the two off servers of
 * each round (the first server started was the slower in most runs). Each ratio is taken within a
 * round (the cases of a round run one after another, so the machine's drift between rounds cancels)
 * and the median of the rounds' ratios is the figure, printed with the lowest and highest. Child processes, because
 * tracing instruments modules as they load: it cannot be switched on in a process that has loaded
 * them.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { decodeSpans } from "../test/support/otlpReceiver.ts"
import { autocannon, type CannonResult, CONNECTIONS, fmt, SECONDS } from "./support.ts"

/**
 * Cycles of the operating cases (`BENCH_OPERATING_CYCLES`, default 2). A cycle is as many rounds
 * as there are cases, each round starting one case later, so that every case is measured once in
 * every place of a round: the place matters (on a shared machine the case measured last in a
 * round was repeatedly the slowest, whichever it was), and with five rounds of four cases two of
 * them were last twice and never first, which the control read as 0.82x to 0.92x of off. Two
 * cycles, because one round's ratio ranged from 0.62 to 0.99 within a run on a slow machine: the
 * median of four rounds moved by several hundredths between runs of unchanged code.
 */
const CYCLES = Math.max(1, Number(process.env.BENCH_OPERATING_CYCLES ?? 2))

const repoRoot = new URL("../", import.meta.url).pathname

/**
 * An OTLP/HTTP endpoint that keeps every export's body and answers success at once (a collector's
 * work is not this machine's to do during the load); `spans` decodes them all afterwards.
 */
const otlpSink = async () => {
  let bytes = 0
  const bodies: Array<{ body: Buffer; contentType: string }> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => {
      bytes += chunk.length
      chunks.push(chunk)
    })
    req.on("end", () => {
      const contentType = req.headers["content-type"] ?? ""
      bodies.push({ body: Buffer.concat(chunks), contentType })
      if (contentType.includes("json")) res.writeHead(200, { "content-type": "application/json" }).end("{}")
      else res.writeHead(200, { "content-type": "application/x-protobuf" }).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bytes: () => bytes,
    /** Every span received so far, decoded (after the load: this is the collector's work). */
    spans: () => bodies.flatMap(({ body, contentType }) => decodeSpans(body, contentType)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/**
 * CPU seconds (user + system) a process has used so far, every thread and its main thread (the
 * event loop's, which bounds its throughput) alone; undefined off Linux.
 */
const cpuSeconds = (pid: number | undefined): { all: number; main: number } | undefined => {
  // /proc/PID/stat: fields 14 and 15 (utime, stime) in clock ticks, counted after the ") " that ends the command name
  const ticks = (path: string) => {
    const fields = readFileSync(path, "utf8").split(") ")[1]!.split(" ")
    return (Number(fields[11]) + Number(fields[12])) / 100
  }
  try {
    return { all: ticks(`/proc/${pid}/stat`), main: ticks(`/proc/${pid}/task/${pid}/stat`) }
  } catch {
    return undefined
  }
}

/**
 * `BENCH_VARIANTS`: a JSON list of `{ "name", "env" }`, each the traced case again with those
 * variables added (a sampler, a batch size). At most 8, names of letters, digits and dashes (they
 * name the servers' log files), each distinct from the bench's own cases.
 */
const benchVariants = (text: string | undefined): Array<{ name: string; env: Record<string, string> }> => {
  if (text === undefined || text.trim() === "") return []
  const parsed: unknown = JSON.parse(text)
  if (!Array.isArray(parsed) || parsed.length > 8) throw new Error("BENCH_VARIANTS must be a JSON list of at most 8 { name, env } objects")
  const taken = new Set(["off", "observed", "traced", "offAgain", "compared"])
  return parsed.map((v: { name?: unknown; env?: unknown }) => {
    const name = String(v?.name ?? "")
    if (!/^[A-Za-z0-9-]{1,20}$/.test(name) || taken.has(name)) throw new Error(`BENCH_VARIANTS: '${name}' is no usable name (letters, digits, dashes; not a case's own, not twice)`)
    taken.add(name)
    const env = v.env
    if (typeof env !== "object" || env === null || Object.values(env).some((x) => typeof x !== "string")) throw new Error(`BENCH_VARIANTS: ${name}'s env must be an object of strings`)
    return { name, env: env as Record<string, string> }
  })
}

/** Starts `apps/server/main.ts` with `env`, its stdout into `logFile`; answers its URL. */
const startChild = async (databaseUrl: string, logFile: string, env: Record<string, string>, root: string = repoRoot): Promise<{ url: string; child: ChildProcess }> => {
  const out = openSync(logFile, "w")
  const dataDir = mkdtempSync(join(tmpdir(), "cs-bench-ops-"))
  // BENCH_CPU_PROF=<dir>: each child writes a V8 CPU profile of its main thread there on exit
  const profile = (process.env["BENCH_CPU_PROF"] ?? "") === "" ? [] : ["--cpu-prof", `--cpu-prof-dir=${process.env["BENCH_CPU_PROF"]}`]
  const child = spawn(join(root, "node_modules", ".bin", "node"), [...profile, "apps/server/main.ts"], {
    cwd: root,
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: "0",
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      SEED_DEMO: "false",
      RATE_LIMIT_PER_MINUTE: "1000000000",
      LOG_FORMAT: "json",
      ...env,
    },
    stdio: ["ignore", out, "inherit"],
  })
  closeSync(out)
  child.once("exit", () => rmSync(dataDir, { recursive: true, force: true }))
  const giveUpAt = Date.now() + 60_000
  while (Date.now() < giveUpAt) {
    const url = /listening on (http:\/\/\S+)/.exec(readFileSync(logFile, "utf8"))?.[1]
    if (url !== undefined) return { url, child }
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode})`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error("the server did not start within 60 s")
}

/** Stops each child still running (SIGTERM: it drains and exits) and waits for it. */
const stopAll = async (children: ReadonlyArray<ChildProcess>): Promise<void> => {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue
    const gone = new Promise((resolve) => child.once("exit", resolve))
    child.kill("SIGTERM")
    await gone
  }
}

/** Runs the three GET cases and prints them beside "off". */
export const operatingCosts = async (databaseUrl: string | undefined, getPath: string, auth: Record<string, string>): Promise<void> => {
  if (databaseUrl === undefined) {
    console.log("operating costs: skipped (they run the service in child processes on PostgreSQL)")
    return
  }
  const dir = mkdtempSync(join(tmpdir(), "cs-bench-logs-"))
  const sink = await otlpSink()
  const children: Array<ChildProcess> = []
  try {
    const token = "bench-metrics-token-0123456789"
    const start = async (name: string, env: Record<string, string>, root?: string) => {
      const started = await startChild(databaseUrl, join(dir, `${name}.log`), env, root)
      children.push(started.child)
      return started
    }
    const tracedEnv = { LOG_LEVEL: "info", METRICS_TOKEN: token, OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint, OTEL_TRACES_SAMPLER: process.env["BENCH_TRACES_SAMPLER"] ?? "always_on" }
    const compareTree = process.env["BENCH_COMPARE_TREE"] ?? ""
    const comparedEnv: Record<string, string> = { ...tracedEnv, ...JSON.parse(process.env["BENCH_COMPARE_ENV"] ?? "{}") }
    // whether the compared server sends its spans to the sink too (BENCH_COMPARE_ENV may turn its tracing off)
    const comparedTraced = compareTree !== "" && (comparedEnv["OTEL_EXPORTER_OTLP_ENDPOINT"] ?? "").trim() !== ""
    const servers: Record<string, { url: string; child: ChildProcess }> = {
      off: await start("off", { LOG_LEVEL: "warn" }),
      observed: await start("observed", { LOG_LEVEL: "info", METRICS_TOKEN: token }),
      traced: await start("traced", tracedEnv),
      // the control: a second process exactly like "off"
      offAgain: await start("offAgain", { LOG_LEVEL: "warn" }),
      // BENCH_COMPARE_TREE=<another worktree>: the traced case again, with that tree's code, in the same rounds
      ...(compareTree === "" ? {} : { compared: await start("compared", comparedEnv, compareTree) }),
    }
    // BENCH_VARIANTS='[{"name":"batch64","env":{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE":"64"}}]': the traced
    // case again with each set of variables added, from this tree, in the same rounds
    const variants = benchVariants(process.env["BENCH_VARIANTS"])
    for (const variant of variants) (servers as Record<string, { url: string; child: ChildProcess }>)[variant.name] = await start(variant.name, { ...tracedEnv, ...variant.env })
    type Name = "off" | "observed" | "traced" | "offAgain" | "compared"
    const names = Object.keys(servers) as Array<Name>
    /** One load case: its result and the server's CPU time per request answered in it (µs). */
    const load = async (name: Name): Promise<{ result: CannonResult; cpuPerRequest: number | undefined; mainPerRequest: number | undefined }> => {
      const pid = servers[name]!.child.pid
      const before = cpuSeconds(pid)
      const result = await autocannon({ url: `${servers[name]!.url}${getPath}`, connections: CONNECTIONS, duration: SECONDS, headers: auth })
      const after = cpuSeconds(pid)
      const per = (of: "all" | "main") => (before !== undefined && after !== undefined && result.requests.total > 0 ? ((after[of] - before[of]) * 1e6) / result.requests.total : undefined)
      return { result, cpuPerRequest: per("all"), mainPerRequest: per("main") }
    }
    // A fresh process answers its first requests slowly (compiling, caches, pools): each is warmed first.
    const warmed = new Map<Name, number>()
    for (const name of names) warmed.set(name, (await autocannon({ url: `${servers[name]!.url}${getPath}`, connections: CONNECTIONS, duration: 2, headers: auth })).requests.total)
    // Each round in another order, every case once in every place of a round over a cycle (`CYCLES`).
    const runs = new Map(names.map((name) => [name, [] as Array<Awaited<ReturnType<typeof load>>>]))
    const ROUNDS = CYCLES * names.length
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < names.length; i++) {
        const name = names[(i + round) % names.length]!
        runs.get(name)!.push(await load(name))
      }
    }
    const median = <T>(xs: Array<T>, by: (x: T) => number) => [...xs].sort((a, b) => by(a) - by(b))[Math.floor((xs.length - 1) / 2)]!
    const results = Object.fromEntries(names.map((name) => [name, median(runs.get(name)!, (r) => r.result.requests.average).result])) as Record<Name, CannonResult>
    // a case's throughput against off's in the same round, for each round: the median, lowest and highest
    // (or, `both`, against the mean of the two identical off servers of the round: the first server
    // started read slower than the second in most runs, 0.84x to 1.14x, so "off" alone may flatter a case)
    const ratios = (name: Name, both = false) => {
      const offRuns = runs.get("off")!
      const againRuns = runs.get("offAgain")!
      const base = (round: number) => (both ? (offRuns[round]!.result.requests.average + againRuns[round]!.result.requests.average) / 2 : offRuns[round]!.result.requests.average)
      const of = runs.get(name)!.map((r, round) => r.result.requests.average / base(round)).sort((a, b) => a - b)
      // the middle one, or the mean of the middle two
      const mid = (of.length - 1) / 2
      return { median: (of[Math.floor(mid)]! + of[Math.ceil(mid)]!) / 2, low: of[0]!, high: of[of.length - 1]! }
    }
    // the median of each case's rounds by its own CPU figure (rounds without one sort first and are not shown)
    const cpu = Object.fromEntries(names.map((name) => [name, median(runs.get(name)!, (r) => r.cpuPerRequest ?? -1).cpuPerRequest])) as Record<Name, number | undefined>
    const mainCpu = Object.fromEntries(names.map((name) => [name, median(runs.get(name)!, (r) => r.mainPerRequest ?? -1).mainPerRequest])) as Record<Name, number | undefined>
    const accessLines = (name: Name) => readFileSync(join(dir, `${name}.log`), "utf8").split("\n").filter((l) => l.includes('"route":"/api/v1/articles/{id}"')).length
    const lines = accessLines("observed")
    const times = (name: Name) => {
      const { median, low, high } = ratios(name)
      const against = name === "offAgain" ? "" : `, ${ratios(name, true).median.toFixed(2)}x both offs`
      return `${median.toFixed(2)}x off (rounds ${low.toFixed(2)} to ${high.toFixed(2)})${against}`
    }
    const cpuOf = (name: Name) => {
      const us = cpu[name]
      const off = cpu.off
      if (us === undefined || off === undefined) return ""
      const main = mainCpu[name]
      const mainOff = mainCpu.off
      const mainPart = main === undefined || mainOff === undefined ? "" : `, main thread ${main.toFixed(0).padStart(4)} µs${name === "off" ? "" : ` (${(main / mainOff).toFixed(2)}x)`}`
      const again = cpu.offAgain
      const bothPart = name === "off" || name === "offAgain" || again === undefined ? "" : `, ${((2 * us) / (off + again)).toFixed(2)}x both`
      return `  server CPU ${us.toFixed(0).padStart(5)} µs/request${name === "off" ? "" : ` (${(us / off).toFixed(2)}x off${bothPart})`}${mainPart}`
    }
    console.log(`operating costs (npm start's entry point in child processes, GET article, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s, each case once in every place of a round; req/s the median round, ratios the median of the rounds' own):`)
    console.log(`  off                   ${fmt(results.off)}${cpuOf("off")}`)
    console.log(`  off again (control)   ${fmt(results.offAgain)}  ${times("offAgain")}${cpuOf("offAgain")} (the bench's own noise)`)
    console.log(`  logs + metrics        ${fmt(results.observed)}  ${times("observed")}${cpuOf("observed")} (goal >= 0.95 of both offs; ${lines} access lines written)`)
    console.log(`  + tracing (all spans) ${fmt(results.traced)}  ${times("traced")}${cpuOf("traced")} (goal >= 0.8 of both offs)`)
    for (const variant of variants) console.log(`  + tracing, ${variant.name.padEnd(12)} ${fmt((results as Record<string, CannonResult>)[variant.name]!)}  ${times(variant.name as Name)}${cpuOf(variant.name as Name)}`)
    if ("compared" in results) console.log(`  + tracing, ${compareTree} ${fmt(results.compared)}  ${times("compared")}${cpuOf("compared")}`)
    // with profiles: each process's requests in all, to read its profile per request
    if ((process.env["BENCH_CPU_PROF"] ?? "") !== "") {
      console.log(`  requests per process (pid: warm-up and rounds): ${names.map((name) => `${name} ${servers[name]!.child.pid}: ${runs.get(name)!.reduce((sum, r) => sum + r.result.requests.total, warmed.get(name) ?? 0)}`).join(", ")}`)
    }
    // Stopping the servers makes the traced one export what it still holds; then every export is decoded.
    await stopAll(children)
    const spans = sink.spans()
    // every request the traced server took is one of these GETs; a request the load generator cut
    // off at the end of a case (the socket closed before the answer) ends its span before routing
    // has named it, so it is counted by kind, and the ones named by the route are shown apart
    const server = spans.filter((s) => s.kind === 2)
    const serverSpans = server.length
    const named = server.filter((s) => s.name === "GET /api/v1/articles/{id}").length
    // the GETs the traced servers answered, by their access lines (the load generator does not count those still in flight when a case ends)
    // (a variant with another sampler exports only some of its traces: its GETs are not checked, and say so)
    const sampledAll = (env: Record<string, string>) => (env["OTEL_EXPORTER_OTLP_ENDPOINT"] ?? "").trim() !== "" && (env["OTEL_TRACES_SAMPLER"] ?? "") === "always_on"
    const unchecked = variants.filter((v) => !sampledAll({ ...tracedEnv, ...v.env }) && (({ ...tracedEnv, ...v.env })["OTEL_EXPORTER_OTLP_ENDPOINT"] ?? "").trim() !== "")
    const requests = accessLines("traced") + (comparedTraced ? accessLines("compared") : 0) + variants.reduce((sum, v) => sum + (sampledAll({ ...tracedEnv, ...v.env }) ? accessLines(v.name as Name) : 0), 0)
    // what a traced GET is made of: the spans by name, most frequent first
    const byName = new Map<string, number>()
    for (const s of spans) byName.set(s.name, (byName.get(s.name) ?? 0) + 1)
    const kinds = [...byName].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([name, n]) => `${name} ${(n / Math.max(1, server.length)).toFixed(2)}`)
    console.log(`  spans per server span, by name: ${kinds.join(", ")}`)
    console.log(
      `  exported: ${spans.length} spans, ${(sink.bytes() / 1e6).toFixed(1)} MB of OTLP; ${serverSpans} server spans (${named} named by the route) for the ${requests} GETs the traced server${comparedTraced ? "s" : ""} answered${unchecked.length > 0 ? ` (not checked: ${unchecked.map((v) => v.name).join(", ")} sample${unchecked.length === 1 ? "s" : ""} otherwise)` : serverSpans === requests ? " (every one)" : " (SPANS WERE LOST)"}`,
    )
  } finally {
    await stopAll(children)
    await sink.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

// `node bench/operating.ts` (with the project's Node first on the PATH): these cases alone, on a
// throw-away database with the demo data, without the rest of the REST bench.
if (import.meta.main) {
  const { startBenchServer } = await import("./support.ts")
  const bench = await startBenchServer("cs_bench_ops")
  try {
    const app = bench.app
    if (app.demo === null) throw new Error("the demo data was not seeded")
    const auth = { authorization: `Bearer ${app.demo.apiKey}` }
    const sites = (await (await fetch(`${app.url}/api/v1/sites`, { headers: auth })).json()) as { data: Array<{ id: string; article_count: number }> }
    const site = [...sites.data].sort((a, b) => b.article_count - a.article_count)[0]!
    const list = (await (await fetch(`${app.url}/api/v1/sites/${site.id}/articles?per_page=1`, { headers: auth })).json()) as { data: Array<{ id: string }> }
    console.log(`load average: ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`)
    await operatingCosts(bench.databaseUrl, `/api/v1/articles/${list.data[0]!.id}`, auth)
    console.log(`load average: ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`)
  } finally {
    await bench.close()
  }
}
