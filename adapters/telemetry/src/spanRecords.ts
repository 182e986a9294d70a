/**
 * Finished spans as plain data for the export worker, and back: `spanRecords` on the event loop
 * (what the structured clone then copies), `readableSpans` in the worker (what OpenTelemetry's
 * OTLP serialisers read). A batch is one flat array, `RECORD_SLOTS` values a span: strings,
 * numbers, `undefined` for what a span lacks, and the few objects a span holds (its attributes,
 * and events, links and dropped counts when it has them). No object a span, no time tuple, no
 * duration (the worker takes it from the start and end), of the parent only its span id and
 * whether it came from another process (its trace is the span's own): the clone of a flat array
 * costs the event loop about 0.4 µs a span, against 0.65 for an object a span and 1.66 for the
 * SDK's spans (a microbench; docs/benchmarks.md).
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

/**
 * The slots of one span in a batch's flat array, in order: a span's values start at its index
 * times `RECORD_SLOTS`.
 */
const SLOT = {
  name: 0,
  kind: 1,
  traceId: 2,
  spanId: 3,
  traceFlags: 4,
  /** The trace state, serialised; undefined when the span has none. */
  traceState: 5,
  /** The parent's span id (in the span's own trace); undefined for a root span. */
  parentSpanId: 6,
  /** Whether the parent came from another process; undefined when not known. */
  parentIsRemote: 7,
  startSeconds: 8,
  startNanos: 9,
  endSeconds: 10,
  endNanos: 11,
  statusCode: 12,
  /** undefined when the status has no message. */
  statusMessage: 13,
  attributes: 14,
  /** `LinkRecord`s; undefined when the span has none. */
  links: 15,
  /** The span's events as the SDK keeps them (plain data); undefined when it has none. */
  events: 16,
  /** Attributes, events and links dropped by the span's limits; undefined when none were. */
  dropped: 17,
  /** The index of the span's instrumentation scope in the batch's scopes. */
  scope: 18,
} as const

/** Values a span takes in a batch's flat array. */
export const RECORD_SLOTS = 19

/** A batch's spans as one flat array (`RECORD_SLOTS` values a span), structured-cloneable. */
export type SpanRecords = Array<unknown>

/** Appends a finished span's values to `out`; its scope's index in `scopes` (added when new). */
const pushRecord = (out: SpanRecords, span: ReadableSpan, scopes: Map<ReadableSpan["instrumentationScope"], number>): void => {
  const ctx = span.spanContext()
  let scope = scopes.get(span.instrumentationScope)
  if (scope === undefined) {
    scope = scopes.size
    scopes.set(span.instrumentationScope, scope)
  }
  const parent = span.parentSpanContext
  const status = span.status
  const dropped = span.droppedAttributesCount !== 0 || span.droppedEventsCount !== 0 || span.droppedLinksCount !== 0
  out.push(
    span.name,
    span.kind,
    ctx.traceId,
    ctx.spanId,
    ctx.traceFlags,
    ctx.traceState?.serialize(),
    parent?.spanId,
    parent?.isRemote,
    span.startTime[0],
    span.startTime[1],
    span.endTime[0],
    span.endTime[1],
    status.code,
    status.message,
    span.attributes,
    span.links.length === 0 ? undefined : span.links.map(linkRecord),
    span.events.length === 0 ? undefined : span.events,
    dropped ? [span.droppedAttributesCount, span.droppedEventsCount, span.droppedLinksCount] : undefined,
    scope,
  )
}

const linkRecord = (link: ReadableSpan["links"][number]): LinkRecord => {
  const out: { -readonly [K in keyof LinkRecord]: LinkRecord[K] } = { traceId: link.context.traceId, spanId: link.context.spanId, traceFlags: link.context.traceFlags }
  if (link.context.traceState !== undefined) out.traceState = link.context.traceState.serialize()
  if (link.context.isRemote !== undefined) out.isRemote = link.context.isRemote
  if (link.attributes !== undefined) out.attributes = link.attributes
  if (link.droppedAttributesCount !== undefined) out.droppedAttributesCount = link.droppedAttributesCount
  return out
}

/** The flat records of a batch's finished spans; their scopes' indexes in `scopes` (added when new). One pass over the batch. */
export const spanRecords = (spans: ReadonlyArray<ReadableSpan>, scopes: Map<ReadableSpan["instrumentationScope"], number>): SpanRecords => {
  const out: SpanRecords = []
  for (const span of spans) pushRecord(out, span, scopes)
  return out
}

/** A span context as the worker rebuilds it. */
interface RebuiltContext {
  readonly traceId: string
  readonly spanId: string
  readonly traceFlags: number
  readonly isRemote?: boolean
  readonly traceState?: TraceState
}

