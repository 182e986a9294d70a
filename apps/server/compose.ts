import { closeAfterUnreadBody, errorFunnel, type HttpDeps, largeTextAsBytes, notesOf, requestId, securityHeaders, sendProblem, strictQuery } from "@content-site/http"
import { mountRest } from "@content-site/rest"
import { isCoreError, NotFound, toProblem } from "@content-site/core"
import { type McpOptions, mountMcp, OAUTH_ROUTES } from "@content-site/mcp"
import { createLogger, type Metrics, metricsEndpoint, requestTelemetry, type RouteTable, type Tracing } from "@content-site/telemetry"
import type { Logger } from "pino"
import { mediaMiddleware } from "@content-site/media"
import { mountWeb } from "@content-site/web"
import Koa from "koa"

/** Answers 400 when a route that takes no query parameters gets some (before the error funnel). */
const refusedQuery = (ctx: Koa.Context, publicUrl: string): boolean => {
  try {
    strictQuery(ctx.querystring, [])
    return false
  } catch (error) {
    if (!isCoreError(error)) throw error
    sendProblem(ctx, toProblem(error, String(ctx.state.requestId), publicUrl))
    return true
  }
}

/** What the composition root adds to the adapters' deps. */
export interface ComposeOptions extends HttpDeps {
  /** Whether the database answers (GET /readyz). */
  readonly ready: () => Promise<boolean>
  /** The service's logger: one access line per request (not for health checks), defects, events. */
  readonly logger?: Logger
  /** Set with METRICS_TOKEN: every request is counted, and GET /metrics answers to the token. */
  readonly metrics?: Metrics
  readonly metricsToken?: string | undefined
  /** Set when tracing: requests' spans are named by route and their trace id logged. */
  readonly tracing?: Tracing
  /** Trust X-Forwarded-* and a proxy's X-Request-Id (TRUST_PROXY=true). */
  readonly trustProxy: boolean
  /** Set while the server drains: responses ask clients to close their connection. */
  readonly isDraining: () => boolean
  /** Counts requests being handled (+1 on entry, -1 when done), so shutdown waits for them. */
  readonly inFlight?: (delta: 1 | -1) => void
  /** Which interfaces to mount (default all): the REST-only host mounts just "rest". */
  readonly surfaces?: ReadonlyArray<Surface>
  /** The MCP connector's own options (tests only: how a client's metadata document is fetched). */
  readonly mcp?: McpOptions
}

/**
 * Route templates of the paths no router matches (the routers' own patterns are used as they are):
 * the MCP endpoint, the OAuth server's endpoints and metadata, the interaction pages, stored media.
 */
