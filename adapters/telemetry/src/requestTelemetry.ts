import { NotFound, toProblem, Unauthenticated } from "@content-site/core"
import { notesOf, type RequestNotes, requestIdOf, sendProblem } from "@content-site/http"
import type { Logger } from "pino"
import type { Middleware, ParameterizedContext } from "koa"
import { createHash, timingSafeEqual } from "node:crypto"
import type { Metrics } from "./metrics.ts"
import type { Tracing } from "./tracingHooks.ts"

/** The route label of a request no route matched. */
export const UNMATCHED_ROUTE = "unmatched"

/** How paths that no router matched are labelled: exact paths, then prefixes with their template. */
export interface RouteTable {
  /** Paths that are their own template (`/mcp`, `/oauth/token`, the metadata documents). */
  readonly exact: ReadonlyArray<string>
  /** A path starting with the prefix is labelled with the template (`/media/` → `/media/{file}`). */
  readonly prefixes: ReadonlyArray<readonly [prefix: string, template: string]>
}

const TEMPLATES = new Map<string, string>()

/**
 * The route template of a request: the pattern `@koa/router` matched (`:id` written `{id}`), else
 * the template its handler noted (`RequestNotes.route`), else the route table's exact path or
 * prefix template, else `unmatched`. Never the raw path, so
 * labels and log fields carry no ids. One pass over the (fixed) table.
 */
export const routeOf = (ctx: ParameterizedContext, table: RouteTable, exact: ReadonlySet<string> = new Set(table.exact), arrivedAt: string = ctx.path): string => {
  const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute
  if (typeof matched === "string") {
    // the router's patterns are a fixed set: each is rewritten once
    let template = TEMPLATES.get(matched)
    if (template === undefined) TEMPLATES.set(matched, (template = matched.replace(/:(\w+)/g, "{$1}")))
    return template
  }
  const noted = notesOf(ctx).route
  if (noted !== undefined) return noted
  const path = arrivedAt.length > 1 && arrivedAt.endsWith("/") ? arrivedAt.slice(0, -1) : arrivedAt
  if (exact.has(path)) return path
  for (const [prefix, template] of table.prefixes) if (path.startsWith(prefix)) return template
  return UNMATCHED_ROUTE
}

/** The channel of a request, as the activity log names them, plus `oauth` and `media`. */
export const channelOf = (path: string): string =>
  path.startsWith("/api/") ? "api" : path === "/mcp" || path.startsWith("/mcp/") ? "mcp" : path.startsWith("/oauth/") || path.startsWith("/.well-known/") ? "oauth" : path.startsWith("/media/") ? "media" : "web"

/** What the access middleware writes to. */
export interface RequestTelemetryOptions {
  readonly logger: Logger
  /** Unset without METRICS_TOKEN: nothing is counted. */
  readonly metrics?: Metrics | undefined
  readonly routes: RouteTable
  /** Tracing on: runs the request in its server span, names it by its route, and gives its trace id. */
  readonly tracing?: Pick<Tracing, "traceId" | "nameServerSpan" | "serve">
}

/** What one request's access line and sample say. */
export interface Access {
  readonly requestId: string
  readonly method: string
  readonly route: string
  readonly status: number
  readonly seconds: number
  readonly channel: string
  readonly accountId?: string | undefined
  readonly tools?: RequestNotes["tools"]
  readonly problemCode?: string | undefined
  readonly traceId?: string | undefined
}

/**
 * Writes a request's access line (at `info`) and counts its sample: the fields in the contract's
 * order, the optional ones only when known. The access middleware's, and the server's for what it
 * answers before the app (Node's parser refusals, requests while starting).
 */
export const recordAccess = (logger: Logger, metrics: Metrics | undefined, access: Access): void => {
  const { method, route, status, channel } = access
  metrics?.request({ method, route, status, seconds: access.seconds, channel, problemCode: access.problemCode, tools: access.tools })
  if (!logger.isLevelEnabled("info")) return
  const line: Record<string, unknown> = { request_id: access.requestId, method, route, status, duration_ms: Math.round(access.seconds * 10_000) / 10 }
  if (access.accountId !== undefined) line["account_id"] = access.accountId
  line["channel"] = channel
  if (access.tools !== undefined) line["tool"] = access.tools.map((t) => t.name).join(",")
  if (access.problemCode !== undefined) line["code"] = access.problemCode
  if (access.traceId !== undefined) line["trace_id"] = access.traceId
  logger.info(line, `${method} ${route} ${status}`)
}

