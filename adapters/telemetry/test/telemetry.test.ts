/** The telemetry adapter's parts on their own: route labels, the /metrics gate, the readable log, tracing off. */
import { requestId } from "@content-site/http"
import Koa from "koa"
import { pino } from "pino"
import { spawnSync } from "node:child_process"
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { createLogger, createMetrics, metricsEndpoint, routeOf, type RouteTable } from "../src/index.ts"
import { GatheredLines } from "../src/gatheredLines.ts"
import { isoTime } from "../src/logger.ts"
import { startTracing, tracesProtocol } from "../src/tracing.ts"

const TABLE: RouteTable = { exact: ["/mcp", "/oauth/token"], prefixes: [["/oauth/interaction/", "/oauth/interaction/{uid}"], ["/media/", "/media/{file}"]] }
const ctxOf = (path: string, matched?: string, noted?: string) =>
  ({ path, state: noted === undefined ? {} : { notes: { route: noted } }, ...(matched !== undefined ? { _matchedRoute: matched } : {}) }) as unknown as Koa.ParameterizedContext

describe("routeOf", () => {
  it("should label a request by the router's pattern, the table's path or prefix, or unmatched: never by its raw path", () => {
    expect(routeOf(ctxOf("/api/v1/articles/art_1", "/api/v1/articles/:id"), TABLE)).toBe("/api/v1/articles/{id}")
    expect(routeOf(ctxOf("/api/v1/articles/art_1/revisions/3", "/api/v1/articles/:id/revisions/:number"), TABLE)).toBe("/api/v1/articles/{id}/revisions/{number}")
    expect(routeOf(ctxOf("/mcp/"), TABLE)).toBe("/mcp")
    expect(routeOf(ctxOf("/oauth/token"), TABLE)).toBe("/oauth/token")
    expect(routeOf(ctxOf("/oauth/interaction/Xy12abc/login"), TABLE)).toBe("/oauth/interaction/{uid}")
    expect(routeOf(ctxOf("/media/acc_1/img_2.webp"), TABLE)).toBe("/media/{file}")
    for (const path of ["/api/v1/art_1/nothing", "/wp-admin", "/oauth/tokens", "/"]) expect(routeOf(ctxOf(path), TABLE)).toBe("unmatched")
    // a template its handler noted, where no router matched (a known API path with a method it does not take)
    expect(routeOf(ctxOf("/api/v1/articles/art_1", undefined, "/api/v1/articles/{id}"), TABLE)).toBe("/api/v1/articles/{id}")
  })
})

const serve = async (app: Koa) => {
  const server = createServer(app.callback())
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

describe("metricsEndpoint", () => {
  it("should answer a 404 problem without a token configured, a 401 problem to a wrong one, and the exposition to the right one", async () => {
    const metrics = createMetrics()
    metrics.request({ method: "GET", route: "/api/v1/sites", status: 200, seconds: 0.01, channel: "api" })
    const app = new Koa()
    app.use(requestId())
    app.use(metricsEndpoint({ metrics, token: "the-right-token-0123", publicUrl: "http://x.test" }))
    const { url, close } = await serve(app)
    try {
      const off = new Koa()
      off.use(requestId())
      off.use(metricsEndpoint({ metrics: undefined, token: undefined, publicUrl: "http://x.test" }))
      const unset = await serve(off)
      try {
        const res = await fetch(`${unset.url}/metrics`, { headers: { authorization: "Bearer the-right-token-0123" } })
        expect(res.status).toBe(404)
        expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/)
        const problem = (await res.json()) as { code: string; detail: string; request_id: string }
        expect(problem.code).toBe("not_found")
        // as any unserved path: not sent to the API's OpenAPI document, which lists no /metrics
        expect(problem.detail).toBe("Nothing is served at '/metrics'.")
        expect(problem.request_id).toBe(res.headers.get("x-request-id"))
      } finally {
        await unset.close()
      }
      const wrong = await fetch(`${url}/metrics`, { headers: { authorization: "Bearer the-wrong-token-0123" } })
      expect(wrong.status).toBe(401)
      expect(((await wrong.json()) as { code: string }).code).toBe("unauthenticated")
      expect(wrong.headers.get("www-authenticate")).toMatch(/^Bearer/)
      const right = await fetch(`${url}/metrics`, { headers: { authorization: "Bearer the-right-token-0123" } })
      expect(right.status).toBe(200)
      expect(await right.text()).toContain('http_server_request_duration_seconds_count{method="GET",route="/api/v1/sites",status="200"} 1')
    } finally {
      await close()
    }
  })
})

