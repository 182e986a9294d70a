/**
 * What operating the service costs a GET (issue 31): the same `npm start` entry point in three
 * child processes on the bench's database, loaded in alternating rounds: off (no access lines, no
 * metrics, no tracing), logs + metrics (a JSON access line per request written to a file, as a
 * log shipper would tail it; every request counted for /metrics), and tracing on top (sampling
 * 1.0, every span exported over OTLP/HTTP to a sink in this process). Goals: logs + metrics >=
 * 0.95x off, tracing >= 0.8x off. Child processes, because tracing instruments modules as they
 * load: it cannot be switched on in a process that has loaded them.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { autocannon, type CannonResult, CONNECTIONS, fmt, ROUNDS, SECONDS } from "./support.ts"

const repoRoot = new URL("../", import.meta.url).pathname
const nodeBin = join(repoRoot, "node_modules", ".bin", "node")

/** An OTLP/HTTP endpoint that reads every export and drops it (counting the bytes). */
const otlpSink = async () => {
  let bytes = 0
  const server = createServer((req, res) => {
    req.on("data", (chunk: Buffer) => (bytes += chunk.length))
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bytes: () => bytes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

/** Starts `apps/server/main.ts` with `env`, its stdout into `logFile`; answers its URL. */
const startChild = async (databaseUrl: string, logFile: string, env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> => {
  const out = openSync(logFile, "w")
  const dataDir = mkdtempSync(join(tmpdir(), "cs-bench-ops-"))
  const child = spawn(nodeBin, ["apps/server/main.ts"], {
    cwd: repoRoot,
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
    const start = async (name: string, env: Record<string, string>) => {
      const started = await startChild(databaseUrl, join(dir, `${name}.log`), env)
      children.push(started.child)
      return started.url
    }
    const off = await start("off", { LOG_LEVEL: "warn" })
    const observed = await start("observed", { LOG_LEVEL: "info", METRICS_TOKEN: token })
    const traced = await start("traced", { LOG_LEVEL: "info", METRICS_TOKEN: token, OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint, OTEL_TRACES_SAMPLER: "always_on" })
    const load = (base: string) => () => autocannon({ url: `${base}${getPath}`, connections: CONNECTIONS, duration: SECONDS, headers: auth })
    // A fresh process answers its first requests slowly (compiling, caches, pools): each is warmed first.
    for (const base of [off, observed, traced]) await autocannon({ url: `${base}${getPath}`, connections: CONNECTIONS, duration: 2, headers: auth })
    // Each round in another order: on a shared machine the case measured last in a round was
    // repeatedly the slowest, whichever it was, so no case keeps that place.
    const cases = { off: load(off), observed: load(observed), traced: load(traced) }
    const names = Object.keys(cases) as Array<keyof typeof cases>
    const runs = new Map(names.map((name) => [name, [] as Array<CannonResult>]))
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < names.length; i++) {
        const name = names[(i + round) % names.length]!
        runs.get(name)!.push(await cases[name]())
      }
    }
    const median = (rs: Array<CannonResult>) => [...rs].sort((a, b) => a.requests.average - b.requests.average)[Math.floor((rs.length - 1) / 2)]!
    const results = Object.fromEntries(names.map((name) => [name, median(runs.get(name)!)])) as Record<keyof typeof cases, CannonResult>
    const lines = readFileSync(join(dir, "observed.log"), "utf8").split("\n").filter((l) => l.includes('"route":"/api/v1/articles/{id}"')).length
    const times = (r: CannonResult) => (r.requests.average / results.off.requests.average).toFixed(2)
    console.log(`operating costs (npm start's entry point in child processes, GET article, ${CONNECTIONS} connections, median of ${ROUNDS} rounds, each in another order):`)
    console.log(`  off                   ${fmt(results.off)}`)
    console.log(`  logs + metrics        ${fmt(results.observed)}  ${times(results.observed)}x off (goal >= 0.95; ${lines} access lines written)`)
    console.log(`  + tracing (all spans) ${fmt(results.traced)}  ${times(results.traced)}x off (goal >= 0.8; ${(sink.bytes() / 1e6).toFixed(1)} MB of OTLP exported)`)
  } finally {
    for (const child of children) {
      if (child.exitCode !== null) continue
      const gone = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGTERM")
      await gone
    }
    await sink.close()
    rmSync(dir, { recursive: true, force: true })
  }
}
