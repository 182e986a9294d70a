/**
 * A request the sampler leaves out. A file of its own, run isolated (the "service" project): the
 * SDK registers OpenTelemetry's globals once a process, and this one samples nothing.
 */
import { trace, context } from "@opentelemetry/api"
import type { IncomingMessage, ServerResponse } from "node:http"
import { describe, expect, it } from "vitest"
import { startTracing } from "../../adapters/telemetry/src/tracing.ts"

const request = { method: "GET", url: "/api/v1/articles/art_1?x=1", httpVersion: "1.1", headers: {}, socket: { remoteAddress: "127.0.0.1" } } as unknown as IncomingMessage
const response = { statusCode: 200 } as unknown as ServerResponse

describe("startTracing with a sampler that records no request", () => {
  it("should run a use case in its request's span, starting none of its own, and export nothing", async () => {
    process.env["OTEL_TRACES_SAMPLER"] = "always_off"
    process.env["OTEL_EXPORTER_OTLP_TIMEOUT"] = "1000"
    const tracing = (await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_SERVICE_NAME: "unsampled-test" }))!
    const seen = await tracing.serve(request, response, async () => {
      const outer = trace.getSpan(context.active())
      const inner = await tracing.span("getArticle", async () => trace.getSpan(context.active()))
      return { outer, inner, traceId: tracing.traceId() }
    })
    // the request's span is there (its trace id goes to the access line and to outgoing calls, unsampled) ...
    expect(seen.outer?.isRecording()).toBe(false)
    expect(seen.traceId).toMatch(/^[0-9a-f]{32}$/)
    // ... and the use case ran in it, not in a span of its own
    expect(seen.inner).toBe(seen.outer)
    // a use case outside any request still gets its span (nothing here samples it)
    expect(await tracing.span("housekeeping", async () => trace.getSpan(context.active())?.spanContext().spanId)).toMatch(/^[0-9a-f]{16}$/)
    expect(await tracing.shutdown()).toEqual({ exported: 0, failed: 0, dropped: 0 })
  })
})