describe("createLogger", () => {
  it("should write readable lines in the pretty format: an access line as method, route, status, time, request id, account and trace", () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-log-"))
    const fd = openSync(join(dir, "out.log"), "w")
    try {
      const logger = createLogger({ level: "info", format: "pretty", destination: fd })
      logger.info({ request_id: "req_abc123", method: "GET", route: "/api/v1/sites", status: 200, duration_ms: 3.2, channel: "api", account_id: "acc_1" }, "GET /api/v1/sites 200")
      logger.info({ request_id: "req_def456", method: "PUT", route: "/api/v1/articles/{id}", status: 400, duration_ms: 1, channel: "api", code: "invalid_request", trace_id: "0af7651916cd43dd8448eb211c80319c" }, "PUT /api/v1/articles/{id} 400")
      logger.info("Content-Site is listening on http://localhost:3000 (REST API, MCP connector, web pages)")
      logger.debug("not at info")
      const text = readFileSync(join(dir, "out.log"), "utf8").replace(/\x1b\[[0-9;]*m/g, "")
      const [access, refused, started, ...rest] = text.trimEnd().split("\n")
      expect(access).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: GET \/api\/v1\/sites 200 3\.2 ms req_abc123 acc_1$/)
      expect(refused).toMatch(/INFO: PUT \/api\/v1\/articles\/\{id\} 400 invalid_request 1 ms req_def456 trace 0af7651916cd43dd8448eb211c80319c$/)
      expect(started).toMatch(/INFO: Content-Site is listening on http:\/\/localhost:3000 \(REST API, MCP connector, web pages\)$/)
      expect(rest).toEqual([])
    } finally {
      closeSync(fd)
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("should keep an error event's request id and tool in its readable line, to find the request it failed", () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-log-"))
    const fd = openSync(join(dir, "out.log"), "w")
    try {
      const logger = createLogger({ level: "info", format: "pretty", destination: fd })
      logger.error({ request_id: "req_abc123", detail: "Error: boom" }, "internal error")
      logger.error({ request_id: "req_def456", tool: "get_article", cause: "Error: boom" }, "MCP tool failed")
      logger.info({ migrations: ["m1", "m2"] }, "database: applied 2 migrations")
      const text = readFileSync(join(dir, "out.log"), "utf8").replace(/\x1b\[[0-9;]*m/g, "")
      const [internal, tool, migrated, ...rest] = text.trimEnd().split("\n")
      expect(internal).toMatch(/ERROR: internal error req_abc123 .*Error: boom/)
      expect(tool).toMatch(/ERROR: MCP tool failed \(get_article\) req_def456 /)
      expect(migrated).toMatch(/INFO: database: applied 2 migrations$/)
      expect(rest).toEqual([])
    } finally {
      closeSync(fd)
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("createLogger's JSON lines", () => {
  it("should keep every line whole and in order across its gathered writes, multi-byte text as sent, and write what is left within its flush interval", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-log-"))
    const fd = openSync(join(dir, "out.log"), "w")
    const logger = createLogger({ level: "info", format: "json", destination: fd })
    try {
      // 200 lines of about 270 bytes: four of the destination's 12 KiB writes, and a rest below one
      const names = ["Grüße", "日本語の記事", "emoji 😀 and «quotes»", "plain"]
      const pad = "x".repeat(150)
      for (let i = 0; i < 200; i++) logger.info({ request_id: `req_${i}`, name: names[i % names.length], pad }, `line ${i} ${"é".repeat(i % 7)}`)
      // the rest goes out within the destination's flush interval (100 ms): waited for, at most 10 s (a loaded machine)
      const written = () => readFileSync(join(dir, "out.log"), "utf8")
      for (const giveUpAt = Date.now() + 10_000; !written().endsWith(`"msg":"line 199 ${"é".repeat(199 % 7)}"}\n`) && Date.now() < giveUpAt; ) {
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      const lines = written().trimEnd().split("\n")
      expect(lines).toHaveLength(200)
      lines.forEach((line, i) => {
        const parsed = JSON.parse(line) as Record<string, unknown>
        expect(parsed).toMatchObject({ level: "info", request_id: `req_${i}`, name: names[i % names.length], pad, msg: `line ${i} ${"é".repeat(i % 7)}` })
      })
    } finally {
      // the destination ends its flush timer and closes the file it writes (it owns the descriptor now)
      const destination = (logger as unknown as Record<symbol, GatheredLines>)[pino.symbols.streamSym]!
      await new Promise<void>((resolve) => destination.end(resolve))
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("GatheredLines", () => {
  const file = () => {
    const dir = mkdtempSync(join(tmpdir(), "cs-gathered-"))
    return { dir, path: join(dir, "out.log") }
  }
  const until = async (done: () => boolean) => {
    for (const giveUpAt = Date.now() + 10_000; !done() && Date.now() < giveUpAt; ) await new Promise((resolve) => setTimeout(resolve, 10))
  }

  it("should hand its lines over once they hold its bound, and the rest when flushed, without waiting for its interval", async () => {
    const { dir, path } = file()
    // an interval of an hour: only the bound and flush() can have written these
    const lines = new GatheredLines(openSync(path, "w"), 100, 3_600_000)
    try {
      for (let i = 0; i < 3; i++) lines.write(`${String(i).repeat(39)}\n`)
      await until(() => readFileSync(path, "utf8").length === 120)
      expect(readFileSync(path, "utf8")).toBe(`${"0".repeat(39)}\n${"1".repeat(39)}\n${"2".repeat(39)}\n`)
      lines.write("rest\n")
      lines.flush()
      await until(() => readFileSync(path, "utf8").endsWith("rest\n"))
      expect(readFileSync(path, "utf8").split("\n")).toHaveLength(5)
    } finally {
      await new Promise<void>((resolve) => lines.end(resolve))
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("should write what it gathered when the process exits at once (process.exit), as pino's own destination does", () => {
    const { dir, path } = file()
    try {
      const module = new URL("../src/gatheredLines.ts", import.meta.url).href
      const script = `import { openSync } from "node:fs"
        const { GatheredLines } = await import(${JSON.stringify(module)})
        const lines = new GatheredLines(openSync(${JSON.stringify(path)}, "w"), 1 << 20, 3_600_000)
        for (let i = 0; i < 1000; i++) lines.write("line " + i + "\\n")
        process.exit(0)`
      const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })
      expect(run.stderr).toBe("")
      expect(run.status).toBe(0)
      const written = readFileSync(path, "utf8").trimEnd().split("\n")
      expect(written).toHaveLength(1000)
      expect(written.at(-1)).toBe("line 999")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("startTracing", () => {
  it("should answer nothing (tracing off) without an OTLP endpoint", async () => {
    expect(await startTracing({})).toBeUndefined()
    expect(await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: "  ", OTEL_SERVICE_NAME: "x" })).toBeUndefined()
  })
})

describe("tracesProtocol", () => {
  it("should export protobuf unless the standard variables ask for JSON, the traces' own variable first", () => {
    expect(tracesProtocol({})).toBe("http/protobuf")
    expect(tracesProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: " " })).toBe("http/protobuf")
    expect(tracesProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })).toBe("http/json")
    expect(tracesProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/protobuf" })).toBe("http/protobuf")
  })

  it("should refuse gRPC and unknown encodings with one sentence rather than export nothing", () => {
    expect(() => tracesProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toThrow("OTEL_EXPORTER_OTLP_PROTOCOL must be one of http/protobuf, http/json, not 'grpc'.")
    expect(() => tracesProtocol({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/xml" })).toThrow(/not 'http\/xml'/)
  })

  it("should name the variable whose value it refuses: the traces' own when that one is set", () => {
    expect(() => tracesProtocol({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" })).toThrow(
      "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be one of http/protobuf, http/json, not 'grpc'.",
    )
  })
})

describe("isoTime", () => {
  it("should write pino's time field as ISO 8601, the date and time to the second made again only when the second changes", () => {
    let now = Date.parse("2026-11-28T03:24:12.345Z")
    const made: Array<number> = []
    const time = isoTime(() => now)
    const spy = Date.prototype.toISOString
    Date.prototype.toISOString = function (this: Date) {
      made.push(this.getTime())
      return spy.call(this)
    }
    try {
      expect(time()).toBe(',"time":"2026-11-28T03:24:12.345Z"')
      expect(time()).toBe(',"time":"2026-11-28T03:24:12.345Z"')
      now += 1
      expect(time()).toBe(',"time":"2026-11-28T03:24:12.346Z"')
      expect(JSON.parse(`{"level":"info"${time()}}`)).toEqual({ level: "info", time: "2026-11-28T03:24:12.346Z" })
      now += 654
      expect(time()).toBe(',"time":"2026-11-28T03:24:13.000Z"')
    } finally {
      Date.prototype.toISOString = spy
    }
    expect(made).toEqual([Date.parse("2026-11-28T03:24:12Z"), Date.parse("2026-11-28T03:24:13Z")])
  })

  it("should write every millisecond as toISOString does, across seconds, days and years", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -62_135_596_800_000, max: 253_402_300_799_999 }), { minLength: 1, maxLength: 20 }), (instants) => {
        let now = 0
        const time = isoTime(() => now)
        for (const instant of [...instants].sort((a, b) => a - b)) {
          for (const ms of [instant, instant + 1, instant + 9, instant + 99, instant + 999]) {
            now = ms
            expect(time()).toBe(`,"time":"${new Date(ms).toISOString()}"`)
          }
        }
      }),
    )
  })
})
