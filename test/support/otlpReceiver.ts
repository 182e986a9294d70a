/**
 * An OTLP/HTTP trace receiver in the test process: accepts `POST /v1/traces` in either encoding
 * OTLP/HTTP defines, protobuf (`application/x-protobuf`, what the service sends by default) or
 * JSON (`application/json`), and keeps every span it got. Protobuf is decoded by protobufjs from
 * the official OTLP schema (`./otlp/`), never by hand.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import protobuf from "protobufjs"

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
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  readonly status: number
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
/** An export request as the JSON encoding spells it (ids in hex), and as protobufjs decodes it (ids as bytes). */
interface ExportRequest {
  readonly resourceSpans?: ReadonlyArray<{
    readonly resource?: { readonly attributes?: ReadonlyArray<KeyValue> }
    readonly scopeSpans?: ReadonlyArray<{
      readonly spans?: ReadonlyArray<{ traceId: string | Uint8Array; spanId: string | Uint8Array; parentSpanId?: string | Uint8Array; name: string; kind: number; attributes?: ReadonlyArray<KeyValue>; status?: { code?: number } }>
    }>
  }>
}

const valueOf = (v: AnyValue): unknown => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue
const attributesOf = (list: ReadonlyArray<KeyValue> | undefined) => Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]))
const hex = (id: string | Uint8Array | undefined): string => (id === undefined ? "" : typeof id === "string" ? id : Buffer.from(id).toString("hex"))

const schema = fileURLToPath(new URL("./otlp/", import.meta.url))
let requestType: protobuf.Type | undefined
/** The ExportTraceServiceRequest message of the official schema (loaded once). */
const exportTraceServiceRequest = (): protobuf.Type => {
  if (requestType !== undefined) return requestType
  const root = new protobuf.Root()
  root.resolvePath = (_origin, target) => (target.startsWith(schema) ? target : `${schema}${target}`)
  root.loadSync("opentelemetry/proto/collector/trace/v1/trace_service.proto", { keepCase: false })
  requestType = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest")
  return requestType
}

/**
 * The spans of one OTLP/HTTP trace export body, in either encoding (by its content type); throws
 * on any other content type or a body that does not decode.
 */
export const decodeSpans = (body: Buffer, contentType: string): Array<ReceivedSpan> => {
  let request: ExportRequest
  if (contentType.includes("application/x-protobuf")) {
    const type = exportTraceServiceRequest()
    request = type.toObject(type.decode(body), { longs: String, enums: Number, defaults: false }) as ExportRequest
  } else if (contentType.includes("json")) {
    request = JSON.parse(body.toString("utf8")) as ExportRequest
  } else {
    throw new Error(`not an OTLP/HTTP content type: ${contentType}`)
  }
  const spans: Array<ReceivedSpan> = []
  for (const resource of request.resourceSpans ?? []) {
    const service = attributesOf(resource.resource?.attributes)["service.name"]
    for (const scope of resource.scopeSpans ?? []) {
      for (const s of scope.spans ?? []) {
        const parent = hex(s.parentSpanId)
        spans.push({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: parent === "" ? undefined : parent,
          name: s.name,
          kind: s.kind,
          attributes: attributesOf(s.attributes),
          service: typeof service === "string" ? service : undefined,
          status: s.status?.code ?? 0,
        })
      }
    }
  }
  return spans
}

/**
 * Starts the receiver on a free port: its endpoint (for OTEL_EXPORTER_OTLP_ENDPOINT), the spans so
 * far, the content types of the exports it took, and close.
 */
export const startOtlpReceiver = async () => {
  const spans: Array<ReceivedSpan> = []
  const contentTypes: Array<string> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const contentType = req.headers["content-type"] ?? ""
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end()
        return
      }
      let received: Array<ReceivedSpan>
      try {
        received = decodeSpans(Buffer.concat(chunks), contentType)
      } catch {
        res.writeHead(400).end()
        return
      }
      contentTypes.push(contentType)
      spans.push(...received)
      // An empty ExportTraceServiceResponse in the request's encoding: full success.
      if (contentType.includes("application/x-protobuf")) res.writeHead(200, { "content-type": "application/x-protobuf" }).end()
      else res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
