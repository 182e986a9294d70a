import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client"

/** A worker pool's jobs now: running on a thread or process, and waiting for one. */
export type PoolLoad = () => { readonly running: number; readonly waiting: number }

/** How a finished request is counted. */
export interface RequestSample {
  readonly method: string
  /** The route's template (`/api/v1/articles/{id}`) or `unmatched`: never a raw path. */
  readonly route: string
  readonly status: number
  readonly seconds: number
  readonly channel: string
  /** The problem code answered, if any (a refusal). */
  readonly problemCode?: string | undefined
  readonly tools?: ReadonlyArray<{ readonly name: string; readonly outcome: string; readonly seconds: number }> | undefined
}

/** The service's Prometheus metrics: one registry, the contract's families, the runtime's own. */
export interface Metrics {
  readonly registry: Registry
  /** Counts one finished request (duration histogram, refusals, MCP tool calls). */
  readonly request: (sample: RequestSample) => void
  /** Counts one committed article change by its origin (api, mcp, editor, rewrite, ...). */
  readonly articleChanged: (origin: string) => void
  /** Reads the activity journal's backlog at each scrape. */
  readonly watchJournal: (backlog: () => number) => void
  /** Reads a worker pool's queue at each scrape (`sanitiser`, `images`). */
  readonly watchPool: (pool: string, load: PoolLoad) => void
  /** Counts a worker of a pool replaced (crashed, or killed past its budget). */
  readonly poolRestarted: (pool: string) => void
}

// Request durations from 5 ms to 10 s: reads take a few ms, an image upload or a 1 MiB edit seconds.
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/**
 * Makes the registry: `http_server_request_duration_seconds{method,route,status}`,
 * `content_site_mcp_tool_call_duration_seconds{tool,outcome}`,
 * `content_site_refusals_total{code,channel}`, `content_site_article_changes_total{origin}`,
 * `content_site_activity_journal_backlog`, `content_site_pool_jobs{pool,state}`,
 * `content_site_pool_restarts_total{pool}` and prom-client's defaults (event-loop lag, memory,
 * GC, handles). Every label value is a template, a code, a tool's or a pool's name: no ids.
 */
export const createMetrics = (): Metrics => {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const requests = new Histogram({
    name: "http_server_request_duration_seconds",
    help: "Time from a request's arrival to its answer, by method, route template and status.",
    labelNames: ["method", "route", "status"] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  })
  const toolCalls = new Histogram({
    name: "content_site_mcp_tool_call_duration_seconds",
    help: "Time an MCP tools/call took, by tool and outcome (ok, or error: a tool result with isError).",
    labelNames: ["tool", "outcome"] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  })
  const refusals = new Counter({
    name: "content_site_refusals_total",
    help: "Requests answered with a problem (REST, pages, OAuth) or an MCP tool error, by problem code and channel.",
    labelNames: ["code", "channel"] as const,
    registers: [registry],
  })
  const changes = new Counter({
    name: "content_site_article_changes_total",
    help: "Article changes committed by this instance (each a new revision), by origin.",
    labelNames: ["origin"] as const,
    registers: [registry],
  })
  const journals: Array<() => number> = []
  new Gauge({
    name: "content_site_activity_journal_backlog",
    help: "Activity entries appended to this instance's journal and not yet written to the database.",
    registers: [registry],
    collect() {
      this.set(journals.reduce((sum, backlog) => sum + backlog(), 0))
    },
  })
  const pools = new Map<string, PoolLoad>()
  new Gauge({
    name: "content_site_pool_jobs",
    help: "Jobs of a worker pool (sanitiser: article HTML threads; images: decoding processes), running or waiting.",
    labelNames: ["pool", "state"] as const,
    registers: [registry],
    collect() {
      for (const [pool, load] of pools) {
        const { running, waiting } = load()
        this.set({ pool, state: "running" }, running)
        this.set({ pool, state: "waiting" }, waiting)
      }
    },
  })
  const restarts = new Counter({
    name: "content_site_pool_restarts_total",
    help: "Workers of a pool replaced: a thread that crashed or outgrew its heap, a decoding process killed past its time budget or ended under its image (a crash, the OOM killer).",
    labelNames: ["pool"] as const,
    registers: [registry],
  })
  return {
    registry,
    request: (sample) => {
      requests.observe({ method: sample.method, route: sample.route, status: sample.status }, sample.seconds)
      if (sample.problemCode !== undefined) refusals.inc({ code: sample.problemCode, channel: sample.channel })
      // at most one per message of a batch (the MCP SDK's MAX_BATCH_SIZE)
      for (const tool of sample.tools ?? []) toolCalls.observe({ tool: tool.name, outcome: tool.outcome }, tool.seconds)
    },
    articleChanged: (origin) => changes.inc({ origin }),
    watchJournal: (backlog) => {
      journals.push(backlog)
    },
    watchPool: (pool, load) => {
      pools.set(pool, load)
    },
    poolRestarted: (pool) => restarts.inc({ pool }),
  }
}
