import { Clock, type CoreServices, type ImageFetcher, type ImageInspector, type StorageServices } from "@content-site/core"
import { localMediaStore } from "@content-site/media"
import { memoryStorage, settingsLayer } from "@content-site/memory"
import { openDatabase } from "@content-site/orm"
import { makeSharpImageInspector, type PublicDocumentFetchOptions, safeImageFetcher } from "@content-site/images"
import { lowerV8HelperThreads, nodePlatform, workerHtmlAnalyzer } from "@content-site/platform"
import { type AppRuntime, noteAnsweredOnSocket } from "@content-site/http"
import { Effect, Layer, ManagedRuntime } from "effect"
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from "node:http"
import type { Duplex } from "node:stream"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { channelOf, countingArticleChanges, createLogger, createMetrics, type Metrics, recordAccess, type Tracing, UNMATCHED_ROUTE } from "@content-site/telemetry"
import type { Logger } from "pino"
import { composeApp, type Surface } from "./compose.ts"
import type { ClientMetadataFetch } from "@content-site/mcp"
import { seedDemo } from "./demo.ts"
import { misspeltSettings, readConfig, type ServerConfig } from "./config.ts"

/** How to start the server. */
export interface StartOptions {
  /** Same keys as process.env (docs/operations.md's configuration table). */
  readonly env?: Record<string, string | undefined>
  /** Tests may ask for memory storage instead of the database. */
  readonly storage?: "memory"
  /** No access lines (the service's own warnings and errors are still logged). */
  readonly quiet?: boolean
  /** Set when the host started tracing (`startTracing`) before loading the server. */
  readonly tracing?: Tracing
  /** Which interfaces to mount (default all); the REST-only host passes ["rest"]. */
  readonly surfaces?: ReadonlyArray<Surface>
  /**
   * Tests only: the clock of the core (activity times, the UTC day of the edit limit, periods) and
   * of the request counters' windows, so a test controls minute and day boundaries. Default: the system clock.
   */
  readonly now?: () => number
  /**
   * Tests only: how the authorization server fetches a client's metadata document (a test's own
   * HTTPS server on this machine, which the default fetch refuses as a special-use address).
   */
  readonly clientMetadataFetch?: ClientMetadataFetch
  /** Tests only: what the service's own fetch of a metadata document trusts (a test server's certificate, its address as public). */
  readonly clientMetadataTrust?: Pick<PublicDocumentFetchOptions, "ca" | "isAllowedAddress">
}

/** A running server. */
export interface StartedServer {
  /** Where it listens, e.g. http://127.0.0.1:43123. */
  readonly url: string
  /** `{base_url}`: PUBLIC_URL as the configuration read it (trimmed, no trailing slash), or `url`. */
  readonly publicUrl: string
  readonly runtime: AppRuntime
  readonly demo: { email: string; password: string; apiKey: string } | null
  /** The service's logger (pino): the host announces itself through it. */
  readonly logger: Logger
  /** Stops accepting, drains in-flight requests, closes the database. */
  readonly close: () => Promise<void>
}

interface Storage {
  readonly layer: Layer.Layer<StorageServices>
  readonly ready: () => Promise<boolean>
  readonly close: () => Promise<void>
  /** Activity entries not yet in the database (0 for memory storage). */
  readonly backlog: () => number
}


const openStorage = async (config: ServerConfig, kind: StartOptions["storage"], now: StartOptions["now"], logger: Logger): Promise<Storage> => {
  if (kind === "memory") return { layer: memoryStorage(undefined, now), ready: async () => true, close: async () => {}, backlog: () => 0 }
  const db = await openDatabase({
    log: logger,
    ...(config.databaseUrl !== undefined ? { databaseUrl: config.databaseUrl } : {}),
    dataDir: config.dataDir,
    lockTimeoutMs: config.editLockTimeoutMs,
    ...(now !== undefined ? { now } : {}),
    ...(config.redisUrl !== undefined ? { redisUrl: config.redisUrl } : {}),
  })
  const media = localMediaStore(join(config.dataDir, "media"), now)
  return { layer: Layer.merge(db.layer, media), ready: db.ready, close: db.close, backlog: db.activityBacklog }
}

