/** The span exporter whose OTLP serialisation and sending run in a worker thread. */
import { ExportResultCode, type ExportResult } from "@opentelemetry/core"
import { resourceFromAttributes } from "@opentelemetry/resources"
import { tracing } from "@opentelemetry/sdk-node"
import { context, SpanKind, trace } from "@opentelemetry/api"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startOtlpReceiver } from "../../../test/support/otlpReceiver.ts"
import { WorkerSpanExporter } from "../src/workerSpanExporter.ts"
import { readdirSync, readFileSync } from "node:fs"
import { getPriority } from "node:os"

/** The export thread's niceness (`spanExportWorker.ts`), written here: that module runs only in its worker. */
const SPAN_EXPORT_NICE = 10

let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>
beforeAll(async () => {
  receiver = await startOtlpReceiver()
})
afterAll(() => receiver.close())

/** A tracer whose spans go, in batches, to `exporter`. */
const providerFor = (exporter: WorkerSpanExporter, service: string) =>
  new tracing.BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": service }),
    spanProcessors: [new tracing.BatchSpanProcessor(exporter, { scheduledDelayMillis: 60_000 })],
  })

describe("WorkerSpanExporter", () => {
  for (const protocol of ["http/protobuf", "http/json"] as const) {
    it(`should export every span with its tree, kind, attributes and resource over ${protocol}, flushed by the provider's shutdown`, async () => {
      const service = `worker-export-${protocol}`
      const exporter = new WorkerSpanExporter({ protocol, env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint } })
      const provider = providerFor(exporter, service)
      const tracer = provider.getTracer("test")
      const server = tracer.startSpan("GET /api/v1/articles/{id}", { kind: SpanKind.SERVER, attributes: { "http.route": "/api/v1/articles/{id}", "http.response.status_code": 200 } })
      const child = tracer.startSpan("getArticle", { attributes: { "retry.count": 0, flags: ["a", "b"] } }, trace.setSpan(context.active(), server))
      child.addEvent("cache miss", { key: "art_1" })
      child.end()
      server.end()
      // nothing is exported before the shutdown (the batch waits a minute): the shutdown flushes it through the worker
      await provider.shutdown()

      const mine = receiver.spans.filter((s) => s.service === service)
      expect(mine.map((s) => s.name).sort()).toEqual(["GET /api/v1/articles/{id}", "getArticle"])
      const serverSpan = mine.find((s) => s.kind === 2)!
      const childSpan = mine.find((s) => s.name === "getArticle")!
      expect(serverSpan.traceId).toBe(server.spanContext().traceId)
      expect(serverSpan.spanId).toBe(server.spanContext().spanId)
      expect(serverSpan.parentSpanId).toBeUndefined()
      expect(serverSpan.attributes["http.route"]).toBe("/api/v1/articles/{id}")
      expect(Number(serverSpan.attributes["http.response.status_code"])).toBe(200)
      expect(childSpan.traceId).toBe(serverSpan.traceId)
      expect(childSpan.parentSpanId).toBe(serverSpan.spanId)
      expect(childSpan.kind).toBe(1)
      expect(exporter.counts()).toEqual({ exported: 2, failed: 0, dropped: 0 })
      expect(receiver.contentTypes.at(-1)).toBe(protocol === "http/json" ? "application/json" : "application/x-protobuf")
    })
  }

  it("should serialise and send in a thread below the event loop's priority (nice 10), the event loop's unchanged", async () => {
    const threadsNow = () =>
      readdirSync("/proc/self/task").map((tid) => {
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8")
        return { tid: Number(tid), nice: Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]) }
      })
    const before = new Set(threadsNow().map((t) => t.tid))
    const ownNice = getPriority()
    const exporter = new WorkerSpanExporter({ protocol: "http/protobuf", env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint } })
    const provider = providerFor(exporter, "worker-export-nice")
    provider.getTracer("test").startSpan("one").end()
    // the batch's answer comes from the worker's exporter: its thread has run its module by then
    await provider.forceFlush()
    expect(exporter.counts().exported).toBe(1)
    const started = threadsNow().filter((t) => !before.has(t.tid) && t.nice !== ownNice)
    await provider.shutdown()
    // lowering one's own thread needs no privilege; a process already below nice 10 stays where it is
    expect(started.map((t) => t.nice)).toEqual(ownNice < SPAN_EXPORT_NICE ? [SPAN_EXPORT_NICE] : [])
    expect(getPriority()).toBe(ownNice)
  })

  it("should refuse a batch, and count its spans dropped, while maxPendingBatches batches wait for the worker", async () => {
    const exporter = new WorkerSpanExporter({ protocol: "http/protobuf", maxPendingBatches: 1, env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint } })
    const provider = new tracing.BasicTracerProvider({ resource: resourceFromAttributes({ "service.name": "worker-export-bounded" }) })
    const tracer = provider.getTracer("test")
    const spans = (n: number) =>
      Array.from({ length: n }, (_, i) => {
        const span = tracer.startSpan(`span ${i}`)
        span.end()
        return span as unknown as tracing.ReadableSpan
      })
    const results: Array<ExportResult> = []
    const answered = new Promise<void>((resolve) => exporter.export(spans(3), (r) => (results.push(r), resolve())))
    // the first batch is the worker's until it answers: a second one now is over the cap
    exporter.export(spans(2), (r) => results.push(r))
    expect(results.map((r) => r.code)).toEqual([ExportResultCode.FAILED])
    expect(exporter.counts()).toEqual({ exported: 0, failed: 0, dropped: 2 })
    await answered
    expect(results.map((r) => r.code)).toEqual([ExportResultCode.FAILED, ExportResultCode.SUCCESS])
    expect(exporter.counts()).toEqual({ exported: 3, failed: 0, dropped: 2 })
    await exporter.shutdown()
    // after the shutdown every batch is refused, and counted
    exporter.export(spans(1), (r) => results.push(r))
    expect(results.at(-1)!.code).toBe(ExportResultCode.FAILED)
    expect(exporter.counts().dropped).toBe(3)
    expect(receiver.spans.filter((s) => s.service === "worker-export-bounded")).toHaveLength(3)
  })

  it("should answer a batch as failed, and count it, when the collector refuses it", async () => {
    // nothing listens on port 9 of this host (discard): the worker's exporter fails
    const exporter = new WorkerSpanExporter({ protocol: "http/protobuf", env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_EXPORTER_OTLP_TIMEOUT: "2000" } })
    const provider = new tracing.BasicTracerProvider()
    const span = provider.getTracer("test").startSpan("lost")
    span.end()
    const result = await new Promise<ExportResult>((resolve) => exporter.export([span as unknown as tracing.ReadableSpan], resolve))
    expect(result.code).toBe(ExportResultCode.FAILED)
    expect(exporter.counts()).toEqual({ exported: 0, failed: 1, dropped: 0 })
    await exporter.shutdown()
  })
})

describe("WorkerSpanExporter, its worker failed", () => {
  it("should answer every batch as failed, and count it, when its worker has ended on an error, and still shut down", async () => {
    // a worker that throws on its first message, as one whose exporter failed outright would end
    const failing = new URL(`data:text/javascript,${encodeURIComponent('import { parentPort } from "node:worker_threads"; parentPort.on("message", () => { throw new Error("boom") })')}`)
    const exporter = new WorkerSpanExporter({ protocol: "http/protobuf", workerModule: failing })
    const provider = new tracing.BasicTracerProvider()
    const span = provider.getTracer("test").startSpan("lost")
    span.end()
    const first = await new Promise<ExportResult>((resolve) => exporter.export([span as unknown as tracing.ReadableSpan], resolve))
    expect(first.code).toBe(ExportResultCode.FAILED)
    const later = await new Promise<ExportResult>((resolve) => exporter.export([span as unknown as tracing.ReadableSpan, span as unknown as tracing.ReadableSpan], resolve))
    expect(later.code).toBe(ExportResultCode.FAILED)
    expect(exporter.counts()).toEqual({ exported: 0, failed: 3, dropped: 0 })
    await exporter.shutdown()
  })
})
