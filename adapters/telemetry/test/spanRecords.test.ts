/** A span handed to the export worker as a record, and rebuilt there: what is exported is what the SDK's span would have exported. */
import { JsonTraceSerializer, ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer"
import { resourceFromAttributes } from "@opentelemetry/resources"
import { tracing } from "@opentelemetry/sdk-node"
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api"
import { W3CTraceContextPropagator } from "@opentelemetry/core"
import { describe, expect, it } from "vitest"
import { RECORD_SLOTS, readableSpans, spanRecords } from "../src/spanRecords.ts"

type ReadableSpan = tracing.ReadableSpan

/** Finished spans of every shape the service makes and a few it does not: a remote parent with a trace state, events, links, an error, dropped attributes. */
const finishedSpans = (): Array<ReadableSpan> => {
  const spans: Array<ReadableSpan> = []
  const provider = new tracing.BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": "records" }),
    spanLimits: { attributeCountLimit: 4, eventCountLimit: 2, linkCountLimit: 1 },
    spanProcessors: [new tracing.SimpleSpanProcessor({ export: (s, done) => (spans.push(...s), done({ code: 0 })), shutdown: async () => {} })],
  })
  const tracer = provider.getTracer("content-site", "1.2.3")
  const other = provider.getTracer("pg")
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  const remote = propagation.extract(ROOT_CONTEXT, { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", tracestate: "vendor=abc,other=1" })
  const server = tracer.startSpan("GET", { kind: SpanKind.SERVER, attributes: { "http.request.method": "GET", "url.path": "/api/v1/articles/art_1" } }, remote)
  server.updateName("GET /api/v1/articles/{id}")
  const inServer = trace.setSpan(remote, server)
  const useCase = tracer.startSpan("getArticle", {}, inServer)
  const query = other.startSpan("pg.query:cs_5", { kind: SpanKind.CLIENT, attributes: { "db.system.name": "postgresql", "server.port": 5432, "db.query.text": "select 1", flags: ["a", "b"], extra: true } }, trace.setSpan(inServer, useCase))
  query.addEvent("first", { at: 1 })
  query.addEvent("second")
  query.addEvent("third (dropped)")
  query.addLink({ context: server.spanContext(), attributes: { why: "follows" } })
  query.addLink({ context: useCase.spanContext() })
  query.setStatus({ code: SpanStatusCode.ERROR, message: "connection reset" })
  query.end()
  useCase.end()
  server.setAttribute("http.response.status_code", 200)
  server.end()
  const alone = tracer.startSpan("housekeeping")
  tracer.startSpan("bare", {}, trace.setSpan(ROOT_CONTEXT, alone)).end()
  alone.setStatus({ code: SpanStatusCode.OK })
  alone.end()
  context.disable()
  return spans
}

describe("span records", () => {
  const spans = finishedSpans()

  it("should rebuild in the worker spans whose OTLP export is the SDK's own, byte for byte", () => {
    expect(spans).toHaveLength(5)
    const scopes = new Map<ReadableSpan["instrumentationScope"], number>()
    // the records cross to the worker as a structured clone
    const records = structuredClone(spanRecords(spans, scopes))
    expect(records).toHaveLength(5 * RECORD_SLOTS)
    const rebuilt = readableSpans(records, [...scopes.keys()], spans[0]!.resource)
    const json = (of: ReadonlyArray<ReadableSpan>) => new TextDecoder().decode(JsonTraceSerializer.serializeRequest([...of]))
    expect(json(rebuilt)).toBe(json(spans))
    const protobuf = (of: ReadonlyArray<ReadableSpan>) => Buffer.from(ProtobufTraceSerializer.serializeRequest([...of])!).toString("hex")
    expect(protobuf(rebuilt)).toBe(protobuf(spans))
    // what the SDK said of each, the duration and the dropped counts included
    for (const [i, span] of spans.entries()) {
      expect(rebuilt[i]!.name).toBe(span.name)
      expect(rebuilt[i]!.duration).toEqual(span.duration)
      expect([rebuilt[i]!.droppedAttributesCount, rebuilt[i]!.droppedEventsCount, rebuilt[i]!.droppedLinksCount]).toEqual([span.droppedAttributesCount, span.droppedEventsCount, span.droppedLinksCount])
      expect(rebuilt[i]!.parentSpanContext?.spanId).toBe(span.parentSpanContext?.spanId)
      expect(rebuilt[i]!.parentSpanContext?.isRemote).toBe(span.parentSpanContext?.isRemote)
      expect(rebuilt[i]!.spanContext().traceState?.serialize()).toBe(span.spanContext().traceState?.serialize())
      expect(rebuilt[i]!.status).toEqual(span.status)
    }
    const query = rebuilt.find((s) => s.name === "pg.query:cs_5")!
    expect([query.droppedAttributesCount, query.droppedEventsCount, query.droppedLinksCount]).toEqual([1, 1, 1])
    expect(query.links).toHaveLength(1)
    // the limit of two events kept the last two, as the SDK did
    expect(query.events.map((e) => e.name)).toEqual(["second", "third (dropped)"])
  })

  it("should carry in a record only plain values, and nothing for what a span does not have", () => {
    const scopes = new Map<ReadableSpan["instrumentationScope"], number>()
    const records = spanRecords(spans, scopes)
    const recordOf = (name: string) => {
      const at = spans.findIndex((s) => s.name === name)
      return records.slice(at * RECORD_SLOTS, (at + 1) * RECORD_SLOTS)
    }
    // a bare span: its attributes (empty), its name, ids, times, status code and scope; no trace state, links, events or dropped counts
    const bare = recordOf("bare")
    expect(bare.filter((v) => typeof v === "object")).toEqual([{}])
    expect(bare.filter((v) => v === undefined)).toHaveLength(6)
    expect(bare).toContain(spans.find((s) => s.name === "housekeeping")!.spanContext().spanId)
    // a span of a trace that came with a trace state carries it; the server span its remote parent
    expect(recordOf("getArticle")).toContain("vendor=abc,other=1")
    const server = recordOf("GET /api/v1/articles/{id}")
    expect(server).toContain("b7ad6b7169203331")
    expect(server).toContain(true)
    // two scopes, each by its index
    expect(scopes.size).toBe(2)
  })

  it("should refuse a batch whose length is not a whole number of records", () => {
    const records = spanRecords(spans.slice(0, 1), new Map())
    expect(() => readableSpans(records.slice(0, -1), [], spans[0]!.resource)).toThrow(RangeError)
  })
})