const imageLayers = (config: ServerConfig, logger: Logger, metrics: Metrics | undefined): Layer.Layer<ImageInspector | ImageFetcher> =>
  Layer.merge(
    makeSharpImageInspector({
      onKilled: (seconds) => {
        metrics?.poolRestarted("images")
        logger.warn({ pool: "images", budget_seconds: seconds }, `images: an image outlived its ${seconds} s budget; its decoding process was killed and replaced (413)`)
      },
      onEnded: (exit) => {
        metrics?.poolRestarted("images")
        logger.warn({ pool: "images", exit }, `images: a decoding process ended under its image (${exit}: a decoder crash or the OOM killer); the image was refused (415) and the process replaced`)
      },
      ...(metrics !== undefined ? { watch: (load: () => { running: number; waiting: number }) => metrics.watchPool("images", load) } : {}),
    }),
    safeImageFetcher({ allowPrivate: config.imageFetchAllowPrivate }),
  )

/** Reports an answer given before the Koa app (while starting, or to what Node's parser refused): its access line and sample. */
type EarlyAnswer = (answer: { requestId: string; method: string; path: string | undefined; status: number; code: string | undefined }) => void

/**
 * What a request gets while the service starts (migrating, loading keys): `/healthz` 200 (the
 * process is up), `/readyz` 503 `unavailable`, anything else a 503 `unavailable` problem, each
 * with `Retry-After` and the connection closed (a request body is not read).
 */
/** The headers of an answer given before the app (every answer's own: no caching, no sniffing, the CSP, its id); the connection closes. */
const earlyHeaders = (requestId: string, type: string, body: string): Record<string, string> => ({
  "Content-Type": `${type}; charset=utf-8`,
  "Content-Length": String(Buffer.byteLength(body)),
  "Cache-Control": "no-store",
  "X-Content-Type-Options": "nosniff",
  "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
  "X-Request-Id": requestId,
  Connection: "close",
})

