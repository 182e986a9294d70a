/**
 * The MCP connector: `/mcp` (Streamable HTTP, stateless) behind an OAuth 2.1 authorization server
 * (`/oauth/*`, `/.well-known/*`) with sign-in and consent pages, over the same core use cases as REST.
 */
import { checkAuthorizationLimit, checkRegistrationLimit, type CoreError, isCoreError, toProblem, Unavailable } from "@content-site/core"
import {
  clientAddress,
  eventLogOf,
  type HttpDeps,
  notesOf,
  peerAddress,
  problemHeaders,
  requestIdOf,
  runEffect,
  sendProblem,
  signedInAccount,
  strictQuery,
} from "@content-site/http"
import type Koa from "koa"
import type { ParameterizedContext } from "koa"
import type { EventEmitter } from "node:events"
import type { ServerResponse } from "node:http"
import { type ClientMetadataFetch, createAuthorizationServer, loadSharedKeys, MCP_SCOPES, OAUTH_ROUTES, oauthRefusalOf, presentAsPublic } from "./authorizationServer.ts"
import type { PublicDocumentFetchOptions } from "@content-site/images"
import { createLocalJWKSet } from "jose"
import { interactionPages } from "./interactions.ts"
import { errorPage } from "./pages.ts"
import { mcpEndpoint } from "./mcpEndpoint.ts"
import { DEFAULT_KEY_ROTATE_DAYS, loadSigningKeys, rotateIfDue, scheduledActivationSeconds, type SigningKeys } from "./signingKeys.ts"

export { type ConnectedClient, listConnectedClients, revokeConnectedClient } from "./connectedClients.ts"
export { toolDefinitionsFor, tools } from "./tools.ts"
export { type ClientMetadataFetch, OAUTH_ROUTES, OAUTH_TTL } from "./authorizationServer.ts"
export { DEFAULT_ACTIVATION_SECONDS, DEFAULT_KEY_ROTATE_DAYS, loadSigningKeys, rotateIfDue, rotateSigningKey } from "./signingKeys.ts"

const SECURITY_DEFAULTS: Record<string, string> = {
  "X-Content-Type-Options": "nosniff",
  "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
}

/**
 * The metadata documents are the same for every request (built from PUBLIC_URL alone, whatever
 * `Host` says), so any cache, shared ones included, may keep them for five minutes.
 */
const METADATA_CACHE_CONTROL = "public, max-age=300"

/**
 * The OAuth error code (RFC 6749 section 5.2, RFC 7591 section 3.2.2) of a refusal the service
 * answers before the provider sees the request: an OAuth client (the MCP SDK's included) reads
 * `error` and calls a body without it "Invalid OAuth error response". `too_many_requests` is the
 * code the MCP SDK names (its `TooManyRequestsError`, the one its own server answers a rate limit
 * with); `temporarily_unavailable` is OAuth's for a server that cannot answer now.
 */
export const oauthErrorCodeOf = (error: CoreError): string =>
  error._tag === "RateLimited" ? "too_many_requests" : error._tag === "Unavailable" ? "temporarily_unavailable" : "invalid_request"

/**
 * Answers a core error at a JSON OAuth endpoint (registration): the contract's problem
 * (`application/problem+json`, its `code`, `detail`, `request_id`, and `Retry-After`) with OAuth's
 * `error` and `error_description` beside them, so that an OAuth client reads it as an OAuth error.
 */
export const sendOAuthProblem = (ctx: ParameterizedContext, error: CoreError, publicUrl: string): void => {
  for (const [name, value] of Object.entries(problemHeaders(error))) ctx.set(name, value)
  const problem = toProblem(error, requestIdOf(ctx), publicUrl)
  sendProblem(ctx, { ...problem, error: oauthErrorCodeOf(error), error_description: problem.detail } as typeof problem)
}

