/**
 * The worker thread of `WorkerSpanExporter`: rebuilds each batch's spans as the SDK's
 * `ReadableSpan`s (one resource, each scope once, as the OTLP serialisers group them by identity)
 * and exports them with OpenTelemetry's OTLP/HTTP exporter, configured by the standard variables
 * like the one it stands in for; answers each batch with the exporter's result code.
 */
import { TraceState } from "@opentelemetry/core"
import { resourceFromAttributes } from "@opentelemetry/resources"
import type { tracing } from "@opentelemetry/sdk-node"
import { parentPort, workerData } from "node:worker_threads"
import type { ExportAnswer, ExportMessage, SpanRecord } from "./workerSpanExporter.ts"

type ReadableSpan = tracing.ReadableSpan

const port = parentPort!
const { protocol } = workerData as { protocol: "http/protobuf" | "http/json" }
const { OTLPTraceExporter } = protocol === "http/json" ? await import("@opentelemetry/exporter-trace-otlp-http") : await import("@opentelemetry/exporter-trace-otlp-proto")
const exporter = new OTLPTraceExporter()

// The process's resource does not change: rebuilt once, and again only if its attributes do.
let resourceKey = ""
let resource = resourceFromAttributes({})

const readable = (record: SpanRecord, scopes: ReadonlyArray<ReadableSpan["instrumentationScope"]>): ReadableSpan => {
  const spanContext = {
    traceId: record.traceId,
    spanId: record.spanId,
    traceFlags: record.traceFlags,
    ...(record.traceState === undefined ? {} : { traceState: new TraceState(record.traceState) }),
  }
  return {
    name: record.name,
    kind: record.kind,
    spanContext: () => spanContext,
    ...(record.parent === undefined ? {} : { parentSpanContext: { ...record.parent, ...(record.parent.isRemote === undefined ? {} : { isRemote: record.parent.isRemote }) } }),
    startTime: [...record.startTime],
    endTime: [...record.endTime],
    duration: [...record.duration],
    status: record.status,
    attributes: record.attributes,
    links: record.links.map((link) => ({
      context: {
        traceId: link.traceId,
        spanId: link.spanId,
        traceFlags: link.traceFlags,
        ...(link.isRemote === undefined ? {} : { isRemote: link.isRemote }),
        ...(link.traceState === undefined ? {} : { traceState: new TraceState(link.traceState) }),
      },
      ...(link.attributes === undefined ? {} : { attributes: link.attributes }),
      ...(link.droppedAttributesCount === undefined ? {} : { droppedAttributesCount: link.droppedAttributesCount }),
    })),
    events: record.events,
    ended: true,
    resource,
    instrumentationScope: scopes[record.scope]!,
    droppedAttributesCount: record.droppedAttributesCount,
    droppedEventsCount: record.droppedEventsCount,
    droppedLinksCount: record.droppedLinksCount,
  } as ReadableSpan
}

port.on("message", (message: ExportMessage | { shutdown: true }) => {
  if ("shutdown" in message) {
    void exporter.shutdown().finally(() => port.postMessage({ id: -1, code: 0 } satisfies ExportAnswer))
    return
  }
  const key = JSON.stringify(message.resource)
  if (key !== resourceKey) {
    resourceKey = key
    resource = resourceFromAttributes(message.resource.attributes, message.resource.schemaUrl === undefined ? {} : { schemaUrl: message.resource.schemaUrl })
  }
  const scopes = message.scopes.map((s) => ({ name: s.name, ...(s.version === undefined ? {} : { version: s.version }), ...(s.schemaUrl === undefined ? {} : { schemaUrl: s.schemaUrl }) }))
  exporter.export(
    message.spans.map((record) => readable(record, scopes)),
    (result) => port.postMessage({ id: message.id, code: result.code, error: result.error?.message } satisfies ExportAnswer),
  )
})
