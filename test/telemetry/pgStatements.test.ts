/**
 * The pg instrumentation as tracing configures it. A file of its own, run isolated (the "service"
 * project): it starts the SDK in its process, which registers OpenTelemetry's globals once, before
 * `pg` is loaded; in a worker whose files share one module graph, another file's SDK or `pg` came first.
 */
import { describe, expect, it } from "vitest"
import { startTracing } from "../../adapters/telemetry/src/tracing.ts"

describe("startTracing's pg instrumentation", () => {
  it("should trace a statement run in a span, and leave the pool without OpenTelemetry's listeners on its acquires and releases", async () => {
    // nothing listens on port 9 (discard): every export fails, and the counts say how many spans were made
    process.env["OTEL_EXPORTER_OTLP_TIMEOUT"] = "1000"
    const tracing = (await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_SERVICE_NAME: "statements-test" }))!
    // loaded after the SDK started, as the server loads it: its hooks wrap the module
    const { default: pg } = await import("pg")
    const pool = new pg.Pool({ connectionString: "postgres://postgres@127.0.0.1:5432/postgres", max: 2 })
    try {
      const events = ["connect", "acquire", "release", "remove"] as const
      const before = events.map((event) => pool.listenerCount(event))
      const rows = await tracing.span("work", async () => (await pool.query<{ n: number }>("SELECT 1 AS n")).rows)
      expect(rows).toEqual([{ n: 1 }])
      // a statement outside any span is not traced (requireParentSpan)
      await pool.query("SELECT 2")
      expect(events.map((event) => pool.listenerCount(event))).toEqual(before)
    } finally {
      await pool.end()
    }
    // the use case's span and its statement's
    expect(await tracing.shutdown()).toEqual({ exported: 0, failed: 2, dropped: 0 })
  })
})