/**
 * Answers a core error at the authorization endpoint, before the provider saw the request, as the
 * provider answers its errors there (`renderError`): an error page with OAuth's error code, here
 * with the status and headers of the error (429 and Retry-After; 503 when the counters cannot
 * answer). Nothing goes back to the redirect URI: the client is not even looked up.
 */
const sendAuthorizationRefusal = (ctx: ParameterizedContext, error: CoreError, headers: Readonly<Record<string, string>>): void => {
  const problem = toProblem(error, requestIdOf(ctx), "")
  for (const [name, value] of Object.entries({ ...headers, ...problemHeaders(error) })) ctx.set(name, value)
  const page = errorPage(
    oauthErrorCodeOf(error) === "too_many_requests" ? "temporarily_unavailable" : oauthErrorCodeOf(error),
    problem.detail,
    error._tag === "RateLimited" ? `Try again in ${error.retryAfterSeconds} seconds.` : "Try again in a moment.",
  )
  notesOf(ctx).problemCode = problem.code
  ctx.status = problem.status
  ctx.set("Cache-Control", "no-store")
  ctx.set("Content-Security-Policy", page.csp)
  ctx.type = "html"
  ctx.body = page.html
}

/** What the MCP connector may be given beyond the adapters' common dependencies. */
export interface McpOptions {
  /** Whether a client may be described by a metadata document at an https URL (default true). */
  readonly clientMetadataDocuments?: boolean
  /** Tests only: how a client's metadata document is fetched (see `createAuthorizationServer`). */
  readonly clientMetadataFetch?: ClientMetadataFetch
  /** Tests only: what the service's own fetch of a metadata document trusts (a test server's certificate, its address as public). */
  readonly clientMetadataTrust?: Pick<PublicDocumentFetchOptions, "ca" | "isAllowedAddress">
  /** How often the signing keys are reloaded, in ms (OAUTH_KEY_REFRESH_MS as the host read it; default 60 000). */
  readonly keyRefreshMs?: number
  /** Age in days of the newest signing key at which a reload rotates (OAUTH_KEY_ROTATE_DAYS as the host read it; 0: never; default 90). */
  readonly keyRotateDays?: number
  /** Further `Host` names accepted at /mcp besides PUBLIC_URL's, lower case (MCP_ALLOWED_HOSTS as the host read it). */
  readonly allowedHosts?: ReadonlyArray<string>
}

/**
 * Mounts the MCP endpoint, the OAuth authorization server and its pages, and the metadata
 * documents (RFC 9728 protected resource, RFC 8414 authorization server) on the app.
 */
