import type { SpanRunner } from "@content-site/http"

/** What a started tracer gives the server (`./tracing`'s `startTracing`). */
export interface Tracing {
  /** The trace id of the active span (the request's), for its access line. */
  readonly traceId: () => string | undefined
  /** Names the request's server span `METHOD route-template` (and sets `http.route`). */
  readonly nameServerSpan: (method: string, route: string) => void
  /** Runs a use case in a span of its own: its database and Redis calls become its children. */
  readonly span: SpanRunner
  /** Exports what is buffered and stops. */
  readonly shutdown: () => Promise<void>
}
