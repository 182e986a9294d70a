/**
 * Operating the service: the structured log (pino), the Prometheus metrics (prom-client) and the
 * per-request access line and samples. Tracing (OpenTelemetry) is in `./tracing`, loaded only
 * when an OTLP endpoint is configured.
 */
export * from "./logger.ts"
export * from "./metrics.ts"
export * from "./requestTelemetry.ts"
export * from "./articleChanges.ts"
export type { Tracing } from "./tracingHooks.ts"
