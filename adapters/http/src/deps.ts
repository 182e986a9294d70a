import type { CoreServices } from "@content-site/core"
import type { ManagedRuntime } from "effect"
import type { EventLog, SpanRunner } from "./notes.ts"

/** The composition root's runtime: every core service, built once, no construction error left. */
export type AppRuntime = ManagedRuntime.ManagedRuntime<CoreServices, never>

/** What every HTTP adapter's mount function receives. */
export interface HttpDeps {
  readonly runtime: AppRuntime
  /** `{base_url}`, no trailing slash. */
  readonly publicUrl: string
  readonly env: Record<string, string | undefined>
  /** Aborted when the server closes: adapters stop their background work (timers) on it. */
  readonly closing?: AbortSignal
  /** The service's event log (pino on a server); default: the console. */
  readonly log?: EventLog
  /** Set while tracing: a use case runs in a span of its own, its database calls under it. */
  readonly span?: SpanRunner
}
