import type { SpanRunner } from "@content-site/http"
import type { IncomingMessage, ServerResponse } from "node:http"

/** What a started tracer gives the server (`./tracing`'s `startTracing`). */
export interface Tracing {
  /** The trace id of the active span (the request's), for its access line. */
  readonly traceId: () => string | undefined
  /**
   * Runs a request's handling in its server span (kind server), continuing the caller's W3C
   * `traceparent`; the span ends with the handling, with the response's status.
   */
  readonly serve: <A>(req: IncomingMessage, res: ServerResponse, work: () => Promise<A>) => Promise<A>
  /** Names the request's server span `METHOD route-template` (and sets `http.route`). */
  readonly nameServerSpan: (method: string, route: string) => void
  /** Runs a use case in a span of its own: its database and Redis calls become its children. */
  readonly span: SpanRunner
  /**
   * Exports what is buffered and stops; answers how many spans the export worker sent, how many
   * the collector refused or never got (failed), and how many it dropped over its cap.
   */
  readonly shutdown: () => Promise<{ readonly exported: number; readonly failed: number; readonly dropped: number }>
}