/**
 * A span rebuilt in the worker: every field of the SDK's `ReadableSpan` the OTLP serialisers read,
 * in one shape for every span (the serialisers' property reads stay monomorphic).
 */
class RebuiltSpan {
  readonly name: string
  readonly kind: number
  readonly parentSpanContext: RebuiltContext | undefined
  readonly startTime: HrTime
  readonly endTime: HrTime
  readonly status: { code: number; message?: string }
  readonly attributes: Attributes
  readonly links: ReadableSpan["links"]
  readonly events: ReadableSpan["events"]
  readonly duration: HrTime
  readonly ended = true
  readonly resource: ReadableSpan["resource"]
  readonly instrumentationScope: ReadableSpan["instrumentationScope"]
  readonly droppedAttributesCount: number
  readonly droppedEventsCount: number
  readonly droppedLinksCount: number
  readonly #context: RebuiltContext

  constructor(records: SpanRecords, at: number, scopes: ReadonlyArray<ReadableSpan["instrumentationScope"]>, resource: ReadableSpan["resource"]) {
    const traceId = records[at + SLOT.traceId] as string
    const traceFlags = records[at + SLOT.traceFlags] as number
    const traceState = records[at + SLOT.traceState] as string | undefined
    this.#context =
      traceState === undefined
        ? { traceId, spanId: records[at + SLOT.spanId] as string, traceFlags }
        : { traceId, spanId: records[at + SLOT.spanId] as string, traceFlags, traceState: new TraceState(traceState) }
    const parentSpanId = records[at + SLOT.parentSpanId] as string | undefined
    const parentIsRemote = records[at + SLOT.parentIsRemote] as boolean | undefined
    // (its trace and flags are the span's: a parent's own flags are not exported)
    this.parentSpanContext =
      parentSpanId === undefined
        ? undefined
        : parentIsRemote === undefined
          ? { traceId, spanId: parentSpanId, traceFlags }
          : { traceId, spanId: parentSpanId, traceFlags, isRemote: parentIsRemote }
    this.name = records[at + SLOT.name] as string
    this.kind = records[at + SLOT.kind] as number
    this.startTime = [records[at + SLOT.startSeconds] as number, records[at + SLOT.startNanos] as number]
    this.endTime = [records[at + SLOT.endSeconds] as number, records[at + SLOT.endNanos] as number]
    this.duration = hrTimeDuration(this.startTime, this.endTime)
    const statusMessage = records[at + SLOT.statusMessage] as string | undefined
    this.status = statusMessage === undefined ? { code: records[at + SLOT.statusCode] as number } : { code: records[at + SLOT.statusCode] as number, message: statusMessage }
    this.attributes = records[at + SLOT.attributes] as Attributes
    const links = records[at + SLOT.links] as ReadonlyArray<LinkRecord> | undefined
    this.links = links === undefined ? [] : links.map(rebuiltLink)
    this.events = (records[at + SLOT.events] as ReadableSpan["events"] | undefined) ?? []
    const dropped = records[at + SLOT.dropped] as readonly [number, number, number] | undefined
    this.droppedAttributesCount = dropped?.[0] ?? 0
    this.droppedEventsCount = dropped?.[1] ?? 0
    this.droppedLinksCount = dropped?.[2] ?? 0
    this.resource = resource
    this.instrumentationScope = scopes[records[at + SLOT.scope] as number]!
  }

  spanContext(): RebuiltContext {
    return this.#context
  }
}

const rebuiltLink = (link: LinkRecord): ReadableSpan["links"][number] => ({
  context: {
    traceId: link.traceId,
    spanId: link.spanId,
    traceFlags: link.traceFlags,
    ...(link.isRemote === undefined ? {} : { isRemote: link.isRemote }),
    ...(link.traceState === undefined ? {} : { traceState: new TraceState(link.traceState) }),
  },
  ...(link.attributes === undefined ? {} : { attributes: link.attributes }),
  ...(link.droppedAttributesCount === undefined ? {} : { droppedAttributesCount: link.droppedAttributesCount }),
})

/**
 * The worker's `ReadableSpan`s of a batch's records: what the SDK's spans answered, for every
 * field the OTLP serialisers read. One pass: a record is `RECORD_SLOTS` values, and a batch
 * whose length is not a multiple of it is refused.
 */
export const readableSpans = (records: SpanRecords, scopes: ReadonlyArray<ReadableSpan["instrumentationScope"]>, resource: ReadableSpan["resource"]): Array<ReadableSpan> => {
  if (records.length % RECORD_SLOTS !== 0) throw new RangeError(`a batch of span records has ${records.length} values, not a multiple of ${RECORD_SLOTS}`)
  const spans: Array<ReadableSpan> = []
  for (let at = 0; at < records.length; at += RECORD_SLOTS) spans.push(new RebuiltSpan(records, at, scopes, resource) as unknown as ReadableSpan)
  return spans
}
