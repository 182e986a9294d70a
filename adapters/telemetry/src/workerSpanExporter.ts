/**
 * A span exporter that hands each batch of finished spans to a worker thread, where
 * OpenTelemetry's own OTLP/HTTP exporter (`./spanExportWorker.ts`) serialises and sends it: the
 * protobuf (or JSON) encoding and the HTTP request leave the event loop. It sits behind the SDK's
 * batch processor, which keeps its own bounded queue (`OTEL_BSP_MAX_QUEUE_SIZE`) and calls
 * `export` one batch at a time (several at once only in a flush); here the batch becomes plain
 * data the worker can receive (`./spanRecords.ts`: one flat array), and the batch's callback is
 * answered with the worker's result.
 */
import { type ExportResult, ExportResultCode } from "@opentelemetry/core"
import type { tracing } from "@opentelemetry/sdk-node"
import { Worker } from "node:worker_threads"
import { type SpanRecords, spanRecords } from "./spanRecords.ts"

type ReadableSpan = tracing.ReadableSpan

/** One batch for the worker: its spans, their scopes, and their resource's attributes (one resource a process). */
export interface ExportMessage {
  readonly id: number
  readonly resource: { readonly attributes: ReadableSpan["attributes"]; readonly schemaUrl: string | undefined }
  readonly scopes: ReadonlyArray<{ readonly name: string; readonly version: string | undefined; readonly schemaUrl: string | undefined }>
  /** The batch's spans, flat (`./spanRecords.ts`). */
  readonly spans: SpanRecords
}

/** The worker's answer to a batch (`id`) or to the shutdown (`id` -1). */
export interface ExportAnswer {
  readonly id: number
  readonly code: number
  readonly error?: string | undefined
}

const { SUCCESS, FAILED } = ExportResultCode

/** What the exporter counts: spans handed to the worker and the worker's answers, and spans dropped. */
export interface ExportCounts {
  readonly exported: number
  readonly failed: number
  /** Spans refused because `maxPendingBatches` batches were already waiting for the worker. */
  readonly dropped: number
}

/** Options of `WorkerSpanExporter`. */
export interface WorkerSpanExporterOptions {
  /** `http/protobuf` or `http/json`: the worker loads OpenTelemetry's exporter for it. */
  readonly protocol: "http/protobuf" | "http/json"
  /**
   * Batches handed to the worker and not answered yet, at most (default 16: 8 192 spans at the
   * batch processor's 512 a batch); a batch beyond is refused, its spans counted as dropped.
   */
  readonly maxPendingBatches?: number
  /** The worker's environment (its OTLP exporter reads the standard variables); default this process's. */
  readonly env?: Record<string, string | undefined>
  /** The worker's module; default `./spanExportWorker.ts` (a test gives one that fails). */
  readonly workerModule?: URL
}

/**
 * A `SpanExporter` (of `@opentelemetry/sdk-trace`) whose batches are serialised and sent by
 * OpenTelemetry's OTLP/HTTP exporter in a worker thread. `shutdown` waits for every batch handed
 * over, then for the worker's exporter to shut down, then ends the worker.
 */
export class WorkerSpanExporter {
  readonly #worker: Worker
  readonly #pending = new Map<number, { spans: number; done: (result: ExportResult) => void }>()
  readonly #maxPending: number
  #next = 0
  #exported = 0
  #failed = 0
  #dropped = 0
  #closed: Promise<void> | undefined
  #exited = false

  constructor(options: WorkerSpanExporterOptions) {
    this.#maxPending = options.maxPendingBatches ?? 16
    this.#worker = new Worker(options.workerModule ?? new URL("./spanExportWorker.ts", import.meta.url), {
      workerData: { protocol: options.protocol },
      ...(options.env === undefined ? {} : { env: options.env }),
    })
    // Idle between batches, the worker does not keep the process alive; a batch in flight does (ref below).
    this.#worker.unref()
    this.#worker.on("message", (answer: ExportAnswer) => {
      const pending = this.#pending.get(answer.id)
      if (pending === undefined) return
      this.#pending.delete(answer.id)
      if (this.#pending.size === 0) this.#worker.unref()
      if (answer.code === SUCCESS) this.#exported += pending.spans
      else this.#failed += pending.spans
      pending.done(answer.code === SUCCESS ? { code: SUCCESS } : { code: FAILED, error: new Error(answer.error ?? "the OTLP export failed") })
    })
    // A worker that failed (its uncaught error ends it) must not take the process with it: it ends,
    // and every batch it held, and every later one, is answered as failed.
    this.#worker.on("error", () => {})
    this.#worker.on("exit", () => {
      this.#exited = true
      for (const [id, pending] of this.#pending) {
        this.#pending.delete(id)
        this.#failed += pending.spans
        pending.done({ code: FAILED, error: new Error("the span export worker exited") })
      }
    })
  }

  /** Hands a batch to the worker; answers `resultCallback` when the worker's exporter has. */
  export(spans: Array<ReadableSpan>, resultCallback: (result: ExportResult) => void): void {
    if (this.#exited && this.#closed === undefined) {
      this.#failed += spans.length
      resultCallback({ code: FAILED, error: new Error("the span export worker exited") })
      return
    }
    if (this.#closed !== undefined || this.#pending.size >= this.#maxPending) {
      this.#dropped += spans.length
      resultCallback({ code: FAILED, error: new Error(this.#closed !== undefined ? "the span exporter is shut down" : "too many span batches waiting for the export worker") })
      return
    }
    const scopes = new Map<ReadableSpan["instrumentationScope"], number>()
    const records = spanRecords(spans, scopes)
    const resource = spans[0]?.resource
    const message: ExportMessage = {
      id: this.#next++,
      resource: { attributes: resource?.attributes ?? {}, schemaUrl: resource?.schemaUrl },
      scopes: [...scopes.keys()].map((s) => ({ name: s.name, version: s.version, schemaUrl: s.schemaUrl })),
      spans: records,
    }
    this.#pending.set(message.id, { spans: spans.length, done: resultCallback })
    this.#worker.ref()
    this.#worker.postMessage(message)
  }

  /** Spans exported, failed and dropped so far. */
  counts(): ExportCounts {
    return { exported: this.#exported, failed: this.#failed, dropped: this.#dropped }
  }

  /** Nothing is held here: every batch is the worker's as soon as `export` returns. */
  forceFlush(): Promise<void> {
    return this.#settled()
  }

  /** Waits for the batches handed over, shuts the worker's exporter down, ends the worker. */
  shutdown(): Promise<void> {
    this.#closed ??= (async () => {
      await this.#settled()
      if (this.#exited) return
      this.#worker.ref()
      const done = new Promise<void>((resolve) => {
        const onAnswer = (answer: ExportAnswer) => {
          if (answer.id !== -1) return
          this.#worker.off("message", onAnswer)
          resolve()
        }
        this.#worker.on("message", onAnswer)
        this.#worker.once("exit", () => resolve())
      })
      this.#worker.postMessage({ shutdown: true })
      await done
      await this.#worker.terminate()
    })()
    return this.#closed
  }

  /** Resolves once no batch waits for the worker. */
  async #settled(): Promise<void> {
    while (this.#pending.size > 0) {
      await new Promise<void>((resolve) => {
        const check = () => {
          if (this.#pending.size > 0) return
          this.#worker.off("message", check)
          this.#worker.off("exit", check)
          resolve()
        }
        // after the exporter's own message listener (registered first) has settled the batch
        this.#worker.on("message", check)
        this.#worker.on("exit", check)
      })
    }
  }
}
