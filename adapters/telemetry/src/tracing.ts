/**
 * Tracing with OpenTelemetry, configured by its standard variables (`OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER`, ...). Off, and nothing of OpenTelemetry loaded,
 * without an endpoint. Started before the server's modules are imported: the ESM loader hook
 * (import-in-the-middle, registered for the instrumented modules only) and the CommonJS hook
 * (require-in-the-middle) then wrap `http`, `pg` and `ioredis` as they load.
 */
import type { Tracing } from "./tracingHooks.ts"

/** A tracing setting that cannot be used: a sentence the operator can act on. */
export class TracingConfigError extends Error {
  override readonly name = "TracingConfigError"
}

/** The OTLP/HTTP encodings, by their standard names (`OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`). */
const PROTOCOLS = ["http/protobuf", "http/json"] as const

/**
 * The encoding traces are exported in: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else
 * `OTEL_EXPORTER_OTLP_PROTOCOL`, else `http/protobuf` (OpenTelemetry's default, and about a third
 * of JSON's serialising work and half its bytes). gRPC is not offered: one exporter, over HTTP.
 */
export const tracesProtocol = (env: Record<string, string | undefined>): (typeof PROTOCOLS)[number] => {
  // the variable that gave the value, so that a refusal names the one to change
  const name = (env["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] ?? "").trim() !== "" ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL" : "OTEL_EXPORTER_OTLP_PROTOCOL"
  const given = (env[name] ?? "").trim() || "http/protobuf"
  const known = PROTOCOLS.find((p) => p === given)
  if (known === undefined) throw new TracingConfigError(`${name} must be one of ${PROTOCOLS.join(", ")}, not '${given}'.`)
  return known
}

/**
 * Whether the standard variables name the service: `OTEL_SERVICE_NAME`, or a `service.name` in
 * `OTEL_RESOURCE_ATTRIBUTES` (comma-separated `key=value` pairs, percent-encoded). The default
 * name, `content-site`, is given only when neither does (the SDK's `serviceName` option would
 * override the attribute, which OpenTelemetry's specification has win over any default).
 */
export const namesService = (env: Record<string, string | undefined>): boolean =>
  (env["OTEL_SERVICE_NAME"] ?? "").trim() !== "" ||
  (env["OTEL_RESOURCE_ATTRIBUTES"] ?? "").split(",").some((pair) => {
    const at = pair.indexOf("=")
    if (at < 0) return false
    const key = pair.slice(0, at).trim()
    let decoded = key
    try {
      decoded = decodeURIComponent(key)
    } catch {
      // a malformed key is the SDK's to refuse; it names nothing here
    }
    return decoded === "service.name" && pair.slice(at + 1).trim() !== ""
  })

/**
 * Starts the OpenTelemetry SDK when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (OTLP over HTTP, the
 * endpoint's `/v1/traces`, protobuf unless told JSON), with the HTTP (outgoing calls), pg and
 * ioredis (a span per call, only inside a request's trace) instrumentations; answers the hooks the
 * server uses (`serve`: the server span of a request, which the access middleware runs it in,
 * continuing an incoming `traceparent`; health checks and scrapes are answered before that
 * middleware, so they are not traced), or undefined when tracing is off.
 */
export const startTracing = async (env: Record<string, string | undefined>): Promise<Tracing | undefined> => {
  if ((env["OTEL_EXPORTER_OTLP_ENDPOINT"] ?? "").trim() === "" && (env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] ?? "").trim() === "") return undefined
  const protocol = tracesProtocol(env)
  const { register } = await import("node:module")
  const { createAddHookMessageChannel } = await import("import-in-the-middle")
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel()
  register("import-in-the-middle/hook.mjs", import.meta.url, registerOptions)

  const [{ NodeSDK }, { WorkerSpanExporter }, { HttpInstrumentation }, { PgInstrumentation }, { IORedisInstrumentation }, api, { sqlWithoutLiterals }] =
    await Promise.all([
      import("@opentelemetry/sdk-node"),
      import("./workerSpanExporter.ts"),
      import("@opentelemetry/instrumentation-http"),
      import("@opentelemetry/instrumentation-pg"),
      import("@opentelemetry/instrumentation-ioredis"),
      import("@opentelemetry/api"),
      import("./sqlText.ts"),
    ])
  // Metrics are the Prometheus endpoint's and logs pino's: unless told otherwise the SDK exports
  // traces only (its own default would also export OTLP metrics and logs, and record a metric
  // for every request and span on the way).
  for (const name of ["OTEL_METRICS_EXPORTER", "OTEL_LOGS_EXPORTER"]) {
    if ((process.env[name] ?? "").trim() === "") process.env[name] = (env[name] ?? "").trim() === "" ? "none" : env[name]
  }
  // The batch processor drops spans once its queue is full (2048 by default: about 4 s of a GET
  // a millisecond); a collector that answers slowly for a few seconds should not cost traces.
  if ((process.env["OTEL_BSP_MAX_QUEUE_SIZE"] ?? "").trim() === "") process.env["OTEL_BSP_MAX_QUEUE_SIZE"] = (env["OTEL_BSP_MAX_QUEUE_SIZE"] ?? "").trim() === "" ? "8192" : env["OTEL_BSP_MAX_QUEUE_SIZE"]
  // The batch processor sends one batch at a time, except when it flushes (at shutdown, or
  // forced): then it hands over its whole queue at once, a batch per `maxExportBatchSize` spans.
  // The export worker takes that many, and one in flight beside them: the spans are in memory
  // already (the queue bounds them), and a flush at shutdown loses none to the worker's cap.
  const positive = (name: string, fallback: number) => {
    const n = Number((process.env[name] ?? "").trim())
    return Number.isInteger(n) && n > 0 ? n : fallback
  }
  const queue = positive("OTEL_BSP_MAX_QUEUE_SIZE", 2048)
  const batch = Math.min(positive("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512), queue)
  const exporter = new WorkerSpanExporter({ protocol, maxPendingBatches: Math.ceil(queue / batch) + 1 })
  // The pg instrumentation patches two modules: `pg`, whose statements become spans, and
  // `pg-pool`, for connect spans (not wanted: `ignoreConnectSpans`) and OpenTelemetry pool
  // metrics, counted by listeners on every acquire and release of every statement, traced or not,
  // into a meter that exports nowhere (metrics are the Prometheus endpoint's, and the SDK's metric
  // exporter is off). Its documented settings cannot turn the listeners off; the statements alone are kept.
  class StatementInstrumentation extends PgInstrumentation {
    protected override init() {
      return super.init().filter((module) => module.name !== "pg-pool")
    }
  }
  const sdk = new NodeSDK({
    ...(namesService(env) ? {} : { serviceName: "content-site" }),
    // OpenTelemetry's OTLP exporter runs in a worker thread: a batch's serialisation and its HTTP
    // request leave the event loop, whose hand-off of the spans costs it about half as much
    // (5 to 12 µs a GET less on the main thread, docs/benchmarks.md).
    traceExporter: exporter,
    instrumentations: [
      new HttpInstrumentation({
        // The server span is the access middleware's (`serve` below): the instrumentation's
        // incoming side, with its context binding of every request and response listener, was
        // nearly all of tracing's cost (docs/benchmarks.md).
        disableIncomingRequestInstrumentation: true,
        // The service's own outgoing calls (image fetches) are traced under their request only.
        requireParentforOutgoingSpans: true,
      }),
      // No Koa instrumentation: its router span said no more than the server span (which the
      // access middleware names by the route template), and cost a quarter of a GET's spans.
      // A statement is a span; taking a pooled connection is not worth one. Its text without its
      // string literals: some statements carry their values written in (the OAuth store's tokens).
      new StatementInstrumentation({
        requireParentSpan: true,
        ignoreConnectSpans: true,
        requestHook: (span, info) => span.setAttribute("db.query.text", sqlWithoutLiterals(info.query.text)),
      }),
      // A call's statement is its command's name: the default serialiser writes out every
      // argument of an EVAL (the counter's Lua script and its key) into every request's trace.
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
    ],
  })
  sdk.start()
  await waitForAllMessagesAcknowledged()

  const tracer = api.trace.getTracer("content-site")
  return {
    traceId: () => api.trace.getSpan(api.context.active())?.spanContext().traceId,
    serve: (req, res, work) => {
      // W3C traceparent (and baggage) of the caller: its trace goes on.
      const parent = api.propagation.extract(api.ROOT_CONTEXT, req.headers)
      const method = req.method ?? "GET"
      const span = tracer.startSpan(
        method,
        {
          kind: api.SpanKind.SERVER,
          attributes: {
            "http.request.method": method,
            "url.scheme": "http",
            "url.path": (req.url ?? "/").split("?")[0] ?? "/",
            "network.protocol.version": req.httpVersion,
            "network.peer.address": req.socket.remoteAddress,
            "user_agent.original": req.headers["user-agent"],
          },
        },
        parent,
      )
      return api.context.with(api.trace.setSpan(parent, span), async () => {
        try {
          return await work()
        } finally {
          const status = res.statusCode
          span.setAttribute("http.response.status_code", status)
          if (status >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR })
          span.end()
        }
      })
    },
    nameServerSpan: (method, route) => {
      const span = api.trace.getSpan(api.context.active())
      span?.updateName(`${method} ${route}`)
      span?.setAttribute("http.route", route)
    },
    // Under a request the sampler left out (a ratio sampler's usual nine in ten), the use case
    // runs in the request's span: a span of its own could not be recorded either (the standard
    // samplers decide a trace as a whole), and starting and entering it cost that request nearly
    // as much as a recorded one (docs/benchmarks.md). Its statements still see the request's context.
    span: (name, work, failed) => {
      const active = api.trace.getSpan(api.context.active())
      if (active !== undefined && !active.isRecording()) return work()
      return tracer.startActiveSpan(name, async (span) => {
        try {
          const result = await work()
          // a failure answered as a value (an MCP tool's error result), named by its problem code
          const failure = failed?.(result)
          if (failure !== undefined) span.setStatus({ code: api.SpanStatusCode.ERROR, message: failure })
          return result
        } catch (error) {
          span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.name : "failed" })
          throw error
        } finally {
          span.end()
        }
      })
    },
    shutdown: async () => {
      // A batch the collector refused (or never got) rejects the SDK's shutdown as soon as it
      // fails, every batch handed over but not all answered, and the exporter not shut down: the
      // exporter's own shutdown then waits for the rest (the SDK's already called it when none
      // failed: the same promise), so the counts hold every span.
      await sdk.shutdown().catch(() => undefined)
      await exporter.shutdown()
      return exporter.counts()
    },
  }
}
