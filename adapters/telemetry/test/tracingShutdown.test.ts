/** Tracing's shutdown with spans still queued and a collector that cannot be reached (a file of its own: it starts the SDK in this process). */
import { describe, expect, it } from "vitest"
import { startTracing } from "../src/tracing.ts"

describe("startTracing's shutdown", () => {
  it("should hand every queued span to the export worker at shutdown, past the cap a steady export needs, and answer the counts though the collector failed them", async () => {
    // One span a batch and none sent before the shutdown: the flush hands over forty batches at
    // once (a worker capped at 16 waiting batches dropped 24 of them); nothing listens on port 9
    // (discard), so every export fails, which rejects the SDK's own shutdown.
    process.env["OTEL_BSP_MAX_EXPORT_BATCH_SIZE"] = "1"
    process.env["OTEL_BSP_SCHEDULE_DELAY"] = "60000"
    process.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:9"
    process.env["OTEL_EXPORTER_OTLP_TIMEOUT"] = "1000"
    const tracing = (await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_SERVICE_NAME: "shutdown-test" }))!
    const spans = 40
    // ended together: the first goes to the worker at once, the rest wait in the queue
    await Promise.all(Array.from({ length: spans }, (_, i) => tracing.span(`work ${i}`, async () => i)))
    expect(await tracing.shutdown()).toEqual({ exported: 0, failed: spans, dropped: 0 })
  })
})
