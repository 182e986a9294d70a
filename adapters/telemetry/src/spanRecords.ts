/**
 * A finished span as plain data for the export worker, and back: `spanRecord` on the event loop
 * (what the structured clone then copies), `readableSpan` in the worker (what OpenTelemetry's OTLP
 * serialisers read). A record carries only what a span has: no empty lists, no zero counts, no
 * unset status, no duration (the worker takes it from the start and end), and of the parent only
 * its span id and whether it came from another process (its trace is the span's own). That halves
 * the clone, the dearest part of handing a span over (1.66 against 0.85 µs a span in a
 * microbench of the SDK's spans; docs/benchmarks.md).
 */
import { hrTimeDuration, TraceState } from "@opentelemetry/core"
import type { tracing } from "@opentelemetry/sdk-node"

type ReadableSpan = tracing.ReadableSpan
type Attributes = ReadableSpan["attributes"]
type HrTime = ReadableSpan["startTime"]

/** A link as a record carries it. */
export interface LinkRecord {
  readonly traceId: string
  readonly spanId: string
  readonly traceFlags: number
  readonly traceState?: string
  readonly isRemote?: boolean
  readonly attributes?: Attributes
  readonly droppedAttributesCount?: number
}

/** A span as the worker receives it: plain data (structured-cloneable), its scope by index; what is empty is left out. */
export interface SpanRecord {
  readonly name: string
  readonly kind: number
  readonly traceId: string
  readonly spanId: string
  readonly traceFlags: number
  readonly traceState?: string
  /** The parent's span id (in the span's own trace) and, when known, whether it came from another process. */
  readonly parent?: { readonly spanId: string; readonly isRemote?: boolean }
  readonly startTime: HrTime
  readonly endTime: HrTime
  /** Left out when the status is unset (code 0) with no message. */
  readonly status?: { readonly code: number; readonly message?: string }
  readonly attributes: Attributes
  readonly links?: ReadonlyArray<LinkRecord>
  readonly events?: ReadableSpan["events"]
  /** Attributes, events and links dropped by the span's limits; left out when none were. */
  readonly dropped?: readonly [number, number, number]
  readonly scope: number
}

/** Plain data of a finished span; its scope's index in `scopes` (added when new). */
export const spanRecord = (span: ReadableSpan, scopes: Map<ReadableSpan["instrumentationScope"], number>): SpanRecord => {
  const ctx = span.spanContext()
  let scope = scopes.get(span.instrumentationScope)
  if (scope === undefined) {
    scope = scopes.size
    scopes.set(span.instrumentationScope, scope)
  }
  const record: { -readonly [K in keyof SpanRecord]: SpanRecord[K] } = {
    name: span.name,
    kind: span.kind,
    traceId: ctx.traceId,
    spanId: ctx.spanId,
    traceFlags: ctx.traceFlags,
    startTime: span.startTime,
    endTime: span.endTime,
    attributes: span.attributes,
    scope,
  }
  if (ctx.traceState !== undefined) record.traceState = ctx.traceState.serialize()
  const parent = span.parentSpanContext
  if (parent !== undefined) record.parent = parent.isRemote === undefined ? { spanId: parent.spanId } : { spanId: parent.spanId, isRemote: parent.isRemote }
  if (span.status.code !== 0 || span.status.message !== undefined) record.status = span.status
  if (span.links.length > 0) {
    record.links = span.links.map((link) => {
      const out: { -readonly [K in keyof LinkRecord]: LinkRecord[K] } = { traceId: link.context.traceId, spanId: link.context.spanId, traceFlags: link.context.traceFlags }
      if (link.context.traceState !== undefined) out.traceState = link.context.traceState.serialize()
      if (link.context.isRemote !== undefined) out.isRemote = link.context.isRemote
      if (link.attributes !== undefined) out.attributes = link.attributes
      if (link.droppedAttributesCount !== undefined) out.droppedAttributesCount = link.droppedAttributesCount
      return out
    })
  }
  if (span.events.length > 0) record.events = span.events
  if (span.droppedAttributesCount !== 0 || span.droppedEventsCount !== 0 || span.droppedLinksCount !== 0) {
    record.dropped = [span.droppedAttributesCount, span.droppedEventsCount, span.droppedLinksCount]
  }
  return record
}

/** The worker's `ReadableSpan` of a record: what the SDK's span answered, for every field the OTLP serialisers read. */
export const readableSpan = (record: SpanRecord, scopes: ReadonlyArray<ReadableSpan["instrumentationScope"]>, resource: ReadableSpan["resource"]): ReadableSpan => {
  const spanContext = {
    traceId: record.traceId,
    spanId: record.spanId,
    traceFlags: record.traceFlags,
    ...(record.traceState === undefined ? {} : { traceState: new TraceState(record.traceState) }),
  }
  const parent = record.parent
  const [droppedAttributesCount, droppedEventsCount, droppedLinksCount] = record.dropped ?? [0, 0, 0]
  return {
    name: record.name,
    kind: record.kind,
    spanContext: () => spanContext,
    // (its trace and flags are the span's: a parent's own flags are not exported)
    ...(parent === undefined
      ? {}
      : { parentSpanContext: { traceId: record.traceId, spanId: parent.spanId, traceFlags: record.traceFlags, ...(parent.isRemote === undefined ? {} : { isRemote: parent.isRemote }) } }),
    startTime: [record.startTime[0], record.startTime[1]],
    endTime: [record.endTime[0], record.endTime[1]],
    duration: hrTimeDuration(record.startTime, record.endTime),
    status: record.status ?? { code: 0 },
    attributes: record.attributes,
    links: (record.links ?? []).map((link) => ({
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
    events: record.events ?? [],
    ended: true,
    resource,
    instrumentationScope: scopes[record.scope]!,
    droppedAttributesCount,
    droppedEventsCount,
    droppedLinksCount,
  } as ReadableSpan
}
