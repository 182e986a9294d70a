/**
 * The worker thread of `WorkerSpanExporter`: rebuilds each batch's spans as the SDK's
 * `ReadableSpan`s (one resource, each scope once, as the OTLP serialisers group them by identity)
 * and exports them with OpenTelemetry's OTLP/HTTP exporter, configured by the standard variables
 * like the one it stands in for; answers each batch with the exporter's result code.
 */
import { ExportResultCode } from "@opentelemetry/core"
import { resourceFromAttributes } from "@opentelemetry/resources"
import { BELOW_EVENT_LOOP_NICE, lowerThisThread } from "@content-site/platform/threads"
import { parentPort, workerData } from "node:worker_threads"
import { readableSpans } from "./spanRecords.ts"
import type { ExportAnswer, ExportMessage } from "./workerSpanExporter.ts"

// Below the server's event loop (nice 10, this thread only, as the sanitiser's threads are):
// serialising a batch of 512 spans takes a core for milliseconds, and on a machine with fewer
// cores than runnable threads the event loop should not wait for it. The batches queue meanwhile
// (bounded: `maxPendingBatches`). Where it cannot be lowered, the thread runs as before.
lowerThisThread(BELOW_EVENT_LOOP_NICE)

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
  const answer = (code: number, error: string | undefined) => port.postMessage({ id: message.id, code, error } satisfies ExportAnswer)
  let spans
  try {
    spans = readableSpans(message.spans, scopes, resource)
  } catch (error) {
    answer(ExportResultCode.FAILED, error instanceof Error ? error.message : "the batch's span records could not be read")
    return
  }
  exporter.export(spans, (result) => answer(result.code, result.error?.message))
})