const ROUTES: RouteTable = {
  exact: ["/mcp", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration", "/api/docs", ...Object.values(OAUTH_ROUTES)],
  prefixes: [
    // the API reference's page and assets (served outside the router)
    ["/api/docs/", "/api/docs/{file}"],
    ["/oauth/interaction/", "/oauth/interaction/{uid}"],
    ["/oauth/", "/oauth/{endpoint}"],
    ["/media/", "/media/{file}"],
  ],
}

/** An interface the server can expose. */
export type Surface = "rest" | "mcp" | "web"

/**
 * Builds the Koa app: request id, security headers, the error funnel and health first, then media
 * (`/media`), REST (`/api/v1`, `/api/docs`), MCP + OAuth and the web pages, in that order.
 */
export const composeApp = async (options: ComposeOptions): Promise<Koa> => {
  // Behind the one trusted proxy, the client is the address that proxy added: the last entry of
  // X-Forwarded-For. Entries before it are whatever the client sent and are never believed.
  const app = new Koa({ proxy: options.trustProxy, maxIpsCount: 1 })
  // (a composition without a logger, in tests, still reports warnings and errors)
  const logger = options.logger ?? createLogger({ level: "warn", format: "json" })
  const deps: HttpDeps = {
    runtime: options.runtime,
    publicUrl: options.publicUrl,
    env: options.env,
    ...(options.closing !== undefined ? { closing: options.closing } : {}),
    log: logger,
    ...(options.span !== undefined ? { span: options.span } : {}),
  }
  const { metrics, tracing } = options
  const surfaces = options.surfaces ?? ["rest", "mcp", "web"]
  // Errors Koa reports outside the error funnel: clients that hung up or timed out are not ours to log.
  app.on("error", (err: unknown) => {
    const code = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined
    // (HPE_INVALID_EOF_STATE: the connection ended in the middle of a request's body)
    if (code === "ECONNRESET" || code === "EPIPE" || code === "ERR_STREAM_PREMATURE_CLOSE" || code === "ERR_HTTP_REQUEST_TIMEOUT" || code === "HPE_INVALID_EOF_STATE") return
    if (err instanceof Error && /^(Request timeout|aborted)$/.test(err.message)) return
    logger.error({ err }, "request failed outside the error funnel")
  })

  app.use(async (ctx, next) => {
    options.inFlight?.(+1)
    try {
      if (options.isDraining()) ctx.set("Connection", "close")
      await next()
      // (a request that came in before the drain began and is answered during it closes too)
      if (options.isDraining() && !ctx.headerSent) ctx.set("Connection", "close")
      // A large text answer leaves as bytes (no second copy of it on the heap as Node joins head and body).
      largeTextAsBytes(ctx)
    } finally {
      options.inFlight?.(-1)
    }
  })
  app.use(requestId({ trustIncoming: options.trustProxy }))
  // An answer sent before the request body has all arrived (413 while uploading) stays readable.
  app.use(closeAfterUnreadBody())
  app.use(securityHeaders({ hsts: options.publicUrl.startsWith("https://") }))

  // Health: no auth, no rate limit, not logged.
  app.use(async (ctx, next) => {
    if ((ctx.path === "/healthz" || ctx.path === "/readyz") && refusedQuery(ctx, options.publicUrl)) return
    if (ctx.path === "/healthz" && (ctx.method === "GET" || ctx.method === "HEAD")) {
      ctx.set("Cache-Control", "no-store")
      ctx.body = { status: "ok" }
      return
    }
    if (ctx.path === "/readyz" && (ctx.method === "GET" || ctx.method === "HEAD")) {
      const ok = await options.ready().catch(() => false)
      ctx.set("Cache-Control", "no-store")
      ctx.status = ok ? 200 : 503
      ctx.body = { status: ok ? "ready" : "unavailable" }
      return
    }
    // Another method on a health address: what works there is GET and HEAD (OPTIONS says so).
    if (ctx.path === "/healthz" || ctx.path === "/readyz") {
      ctx.set("Allow", "GET, HEAD")
      if (ctx.method === "OPTIONS") {
        ctx.status = 204
        return
      }
      sendProblem(ctx, {
        type: `${options.publicUrl}/problems/method_not_allowed`,
        title: "Method not allowed",
        status: 405,
        code: "method_not_allowed",
        detail: `${ctx.method.slice(0, 20)} is not allowed on this path; use GET or HEAD.`,
        request_id: String(ctx.state.requestId),
      })
      return
    }
    await next()
  })

  // Scrapes are not logged or counted, like the health checks; a 404 problem without METRICS_TOKEN.
  app.use(metricsEndpoint({ metrics: metrics, token: options.metricsToken, publicUrl: options.publicUrl }))
  if (logger.isLevelEnabled("info") || metrics !== undefined || tracing !== undefined) {
    app.use(requestTelemetry({ logger, metrics, routes: ROUTES, ...(tracing !== undefined ? { tracing } : {}) }))
  }

  app.use(
    errorFunnel({
      publicUrl: options.publicUrl,
      // The cause (a stack) is the operator's: it goes to the log, never to the client.
      logDefect: (id, detail) => logger.error({ request_id: id, detail }, "internal error"),
    }),
  )

  app.use(mediaMiddleware(deps.runtime, { publicUrl: options.publicUrl, onProblem: (ctx, code) => (notesOf(ctx).problemCode = code) }))
  if (surfaces.includes("rest")) mountRest(app, deps)
  if (surfaces.includes("mcp")) await mountMcp(app, deps, options.mcp)
  if (surfaces.includes("web")) mountWeb(app, deps)

  // Nothing answered (the pages answer their own paths with a page): a problem, as every error is.
  app.use(async (ctx, next) => {
    await next()
    if (ctx.body === undefined && ctx.status === 404) {
      const problem = toProblem(new NotFound({ resource: "endpoint", id: ctx.path }), String(ctx.state.requestId), options.publicUrl)
      // (outside the API the OpenAPI document, which the API's sentence points to, lists nothing;
      // and a host without the REST API serves no OpenAPI document to point to)
      sendProblem(ctx, ctx.path.startsWith("/api/") && surfaces.includes("rest") ? problem : { ...problem, detail: `Nothing is served at '${ctx.path}'.` })
    }
  })
  return app
}