export const mountMcp = async (app: Koa, deps: HttpDeps, options: McpOptions = {}): Promise<void> => {
  const keys = await loadSharedKeys(deps.runtime)
  const serverOf = (signing: SigningKeys) => {
    const provider = createAuthorizationServer({
      runtime: deps.runtime,
      publicUrl: deps.publicUrl,
      keys: { ...keys, signing },
      signedInAccountId: async (ctx) => (await signedInAccount(ctx, deps))?.id,
      clientMetadataDocuments: options.clientMetadataDocuments ?? true,
      ...(options.clientMetadataFetch !== undefined ? { clientMetadataFetch: options.clientMetadataFetch } : {}),
      ...(options.clientMetadataTrust !== undefined ? { clientMetadataTrust: options.clientMetadataTrust } : {}),
    })
    // The provider answers its own failures (500 `server_error`) and only emits them: each is logged
    // with its cause, as the error funnel logs an internal error of the other endpoints. The
    // database away is no defect: answered 503 (`createAuthorizationServer`), and not logged as one.
    const events = provider as unknown as EventEmitter
    events.on("server_error", (ctx: { readonly res: ServerResponse }, err: unknown) => {
      if (err instanceof Unavailable) return
      const requestId = ctx.res.getHeader("X-Request-Id")
      eventLogOf(deps).error({ request_id: typeof requestId === "string" ? requestId : "unknown", detail: err instanceof Error ? (err.stack ?? err.message) : String(err) }, "internal error")
    })
    return { signing, provider, handleOAuth: provider.callback(), verifyKeys: createLocalJWKSet({ keys: [...signing.publics] }) }
  }
  let current = serverOf(keys.signing)
  // Rotated keys reach every instance through the store: reload now and then, rebuild on a change.
  // All OAuth state is in the store, so a rebuilt provider carries on every flow in progress.
  // Each reload first rotates when the newest key is OAUTH_KEY_ROTATE_DAYS old (0: never).
  // The values the host's configuration checked: read again here from the environment, a blank
  // OAUTH_KEY_ROTATE_DAYS (`Number("")` is 0) turned the rotation off while the host took the default.
  const refreshMs = options.keyRefreshMs ?? 60_000
  const rotateDays = options.keyRotateDays ?? DEFAULT_KEY_ROTATE_DAYS
  const schedule = Number.isFinite(rotateDays) && rotateDays > 0
    ? { maxAgeSeconds: Math.round(rotateDays * 86_400), activateInSeconds: scheduledActivationSeconds(refreshMs) }
    : undefined
  const reload = async () => {
    if (schedule !== undefined) {
      const rotated = await rotateIfDue(deps.runtime, schedule)
      if (rotated !== undefined) eventLogOf(deps).info({ kid: rotated.kid, activates_at: rotated.activatesAt.toISOString() }, "OAuth: rotated the signing key")
    }
    const signing = await loadSigningKeys(deps.runtime)
    if (signing.fingerprint !== current.signing.fingerprint) current = serverOf(signing)
  }
  const refresh = setInterval(() => {
    reload().catch(() => {}) // the store is away (or the runtime closed): keep the keys in force
  }, refreshMs)
  refresh.unref()
  deps.closing?.addEventListener("abort", () => clearInterval(refresh), { once: true })
  const mcpUrl = `${deps.publicUrl}/mcp`
  const protectedResource = {
    resource: mcpUrl,
    authorization_servers: [deps.publicUrl],
    scopes_supported: [...MCP_SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: "Content-Site",
    resource_documentation: `${deps.publicUrl}/connect`,
  }

  // An /oauth/ path none of the provider's endpoints starts (the provider would answer it a bare
  // text 404) goes on, to the 404 problem every other unserved path gets.
  const routes: ReadonlyArray<string> = Object.values(OAUTH_ROUTES)
  // The provider writes its answers itself (the app's security headers come too late for them):
  // its pages (the authorization endpoint's errors) get the pages' headers here, HSTS included.
  const securityDefaults: Record<string, string> = {
    ...SECURITY_DEFAULTS,
    ...(deps.publicUrl.startsWith("https://") ? { "Strict-Transport-Security": "max-age=31536000; includeSubDomains" } : {}),
  }
  const isProviderPath = (path: string) => routes.some((route) => path === route || path.startsWith(`${route}/`))
  app.use(async (ctx, next) => {
    const path = ctx.path
    if (path === "/.well-known/oauth-protected-resource/mcp" || path === "/.well-known/oauth-protected-resource") {
      if (ctx.method !== "GET" && ctx.method !== "HEAD" && ctx.method !== "OPTIONS") return next()
      strictQuery(ctx.querystring, [])
      ctx.set("Access-Control-Allow-Origin", "*")
      ctx.set("Cache-Control", METADATA_CACHE_CONTROL)
      if (ctx.method === "OPTIONS") {
        ctx.set("Access-Control-Allow-Methods", "GET")
        ctx.status = 204
        return
      }
      ctx.body = protectedResource
      return
    }
    const isOAuth =
      path.startsWith("/oauth/") && !path.startsWith("/oauth/interaction/")
        ? isProviderPath(path)
        : path === "/.well-known/openid-configuration" || path === "/.well-known/oauth-authorization-server"
    if (!isOAuth) return next()
    // The metadata documents take no parameters; the OAuth endpoints ignore unknown ones, as
    // RFC 6749 (section 3.1) requires of an authorization server.
    if (path.startsWith("/.well-known/")) strictQuery(ctx.querystring, [])
    const registration = path === OAUTH_ROUTES.registration || path === `${OAUTH_ROUTES.registration}/`
    if (registration) {
      // Browser-based clients (the MCP Inspector's UI) register cross-origin, as they call the
      // token endpoint (whose CORS is the provider's): registration takes no credentials, so any
      // origin may, and read its answer (a refusal's too).
      ctx.set("Access-Control-Allow-Origin", "*")
      if (ctx.method === "OPTIONS") {
        ctx.set("Access-Control-Allow-Methods", "POST")
        ctx.set("Access-Control-Allow-Headers", "Content-Type")
        ctx.set("Access-Control-Max-Age", "3600")
        ctx.status = 204
        return
      }
    }
    // Registration is open to anyone (RFC 7591), so each client address gets an hourly budget;
    // over it 429 `rate_limited` with Retry-After, a problem that is an OAuth error too
    // (`too_many_requests`; 503 `temporarily_unavailable` when the counters cannot answer).
    // (The provider's router takes the path with one trailing slash too.)
    if (registration && ctx.method === "POST") {
      try {
        await runEffect(deps.runtime, checkRegistrationLimit(clientAddress(ctx)))
      } catch (err) {
        if (!isCoreError(err)) throw err
        return sendOAuthProblem(ctx, err, deps.publicUrl)
      }
    }
    // An authorization request (or a pushed one) is open to anyone too, and may store an
    // interaction (and a session) for an hour: each client address gets an hourly budget
    // (OAUTH_AUTHORIZATION_LIMIT_PER_HOUR). Over it the authorization endpoint answers as it
    // answers its errors, with a page (429 `temporarily_unavailable`, Retry-After), and the
    // pushed request endpoint as the registration endpoint does (a problem that is an OAuth
    // error). The resumption of a flow (`/oauth/authorize/<uid>`) replaces the interaction it
    // names and is not counted.
    const authorization = path === OAUTH_ROUTES.authorization || path === `${OAUTH_ROUTES.authorization}/`
    const pushed = path === OAUTH_ROUTES.pushed_authorization_request || path === `${OAUTH_ROUTES.pushed_authorization_request}/`
    if ((authorization && (ctx.method === "GET" || ctx.method === "POST")) || (pushed && ctx.method === "POST")) {
      try {
        await runEffect(deps.runtime, checkAuthorizationLimit(clientAddress(ctx)))
      } catch (err) {
        if (!isCoreError(err)) throw err
        if (pushed) return sendOAuthProblem(ctx, err, deps.publicUrl)
        return sendAuthorizationRefusal(ctx, err, securityDefaults)
      }
    }
    // RFC 8414 metadata is the provider's discovery document (a superset of it).
    if (path === "/.well-known/oauth-authorization-server") ctx.req.url = `/.well-known/openid-configuration${ctx.search}`
    for (const [name, value] of Object.entries(securityDefaults)) if (!ctx.res.hasHeader(name)) ctx.set(name, value)
    if (path.startsWith("/.well-known/")) ctx.set("Cache-Control", METADATA_CACHE_CONTROL)
    presentAsPublic(ctx.req, deps.publicUrl, peerAddress(ctx))
    ctx.respond = false
    await current.handleOAuth(ctx.req, ctx.res)
    // a refusal's OAuth error code (the provider wrote the answer itself) for the access line and metrics
    // (an endpoint asked with a method it does not take: the provider's bare 404, a refusal too)
    const refused = oauthRefusalOf(ctx.req) ?? (ctx.res.statusCode === 404 ? "not_found" : undefined)
    if (refused !== undefined) notesOf(ctx).problemCode = refused
  })
  app.use(mcpEndpoint({ deps, verifyKeys: () => current.verifyKeys, allowedHosts: options.allowedHosts ?? [] }))
  app.use(interactionPages({ provider: () => current.provider, deps, csrfKey: keys.cookieKeys[0] ?? "" }))
}
