/**
 * The service's name in its traces, as OpenTelemetry's standard variables set it. A file of its
 * own, run isolated (the "service" project): the SDK registers OpenTelemetry's globals once a process.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { afterAll, describe, expect, it } from "vitest"
import { startTracing } from "../../adapters/telemetry/src/tracing.ts"
import { startOtlpReceiver } from "../support/otlpReceiver.ts"

const request = { method: "GET", url: "/healthz", httpVersion: "1.1", headers: {}, socket: { remoteAddress: "127.0.0.1" } } as unknown as IncomingMessage
const response = { statusCode: 200 } as unknown as ServerResponse

describe("startTracing's service name", () => {
  const names = ["OTEL_RESOURCE_ATTRIBUTES", "OTEL_EXPORTER_OTLP_ENDPOINT"]
  const saved = names.map((name) => process.env[name])
  afterAll(() => {
    names.forEach((name, i) => {
      if (saved[i] === undefined) delete process.env[name]
      else process.env[name] = saved[i]
    })
  })

  it("should take service.name from OTEL_RESOURCE_ATTRIBUTES when OTEL_SERVICE_NAME is unset, content-site only when neither names it", async () => {
    // OpenTelemetry's standard variables: OTEL_SERVICE_NAME wins, else OTEL_RESOURCE_ATTRIBUTES'
    // service.name, else the default (content-site); the default overrode the attribute before.
    process.env["OTEL_RESOURCE_ATTRIBUTES"] = "deployment.environment=test,service.name=shop%20content"
    const receiver = await startOtlpReceiver()
    try {
      // the SDK reads its variables from the process's environment, as the server's start does
      process.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
      const tracing = (await startTracing({ ...process.env }))!
      await tracing.serve(request, response, async () => undefined)
      expect(await tracing.shutdown()).toMatchObject({ exported: 1, failed: 0 })
      expect(receiver.spans.map((s) => s.service)).toEqual(["shop content"])
    } finally {
      await receiver.close()
    }
  })
})
