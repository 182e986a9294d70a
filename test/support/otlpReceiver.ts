/**
 * An OTLP/HTTP trace receiver in the test process: accepts `POST /v1/traces` with the JSON
 * encoding (what `@opentelemetry/exporter-trace-otlp-http` sends) and keeps every span it got.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

/** One received span, flattened from resourceSpans → scopeSpans → spans. */
export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly name: string
  /** OTLP span kind: 1 internal, 2 server, 3 client. */
  readonly kind: number
  readonly attributes: Readonly<Record<string, unknown>>
  readonly service: string | undefined
}

interface AnyValue {
  readonly stringValue?: string
  readonly intValue?: number | string
  readonly boolValue?: boolean
  readonly doubleValue?: number
}
interface KeyValue {
  readonly key: string
  readonly value: AnyValue
}
interface ExportRequest {
  readonly resourceSpans?: ReadonlyArray<{
    readonly resource?: { readonly attributes?: ReadonlyArray<KeyValue> }
    readonly scopeSpans?: ReadonlyArray<{
      readonly spans?: ReadonlyArray<{ traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: ReadonlyArray<KeyValue> }>
    }>
  }>
}

const valueOf = (v: AnyValue): unknown => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue
const attributesOf = (list: ReadonlyArray<KeyValue> | undefined) => Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]))

/** Starts the receiver on a free port: its endpoint (for OTEL_EXPORTER_OTLP_ENDPOINT), the spans so far, and close. */
export const startOtlpReceiver = async () => {
  const spans: Array<ReceivedSpan> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/traces" || !(req.headers["content-type"] ?? "").includes("json")) {
        res.writeHead(415).end()
        return
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ExportRequest
      for (const resource of body.resourceSpans ?? []) {
        const service = attributesOf(resource.resource?.attributes)["service.name"]
        for (const scope of resource.scopeSpans ?? []) {
          for (const s of scope.spans ?? []) {
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId === undefined || s.parentSpanId === "" ? undefined : s.parentSpanId,
              name: s.name,
              kind: s.kind,
              attributes: attributesOf(s.attributes),
              service: typeof service === "string" ? service : undefined,
            })
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
