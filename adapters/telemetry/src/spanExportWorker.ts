/**
 * The worker thread of `WorkerSpanExporter`: rebuilds each batch's spans as the SDK's
 * `ReadableSpan`s (one resource, each scope once, as the OTLP serialisers group them by identity)
 * and exports them with OpenTelemetry's OTLP/HTTP exporter, configured by the standard variables
 * like the one it stands in for; answers each batch with the exporter's result code.
 */
import { resourceFromAttributes } from "@opentelemetry/resources"
import { parentPort, workerData } from "node:worker_threads"
import { readableSpan } from "./spanRecords.ts"
import type { ExportAnswer, ExportMessage } from "./workerSpanExporter.ts"

const port = parentPort!
const { protocol } = workerData as { protocol: "http/protobuf" | "http/json" }
const { OTLPTraceExporter } = protocol === "http/json" ? await import("@opentelemetry/exporter-trace-otlp-http") : await import("@opentelemetry/exporter-trace-otlp-proto")
const exporter = new OTLPTraceExporter()

// The process's resource does not change: rebuilt once, and again only if its attributes do.
let resourceKey = ""
let resource = resourceFromAttributes({})

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
    message.spans.map((record) => readableSpan(record, scopes, resource)),
    (result) => port.postMessage({ id: message.id, code: result.code, error: result.error?.message } satisfies ExportAnswer),
  )
})