/** An answer written straight to a socket that no `ServerResponse` holds (a parser refusal, a CONNECT). */
const rawAnswer = (status: number, title: string, headers: Record<string, string>, body: string): string =>
  [`HTTP/1.1 ${status} ${title}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), "", body].join("\r\n")

const startingUp = (publicUrl: () => string, onAnswer: EarlyAnswer): RequestListener => (req, res) => {
  const path = (req.url ?? "/").split("?")[0]
  const health = req.method === "GET" || req.method === "HEAD"
  const requestId = `req_${randomUUID().replaceAll("-", "")}`
  const [status, type, body] =
    health && path === "/healthz"
      ? [200, "application/json", { status: "ok" }]
      : health && path === "/readyz"
        ? [503, "application/json", { status: "unavailable" }]
        : [
            503,
            "application/problem+json",
            {
              type: `${publicUrl()}/problems/unavailable`,
              title: "Service unavailable",
              status: 503,
              code: "unavailable",
              detail: "The service is starting; retry in a moment.",
              request_id: requestId,
            },
          ]
  const text = JSON.stringify(body)
  res.writeHead(status, { ...earlyHeaders(requestId, type, text), ...(status === 503 ? { "Retry-After": "1" } : {}) })
  res.end(req.method === "HEAD" ? undefined : text)
  if (path !== "/healthz" && path !== "/readyz") onAnswer({ requestId, method: req.method ?? "GET", path, status, code: status === 503 ? "unavailable" : undefined })
}

/** The listening address cannot be had (a port in use, a privileged port, a HOST not of this machine): one sentence, no stack. */
export class ListenFailed extends Error {
  constructor(host: string, port: number, cause: Error & { code?: string }) {
    const where = `${host.includes(":") ? `[${host}]` : host}:${port}`
    const why =
      cause.code === "EADDRINUSE"
        ? `the port is in use by another process. Stop it, or set PORT to another port.`
        : cause.code === "EACCES"
          ? `permission denied (a port below 1024 needs privileges). Set PORT to a port from 1024.`
          : cause.code === "EADDRNOTAVAIL" || cause.code === "ENOTFOUND" || cause.code === "EAI_AGAIN"
            ? `HOST is not an address of this machine. Set HOST to one of its addresses, or 0.0.0.0 for all.`
            : `${cause.message}.`
    super(`Cannot listen on ${where}: ${why}`, { cause })
    this.name = "ListenFailed"
  }
}

const listen = (server: Server, port: number, host: string) =>
  new Promise<AddressInfo>((resolve, reject) => {
    const failed = (e: Error) => reject(new ListenFailed(host, port, e))
    server.once("error", failed)
    server.listen(port, host, () => {
      server.off("error", failed)
      resolve(server.address() as AddressInfo)
    })
  })


// What Node's parser refuses, by its error code: the status Node itself would answer, with its title and a sentence.
const PARSER_REFUSALS: Readonly<Record<string, readonly [number, string, string, string]>> = {
  HPE_HEADER_OVERFLOW: [431, "request_header_fields_too_large", "Request header fields too large", "The request's headers are larger than the server accepts."],
  ERR_HTTP_REQUEST_TIMEOUT: [408, "request_timeout", "Request timeout", "The request was not received in time."],
  ERR_HTTP_HEADERS_TIMEOUT: [408, "request_timeout", "Request timeout", "The request's headers were not received in time."],
}

/** Sockets whose last request was answered before its body had all arrived (until it has). */
const answeredMidBody = new WeakSet<Duplex>()

/**
 * A response's `finish` listener (one function for every response, no closure a request): notes
 * a request answered before its body had all arrived, until the rest of it is read.
 */
function noteAnsweredMidBody(this: ServerResponse): void {
  const req = this.req
  if (req.complete) return
  answeredMidBody.add(req.socket)
  req.once("end", () => answeredMidBody.delete(req.socket))
}

/**
 * Answers a request that Node's HTTP parser refused (a control character in a header, a malformed
 * request line, headers too large) as every other refusal is answered: a problem body with an
 * `X-Request-Id`, instead of Node's bare status line. Written to the socket, as there is no
 * request or response object; only when no answer has begun on it, as Node's own handler does.
 */
const answerClientError =
  (publicUrl: () => string, onAnswer: EarlyAnswer) =>
  (error: Error & { code?: string }, socket: Duplex): void => {
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage
    // (the app's request on this socket, if it is reading one: its id, and its own access line)
    const own = inFlight?.getHeader("X-Request-Id")
    const app = inFlight !== undefined && typeof own === "string" ? { res: inFlight, requestId: own } : undefined
    // A client that closed its connection in the middle of a request (Node: an invalid end of
    // file) is gone: nothing to answer, and the app's line of that request says 499.
    // So is one that closed it in the middle of a body already answered (a handler that wrote
    // its answer itself, before reading all of it): that request has its own line already.
    const gone = error.code === "ECONNRESET" || (error.code === "HPE_INVALID_EOF_STATE" && (app !== undefined || answeredMidBody.has(socket)))
    if (gone || !socket.writable || inFlight?.headersSent === true) {
      socket.destroy()
      return
    }
    const [status, code, title, detail] = PARSER_REFUSALS[error.code ?? ""] ?? [400, "invalid_request", "Invalid request", "The request could not be read as HTTP (for example a control character in a header value)."]
    // A request the app is reading (its body past REQUEST_TIMEOUT_MS, a malformed chunk): the
    // answer carries its id, and the app's access line of it (with its route) says this answer.
    const { requestId, headers, body } = earlyProblem(publicUrl(), status, code, title, detail, app?.requestId)
    socket.end(rawAnswer(status, title, headers, body))
    if (app !== undefined) return noteAnsweredOnSocket(app.res, status, code)
    // (what was refused is not read: no method or path of it is believed)
    onAnswer({ requestId, method: "UNKNOWN", path: undefined, status, code })
  }

/** A problem answered before the app, with the headers every answer carries (the body is not read: the connection closes). */
const earlyProblem = (publicUrl: string, status: number, code: string, title: string, detail: string, id?: string) => {
  const requestId = id ?? `req_${randomUUID().replaceAll("-", "")}`
  const body = JSON.stringify({ type: `${publicUrl}/problems/${code}`, title, status, code, detail, request_id: requestId })
  return { requestId, headers: earlyHeaders(requestId, "application/problem+json", body), body }
}

/**
 * An HTTP/1.1 request without `Host` is a 400 (RFC 9112, section 3.2). Node answers it itself
 * with a bare status line when `requireHostHeader` is on; it is off, and this answers the same
 * 400 as every other refusal: a problem with its `X-Request-Id`.
 */
const lacksHost = (req: IncomingMessage): boolean => req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1

/** A request answered with a problem before the app sees it, and recorded as every answer is. */
const answerEarlyProblem =
  (publicUrl: () => string, onAnswer: EarlyAnswer, status: number, code: string, title: string, detail: string): RequestListener =>
  (req, res) => {
    const { requestId, headers, body } = earlyProblem(publicUrl(), status, code, title, detail)
    res.writeHead(status, headers)
    res.end(req.method === "HEAD" ? undefined : body)
    onAnswer({ requestId, method: req.method ?? "GET", path: (req.url ?? "/").split("?")[0], status, code })
  }

/** An `Expect` other than `100-continue`: Node's own answer is a bare 417; this one is a problem. */
const answerExpectation = (publicUrl: () => string, onAnswer: EarlyAnswer): RequestListener =>
  answerEarlyProblem(publicUrl, onAnswer, 417, "expectation_failed", "Expectation failed", "The only expectation the service meets is 'Expect: 100-continue'.")

/** A CONNECT request (no tunnels here): Node closes its connection without a word; this answers 405. */
const answerConnect = (publicUrl: () => string, onAnswer: EarlyAnswer) => (_req: IncomingMessage, socket: Duplex): void => {
  const { requestId, headers, body } = earlyProblem(publicUrl(), 405, "method_not_allowed", "Method not allowed", "CONNECT is not allowed: the service is not a proxy.")
  socket.end(rawAnswer(405, "Method Not Allowed", headers, body))
  onAnswer({ requestId, method: "CONNECT", path: undefined, status: 405, code: "method_not_allowed" })
}

const answerWithoutHost = (publicUrl: () => string, onAnswer: EarlyAnswer): RequestListener =>
  answerEarlyProblem(publicUrl, onAnswer, 400, "invalid_request", "Invalid request", "An HTTP/1.1 request needs a Host header.")

/**
 * Starts the whole service: storage (PostgreSQL with DATABASE_URL, else the embedded database;
 * memory for tests that ask), the core runtime, the Koa app with REST, MCP and pages, and the
 * HTTP server with bounded header/request timeouts. Seeds the demo account unless SEED_DEMO=false.
 */
export const startServer = async (options: StartOptions = {}): Promise<StartedServer> => {
  const env = options.env ?? process.env
  const config = readConfig(env, process.stdout.isTTY === true)
  // Quiet (tests): no access lines, but the service's warnings and errors still show.
  const logger = createLogger({ level: options.quiet === true && config.logLevel === "info" ? "warn" : config.logLevel, format: config.logFormat })
  for (const { given, meant } of misspeltSettings(env)) logger.warn({ variable: given, setting: meant }, `config: ${given} is not a setting of this service (is it ${meant}, misspelt?); it is ignored`)
  const metrics = config.metricsToken !== undefined ? createMetrics() : undefined
  // V8's garbage-collection helpers below the event loop, as the sanitiser's threads (helperThreads.ts).
  const lowered = lowerV8HelperThreads()
  logger.debug({ threads: lowered }, `V8 helper threads at a lower priority: ${lowered}`)
  // Slow clients (slowloris) are cut off: headers and whole requests have bounded time, checked often.
  const server = createServer({
    // (answered below as a problem, see lacksHost)
    requireHostHeader: false,
    headersTimeout: config.headersTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(Math.min(config.headersTimeoutMs, config.requestTimeoutMs) / 4))),
  })
  server.keepAliveTimeout = config.keepAliveTimeoutMs
  // Listening comes first (the address is known before the database opens), so a request can
  // arrive while the service is still starting: it is answered at once, never left unanswered.
  let origin = config.publicUrl ?? ""
  // Answered before the app: logged and counted like any request (`unmatched`: no route was chosen).
  const earlyAnswer: EarlyAnswer = ({ requestId, method, path, status, code }) =>
    recordAccess(logger, metrics, { requestId, method, route: UNMATCHED_ROUTE, status, seconds: 0, channel: path === undefined ? "unknown" : channelOf(path), problemCode: code })
  let handle: RequestListener = startingUp(() => origin, earlyAnswer)
  const withoutHost = answerWithoutHost(() => origin, earlyAnswer)
  server.on("request", (req, res) => {
    res.on("finish", noteAnsweredMidBody)
    return lacksHost(req) ? withoutHost(req, res) : handle(req, res)
  })
  server.on("clientError", answerClientError(() => origin, earlyAnswer))
  server.on("checkExpectation", answerExpectation(() => origin, earlyAnswer))
  server.on("connect", answerConnect(() => origin, earlyAnswer))
  const address = await listen(server, config.port, config.host)
  const hostForUrl = config.host === "0.0.0.0" || config.host === "::" ? (config.publicUrl === undefined ? "localhost" : "127.0.0.1") : config.host
  const url = `http://${hostForUrl.includes(":") ? `[${hostForUrl}]` : hostForUrl}:${address.port}`
  const publicUrl = config.publicUrl ?? url
  origin = publicUrl

  let storage: Storage | undefined
  let runtime: AppRuntime | undefined
  try {
    storage = await openStorage(config, options.storage, options.now, logger)
    const openedStorage = storage
    metrics?.watchJournal(() => openedStorage.backlog())
    const now = options.now
    const platform = now === undefined ? nodePlatform() : Layer.merge(nodePlatform(), Layer.succeed(Clock, { now: Effect.sync(now) }))
    const layer: Layer.Layer<CoreServices> = Layer.mergeAll(
      metrics !== undefined ? countingArticleChanges(storage.layer, metrics.articleChanged) : storage.layer,
      platform,
      workerHtmlAnalyzer({
        ...(metrics !== undefined ? { watch: (load: () => { running: number; waiting: number }) => metrics.watchPool("sanitiser", load) } : {}),
        onWorkerLost: (error) => {
          metrics?.poolRestarted("sanitiser")
          logger.warn({ pool: "sanitiser", err: error instanceof Error ? error.message : String(error) }, "sanitiser: a worker thread failed its task (heap limit or crash) and is replaced; the request is answered 500")
        },
      }),
      settingsLayer(publicUrl, config.limits),
      imageLayers(config, logger, metrics),
    )
    runtime = ManagedRuntime.make(layer)
    await runtime.runPromise(Effect.void)
    const demo = config.seedDemo ? await seedDemo(runtime) : null

    let draining = false
    // Requests still being handled: a client may hang up mid-request, closing its connection while
    // the handler still runs; the runtime and the database are closed only when none is left.
    let handling = 0
    const stopping = new AbortController()
    const app = await composeApp({
      runtime,
      publicUrl,
      env,
      closing: stopping.signal,
      ready: storage.ready,
      log: logger,
      logger,
      ...(metrics !== undefined ? { metrics } : {}),
      metricsToken: config.metricsToken,
      ...(options.tracing !== undefined ? { tracing: options.tracing, span: options.tracing.span } : {}),
      trustProxy: config.trustProxy,
      isDraining: () => draining,
      inFlight: (delta) => {
        handling += delta
      },
      ...(options.surfaces !== undefined ? { surfaces: options.surfaces } : {}),
      mcp: {
        clientMetadataDocuments: config.oauthClientMetadataDocuments,
        keyRefreshMs: config.oauthKeyRefreshMs,
        keyRotateDays: config.oauthKeyRotateDays,
        allowedHosts: config.mcpAllowedHosts,
        ...(options.clientMetadataFetch !== undefined ? { clientMetadataFetch: options.clientMetadataFetch } : {}),
        ...(options.clientMetadataTrust !== undefined ? { clientMetadataTrust: options.clientMetadataTrust } : {}),
      },
    })
    handle = app.callback()

    const openStorageRef = storage
    const openRuntime = runtime
    let closing: Promise<void> | undefined
    const close = () => {
      closing ??= (async () => {
        draining = true
        stopping.abort()
        // One grace for the whole drain: at its end the connections still open are cut, and
        // requests still running are not waited for (their transactions roll back).
        const giveUpAt = Date.now() + config.shutdownGraceMs
        const closed = new Promise<void>((resolve) => server.close(() => resolve()))
        server.closeIdleConnections()
        const idleSweep = setInterval(() => server.closeIdleConnections(), 100)
        const deadline = setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs)
        await closed
        while (handling > 0 && Date.now() < giveUpAt) await new Promise((resolve) => setTimeout(resolve, 20))
        clearInterval(idleSweep)
        clearTimeout(deadline)
        await openRuntime.dispose()
        await openStorageRef.close()
        logger.flush()
      })()
      return closing
    }
    return { url, publicUrl, runtime, demo, logger, close }
  } catch (err) {
    server.close()
    server.closeAllConnections()
    await runtime?.dispose().catch(() => {})
    await storage?.close().catch(() => {})
    throw err
  }
}