/**
 * One access line and one sample per request, after its answer is settled: `request_id`,
 * `method`, `route` (template), `status`, `duration_ms`, `account_id` when known, `channel`, the
 * MCP tools called, `trace_id` when tracing. Nothing of the request's input is read: no header,
 * query string or body, so no key, token, password or cookie can reach the log.
 */
export const requestTelemetry = (options: RequestTelemetryOptions): Middleware => {
  const { logger, metrics, routes, tracing } = options
  const exact = new Set(routes.exact)
  const handle = async (ctx: ParameterizedContext, next: () => Promise<unknown>) => {
    const started = performance.now()
    // The path as the request arrived: a handler may rewrite it (the OAuth server's RFC 8414
    // metadata is served as its discovery document), and the line names what was asked for.
    const path = ctx.path
    try {
      await next()
    } finally {
      const route = routeOf(ctx, routes, exact, path)
      const notes = notesOf(ctx)
      tracing?.nameServerSpan(ctx.method, route)
      recordAccess(logger, metrics, {
        requestId: requestIdOf(ctx),
        method: ctx.method,
        route,
        status: ctx.status,
        seconds: (performance.now() - started) / 1000,
        channel: channelOf(path),
        accountId: notes.accountId,
        tools: notes.tools,
        problemCode: notes.problemCode,
        traceId: tracing?.traceId(),
      })
    }
  }
  // With tracing, the whole handling runs in the request's server span.
  return tracing !== undefined ? (ctx, next) => tracing.serve(ctx.req, ctx.res, () => handle(ctx, next)) : handle
}

const digest = (text: string) => createHash("sha256").update(text).digest()

/**
 * `GET /metrics`: the Prometheus exposition to `Authorization: Bearer <METRICS_TOKEN>`; a 404
 * `not_found` problem when no token is configured, a 401 `unauthenticated` problem with a wrong or
 * missing one (compared in constant time). Not logged and not counted, like the health checks.
 */
export const metricsEndpoint = (options: { readonly metrics: Metrics | undefined; readonly token: string | undefined; readonly publicUrl: string }): Middleware => {
  const { metrics } = options
  const expected = options.token === undefined || metrics === undefined ? undefined : digest(options.token)
  return async (ctx, next) => {
    if (ctx.path !== "/metrics") return next()
    const requestId = requestIdOf(ctx)
    ctx.set("Cache-Control", "no-store")
    if (expected === undefined || metrics === undefined) {
      // as any path nothing serves: /metrics is no path of the API, whose OpenAPI document (which
      // the API's 404 sentence points to) lists nothing here, and a host may serve no such document
      const problem = toProblem(new NotFound({ resource: "endpoint", id: "/metrics" }), requestId, options.publicUrl)
      sendProblem(ctx, { ...problem, detail: "Nothing is served at '/metrics'." })
      return
    }
    const presented = /^Bearer (.+)$/i.exec(ctx.get("Authorization"))?.[1] ?? ""
    if (!timingSafeEqual(digest(presented), expected)) {
      ctx.set("WWW-Authenticate", 'Bearer realm="metrics"')
      sendProblem(ctx, toProblem(new Unauthenticated({ detail: "GET /metrics needs Authorization: Bearer with the configured METRICS_TOKEN." }), requestId, options.publicUrl))
      return
    }
    if (ctx.method !== "GET" && ctx.method !== "HEAD") {
      ctx.set("Allow", "GET")
      sendProblem(ctx, {
        type: `${options.publicUrl}/problems/method_not_allowed`,
        title: "Method not allowed",
        status: 405,
        code: "method_not_allowed",
        detail: `${ctx.method} is not allowed on /metrics; use GET.`,
        request_id: requestId,
      })
      return
    }
    ctx.type = metrics.registry.contentType
    ctx.body = await metrics.registry.metrics()
  }
}
