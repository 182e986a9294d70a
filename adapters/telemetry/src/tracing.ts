/**
 * Tracing with OpenTelemetry, configured by its standard variables (`OTEL_EXPORTER_OTLP_ENDPOINT`,
 * `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER`, ...). Off, and nothing of OpenTelemetry loaded,
 * without an endpoint. Started before the server's modules are imported: the ESM loader hook
 * (import-in-the-middle, registered for the instrumented modules only) and the CommonJS hook
 * (require-in-the-middle) then wrap `http`, `koa`, `pg` and `ioredis` as they load.
 */
import type { Tracing } from "./tracingHooks.ts"

/** Requests that are not traced: health checks and scrapes, answered many times a minute. */
const UNTRACED = new Set(["/healthz", "/readyz", "/metrics"])

/**
 * Starts the OpenTelemetry SDK when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (OTLP over HTTP, the
 * endpoint's `/v1/traces`), with the HTTP (server span per request, incoming `traceparent`
 * honoured), Koa (router spans), pg and ioredis (a span per call, only inside a request's trace)
 * instrumentations; answers the hooks the server uses, or undefined when tracing is off.
 */
export const startTracing = async (env: Record<string, string | undefined>): Promise<Tracing | undefined> => {
  if ((env["OTEL_EXPORTER_OTLP_ENDPOINT"] ?? "").trim() === "" && (env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] ?? "").trim() === "") return undefined
  const { register } = await import("node:module")
  const { createAddHookMessageChannel } = await import("import-in-the-middle")
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel()
  register("import-in-the-middle/hook.mjs", import.meta.url, registerOptions)

  const [{ NodeSDK }, { OTLPTraceExporter }, { HttpInstrumentation }, { KoaInstrumentation, KoaLayerType }, { PgInstrumentation }, { IORedisInstrumentation }, api, { getRPCMetadata, RPCType }] =
    await Promise.all([
      import("@opentelemetry/sdk-node"),
      import("@opentelemetry/exporter-trace-otlp-http"),
      import("@opentelemetry/instrumentation-http"),
      import("@opentelemetry/instrumentation-koa"),
      import("@opentelemetry/instrumentation-pg"),
      import("@opentelemetry/instrumentation-ioredis"),
      import("@opentelemetry/api"),
      import("@opentelemetry/core"),
    ])
  // Metrics are the Prometheus endpoint's and logs pino's: unless told otherwise the SDK exports
  // traces only (its own default would also export OTLP metrics and logs, and record a metric
  // for every request and span on the way).
  for (const name of ["OTEL_METRICS_EXPORTER", "OTEL_LOGS_EXPORTER"]) {
    if ((process.env[name] ?? "").trim() === "") process.env[name] = (env[name] ?? "").trim() === "" ? "none" : env[name]
  }
  const sdk = new NodeSDK({
    ...((env["OTEL_SERVICE_NAME"] ?? "").trim() === "" ? { serviceName: "content-site" } : {}),
    traceExporter: new OTLPTraceExporter(),
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED.has((req.url ?? "").split("?")[0] ?? ""),
        // The service's own outgoing calls (image fetches) are traced under their request only.
        requireParentforOutgoingSpans: true,
      }),
      // Router spans only: a span for each of the app's middleware would outnumber the work.
      new KoaInstrumentation({ ignoreLayersType: [KoaLayerType.MIDDLEWARE] }),
      // A statement is a span; taking a pooled connection is not worth one.
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  })
  sdk.start()
  await waitForAllMessagesAcknowledged()

  const tracer = api.trace.getTracer("content-site")
  return {
    traceId: () => api.trace.getSpan(api.context.active())?.spanContext().traceId,
    nameServerSpan: (_method, route) => {
      // The HTTP instrumentation names its server span `METHOD route` from this when the answer is sent.
      const metadata = getRPCMetadata(api.context.active())
      if (metadata?.type === RPCType.HTTP) metadata.route = route
    },
    span: (name, work) =>
      tracer.startActiveSpan(name, async (span) => {
        try {
          return await work()
        } catch (error) {
          span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.name : "failed" })
          throw error
        } finally {
          span.end()
        }
      }),
    shutdown: () => sdk.shutdown(),
  }
}
