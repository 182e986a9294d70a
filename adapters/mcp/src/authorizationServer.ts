import { checkRegistrationLimit, isStorableText, OAuthStore, type StoredPayload, Unavailable } from "@content-site/core"
import { type AppRuntime, clientKeyOf, problemHeaders, SESSION_TTL_SECONDS } from "@content-site/http"
import { publicDocumentFetch, type PublicDocumentFetchOptions } from "@content-site/images"
import { Cause, Effect, Exit, Option } from "effect"
import { AsyncLocalStorage } from "node:async_hooks"
import { createHash, randomBytes } from "node:crypto"
import type { EventEmitter } from "node:events"
import type { IncomingMessage } from "node:http"
import { createLocalJWKSet, type JWTPayload, jwtVerify } from "jose"
import Provider, { type Configuration, errors, interactionPolicy, type KoaContextWithOIDC } from "oidc-provider"
import { loopbackRedirectAllowed, withoutLoopbackPort } from "./loopbackRedirects.ts"
import { checkClient, checkStorable, oauthStoreAdapter, revokeGrant } from "./oauthStoreAdapter.ts"
import { errorPage } from "./pages.ts"
import { accessTokenChecks, loadSigningKeys, type SigningKeys } from "./signingKeys.ts"

/** Lifetimes of the authorization server's artefacts, in seconds. */
export const OAUTH_TTL = {
  AccessToken: 15 * 60,
  AuthorizationCode: 60,
  RefreshToken: 30 * 24 * 3600,
  Interaction: 60 * 60,
  // No longer than the browser's sign-in (the web session) it stands for.
  Session: SESSION_TTL_SECONDS,
  Grant: 90 * 24 * 3600,
  IdToken: 60 * 60,
} as const

/**
 * The address of the person whose sign-in or consent page is being made, while the page looks its
 * client up: a metadata document fetched then counts against that address's budget (the provider
 * reads the client outside a request of its own there).
 */
export const interactionAddress = new AsyncLocalStorage<string>()

/** How a client's metadata document is fetched: `fetch`'s shape, as oidc-provider calls it. */
export type ClientMetadataFetch = (url: string, init: RequestInit) => Promise<Response>

/** Longest client_id a client described by a metadata document may have (its document's https URL). */
export const MAX_CLIENT_ID_URL_LENGTH = 255

/** The scope of an MCP access token with full access: every tool, reads and writes. */
export const MCP_SCOPE = "mcp"
/** The scope of a read-only MCP connection: the read tools only; write tools answer `insufficient_scope`. */
export const MCP_READ_SCOPE = "mcp:read"
/** Every scope of the MCP resource, as advertised (clients ask for both; the owner picks at consent). */
export const MCP_SCOPES: ReadonlyArray<string> = [MCP_SCOPE, MCP_READ_SCOPE]

/**
 * The scope an authorization request asks for, as the consent page and the grant see it. No MCP
 * scope at all (no `scope`, an empty one, `offline_access` alone) is the default, `mcp`. Whenever
 * `mcp` is asked for, `mcp:read` is added: the person may grant reading only instead (the code
 * and the token carry only requested scopes, so a read-only grant needs it requested), and it is
 * narrower than `mcp`, so a client registered for `mcp` may have it (`clientScope`). A client's
 * registered `scope`, when it has one, still bounds the default.
 */
export const requestedScope = (asked: string | undefined, registered: string | undefined): string => {
  const scopes = new Set((asked ?? "").split(" ").filter((s) => s !== ""))
  const allowed = (scope: string) => registered === undefined || registered.split(" ").includes(scope)
  if (!scopes.has(MCP_SCOPE) && !scopes.has(MCP_READ_SCOPE)) {
    if (allowed(MCP_SCOPE)) scopes.add(MCP_SCOPE)
    else if (allowed(MCP_READ_SCOPE)) scopes.add(MCP_READ_SCOPE)
  }
  if (scopes.has(MCP_SCOPE)) scopes.add(MCP_READ_SCOPE)
  return [...scopes].join(" ")
}

/**
 * The scope a client may ask for, from the `scope` it registered (or its metadata document
 * names): `mcp:read` beside `mcp`, since reading only is less than `mcp` gives and a client may
 * always ask for less than it registered for (RFC 6749 section 3.3). The provider holds every
 * authorization request to this scope before `requestedScope` adds `mcp:read`, so a client
 * registered for `mcp` alone was refused `mcp:read` with `invalid_scope`. Nothing else widens:
 * a client registered for `mcp:read` may not ask for `mcp`, and no registered scope stays none.
 */
export const clientScope = <S extends string | undefined>(registered: S): S => {
  if (registered === undefined) return registered
  const scopes = new Set(registered.split(" ").filter((s) => s !== ""))
  if (!scopes.has(MCP_SCOPE) || scopes.has(MCP_READ_SCOPE)) return registered
  return [...scopes, MCP_READ_SCOPE].join(" ") as S
}

/** Keys every instance shares: the token signing keys and the cookie/CSRF secrets. */
export interface SharedKeys {
  readonly signing: SigningKeys
  readonly cookieKeys: ReadonlyArray<string>
}

const storeOnce = <A extends object>(runtime: AppRuntime, model: string, id: string, make: () => Promise<A>): Promise<A> =>
  runtime.runPromise(
    OAuthStore.use((store) =>
      Effect.gen(function* () {
        const found = yield* store.find(model, id)
        if (Option.isSome(found)) return found.value as A
        const made = yield* Effect.promise(make)
        yield* store.upsert(model, id, made as Record<string, unknown>, undefined)
        // Two instances starting together may both have written: use whatever the store kept.
        const kept = yield* store.find(model, id)
        return (Option.isSome(kept) ? kept.value : made) as A
      }),
    ) as Effect.Effect<A>,
  )

/** Loads the shared keys from the OAuthStore (model "Jwks"), creating them on first start. */
export const loadSharedKeys = async (runtime: AppRuntime): Promise<SharedKeys> => {
  const signing = await loadSigningKeys(runtime)
  const cookies = await storeOnce(runtime, "Jwks", "cookies", async () => ({ keys: [randomBytes(32).toString("base64url")] }))
  return { signing, cookieKeys: (cookies as { keys: Array<string> }).keys }
}

/**
 * Presents a request to the provider as one that arrived at PUBLIC_URL: oidc-provider builds its
 * absolute URLs (discovery metadata, the resume URL) from the request's host and protocol, so the
 * `Host` a client sends (or an `X-Forwarded-*` it forges) must never reach it. The provider trusts
 * exactly these forwarded headers, set here from PUBLIC_URL and from the client address the app
 * determined (which honours `X-Forwarded-For` only with TRUST_PROXY=true).
 */
export const presentAsPublic = (req: IncomingMessage, publicUrl: string, clientAddress: string): void => {
  const origin = new URL(publicUrl)
  req.headers.host = origin.host
  req.headers["x-forwarded-host"] = origin.host
  req.headers["x-forwarded-proto"] = origin.protocol.replace(/:$/, "")
  req.headers["x-forwarded-for"] = clientAddress
  delete req.headers["forwarded"]
}

/**
 * The provider's prompts with one more login check: the provider's own session (its cookie lives
 * on its own) counts only while the browser still holds a live sign-in of the same account. After
 * `POST /signout` (or when the sign-in expires, or another account signs in) every authorization
 * asks for the password again, and `prompt=none` gets `login_required` instead of a code.
 */
const signInPolicy = (signedInAccountId: (ctx: KoaContextWithOIDC) => Promise<string | undefined>, mcpUrl: string) => {
  const policy = interactionPolicy.base()
  policy.get("login")?.checks.add(
    new interactionPolicy.Check("signed_out", "The sign-in of this browser has ended", "login_required", async (ctx) => {
      const accountId = ctx.oidc.session?.accountId
      // no session: `no_session` prompts already; a login just submitted: it is the sign-in
      if (accountId === undefined || ctx.oidc.result?.["login"] !== undefined) return interactionPolicy.Check.NO_NEED_TO_PROMPT
      return (await signedInAccountId(ctx)) === accountId ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT
    }),
  )
  // An app the person allowed reading only (`mcp` refused) that asks for `mcp` again, as the 403
  // scope challenge tells it to, is asking the person for more: the consent page is shown again.
  // (The provider counts a refused scope as answered and would issue a read-only code at once.)
  policy.get("consent")?.checks.add(
    new interactionPolicy.Check("mcp_refused_before", "Full access was refused before and is asked for again", "consent_required", (ctx) => {
      // a consent just submitted: it is the answer
      if (ctx.oidc.result?.["consent"] !== undefined) return interactionPolicy.Check.NO_NEED_TO_PROMPT
      const asked = ctx.oidc.requestParamScopes.has(MCP_SCOPE)
      const refused = ctx.oidc.grant?.getRejectedResourceScope(mcpUrl).split(" ").includes(MCP_SCOPE) === true
      return asked && refused ? interactionPolicy.Check.REQUEST_PROMPT : interactionPolicy.Check.NO_NEED_TO_PROMPT
    }),
  )
  return policy
}

/** How a client may authenticate at the token and revocation endpoints (public clients: `none`). */
const CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_jwt", "client_secret_post", "private_key_jwt", "none"] as const

/** The OAuth endpoints, all under `/oauth/`. */
export const OAUTH_ROUTES = {
  authorization: "/oauth/authorize",
  token: "/oauth/token",
  registration: "/oauth/register",
  jwks: "/oauth/jwks",
  revocation: "/oauth/revoke",
  introspection: "/oauth/introspect",
  userinfo: "/oauth/userinfo",
  end_session: "/oauth/session/end",
  code_verification: "/oauth/device",
  device_authorization: "/oauth/device/auth",
  pushed_authorization_request: "/oauth/par",
  backchannel_authentication: "/oauth/backchannel",
  challenge: "/oauth/challenge",
  credential: "/oauth/credential",
} as const

/**
 * The OAuth 2.1 authorization server (oidc-provider): dynamic client registration, authorization
 * code with PKCE S256 for every client, resource indicators bound to `{mcp_url}`, JWT access
 * tokens of 15 minutes, rotating refresh tokens, state in the OAuthStore.
 */
export const createAuthorizationServer = (options: {
  readonly runtime: AppRuntime
  readonly publicUrl: string
  readonly keys: SharedKeys
  /** The account the browser of a request is signed in as (its `cs_session`), or undefined. */
  readonly signedInAccountId: (ctx: KoaContextWithOIDC) => Promise<string | undefined>
  /**
   * Whether a client may be described by a metadata document at an https URL, its client_id
   * (OAUTH_CLIENT_METADATA_DOCUMENTS): off where the service may not reach the internet, so that
   * clients are not told to use documents it cannot read and register themselves instead.
   */
  readonly clientMetadataDocuments: boolean
  /**
   * Tests only: how a client's metadata document is fetched (a test's own HTTPS server on this
   * machine). Default: `publicDocumentFetch`, the image fetcher's address policy: https only, no
   * credentials, every address public before connecting (loopback, private, link-local: no
   * request forgery into the service's network), 2.5 s at most, no redirect, 5 KB at most.
   */
  readonly clientMetadataFetch?: ClientMetadataFetch
  /** Tests only: what the service's own fetch of a metadata document trusts (a test server's certificate, its address as public). */
  readonly clientMetadataTrust?: Pick<PublicDocumentFetchOptions, "ca" | "isAllowedAddress">
}): Provider => {
  const { publicUrl } = options
  const mcpUrl = `${publicUrl}/mcp`
  /** Counts one fetch of a client's metadata document against `address`'s registration budget. */
  const withinBudget = async (address: string): Promise<boolean> => {
    const exit = await options.runtime.runPromiseExit(checkRegistrationLimit(address))
    if (Exit.isSuccess(exit)) return true
    const error = Option.getOrUndefined(Cause.findErrorOption(exit.cause))
    if (error?._tag === "RateLimited") return false
    // (a store that cannot answer: its own error, which the pages answer as 503)
    throw error ?? new Error("The client registration budget could not be read", { cause: exit.cause })
  }
  const verifyKeys = createLocalJWKSet({ keys: [...options.keys.signing.publics] })
  /** The claims of an access token this server signed for `/mcp` and that is still valid, verified as `/mcp` verifies it; else undefined. */
  const verifiedAccessToken = async (token: string): Promise<JWTPayload | undefined> => {
    try {
      return (await jwtVerify(token, verifyKeys, accessTokenChecks(publicUrl, mcpUrl))).payload
    } catch {
      return undefined
    }
  }
  /**
   * Whether the code or refresh token a token or revocation request presents was issued to
   * `clientId`, or, at the revocation endpoint, the access token (one this server signed for
   * `/mcp`, still valid, whose `client_id` is that client: no store is asked for it).
   */
  const issuedTo = async (params: Readonly<Record<string, unknown>>, clientId: string, revocation: boolean): Promise<boolean> => {
    const [model, id] =
      params["grant_type"] === "authorization_code" ? ["AuthorizationCode", params["code"]]
      : params["grant_type"] === "refresh_token" ? ["RefreshToken", params["refresh_token"]]
      : ["RefreshToken", params["token"]]
    if (typeof id !== "string" || id === "" || id.length > 4096) return false
    if (revocation && id.split(".").length === 3) return (await verifiedAccessToken(id))?.["client_id"] === clientId
    if (id.length > 512 || !isStorableText(id)) return false
    const found = await options.runtime.runPromiseExit(OAuthStore.use((store) => store.find(model, id)) as Effect.Effect<Option.Option<StoredPayload>>)
    return Exit.isSuccess(found) && Option.isSome(found.value) && found.value.value["clientId"] === clientId
  }
  /**
   * The client_ids whose documents a request has already asked for: the provider looks a client
   * up again as it answers a refusal, and that second look must neither fetch the document again
   * nor count a second time against the budget (it finds no client, as the first did).
   */
  const askedIn = new WeakMap<object, Set<string>>()
  const firstAskIn = (ctx: object, clientId: string): boolean => {
    const asked = askedIn.get(ctx)
    if (asked === undefined) askedIn.set(ctx, new Set([clientId]))
    else if (asked.has(clientId)) return false
    else asked.add(clientId)
    return true
  }
  const secure = publicUrl.startsWith("https://")
  /**
   * The authorization errors held back from an automatic redirect (RFC 9700 section 4.11.2): the
   * page that tells them instead links to where the redirect would have gone.
   */
  const heldBack = new WeakMap<object, { readonly href: string; readonly host: string }>()
  /**
   * Whether an authorization error may be sent back to the request's redirect URI at once, with
   * nothing shown (RFC 9700 section 4.11.2, "Authorization Server as Open Redirector"): anyone
   * may register a client with a redirect URI of their choosing, so an erroneous request (a
   * wrong scope or resource, `prompt=none`) would make a link to this service land on any site.
   * Sent at once only to a loopback address (a program on the person's own machine), after the
   * person went through the sign-in or consent pages of this flow (they name the app and where it
   * sends them), or to an app this browser's person allowed before.
   */
  const errorRedirectTrusted = (ctx: KoaContextWithOIDC, redirectUri: string): boolean => {
    if (withoutLoopbackPort(redirectUri) !== undefined) return true
    if (ctx.oidc.route === "resume") return true
    const clientId = ctx.oidc.client?.clientId
    return clientId !== undefined && ctx.oidc.entities.Session?.grantIdFor(clientId) !== undefined
  }
  const holdBackUntrustedRedirect = (ctx: KoaContextWithOIDC, error: { allow_redirect?: boolean; error?: unknown; error_description?: unknown }) => {
    if (error.allow_redirect !== true) return
    const params = (ctx.oidc.params ?? (ctx.method === "POST" ? ctx.oidc.body : ctx.query) ?? {}) as Record<string, unknown>
    const redirectUri = params["redirect_uri"]
    if (typeof redirectUri !== "string" || redirectUri === "" || errorRedirectTrusted(ctx, redirectUri)) return
    const target = URL.parse(redirectUri)
    if (target === null) return
    // (the answer the redirect would have carried, in the query: the person decides whether to go)
    for (const [name, value] of [["error", error.error], ["error_description", error.error_description], ["state", params["state"]], ["iss", publicUrl]] as const) {
      if (typeof value === "string" && value !== "") target.searchParams.set(name, value)
    }
    error.allow_redirect = false
    heldBack.set(error, { href: target.href, host: target.host })
  }
  /**
   * Refuses a token request naming a resource other than `{mcp_url}` with `invalid_target` while
   * its code or refresh token is still unused: the provider checks the resource only after using
   * it up, so a client that named a wrong one (`{mcp_url}/`, say) was left with nothing, and its
   * retry with the right one was taken for a stolen code or refresh token presented again, which
   * revokes the whole grant: the person had to connect the app again.
   */
  const refuseOtherResource = (ctx: KoaContextWithOIDC | undefined): void => {
    if (ctx?.oidc?.route !== "token") return
    const asked = ctx.oidc.params?.["resource"]
    const resources = asked === undefined ? [] : Array.isArray(asked) ? asked : [asked]
    if (resources.some((resource) => resource !== mcpUrl)) throw new errors.InvalidTarget(`The only resource here is ${mcpUrl}.`)
  }
  const configuration: Configuration = {
    adapter: oauthStoreAdapter(options.runtime),
    // every kept key is published and verifies; the active one signs (named in `jwt.sign` below)
    jwks: { keys: [...options.keys.signing.all] as never },
    cookies: {
      keys: [...options.keys.cookieKeys],
      long: { httpOnly: true, sameSite: "lax", secure, signed: true },
      short: { httpOnly: true, sameSite: "lax", secure, signed: true },
      names: { interaction: "cs_oauth_interaction", resume: "cs_oauth_resume", session: "cs_oauth_session" },
    },
    scopes: [...MCP_SCOPES, "offline_access"],
    // The provider's documented way to give a parameter a default (its validators run on every
    // authorization and pushed request, after the request's own checks): without an MCP scope
    // the request would end in access_denied with nothing to consent to.
    extraParams: {
      scope: (ctx, value, client) => {
        const scope = requestedScope(value, client.scope)
        ctx.oidc.params!["scope"] = scope === "" ? undefined : scope
      },
    },
    // A client registered for `mcp` may ask for `mcp:read` alone (`clientScope`). The provider's
    // documented way to amend a client's metadata as it is built: on registration, and each time a
    // stored client or a metadata document is read, so clients registered before are covered too.
    // (The registration response names `mcp:read` then, as RFC 7591 section 3.2.1 allows.)
    extraClientMetadata: {
      properties: ["scope"],
      validator: (_ctx, key, value, metadata) => {
        // (anything but a string: the provider's own validation refuses it)
        if (key === "scope" && typeof value === "string") metadata["scope"] = clientScope(value)
      },
    },
    responseTypes: ["code"],
    // How clients authenticate at the token endpoint, and so at the revocation endpoint (the
    // provider's client authentication is one for both). The provider's default list, named here
    // so that the metadata can say it for revocation too: unsaid, RFC 8414 makes it
    // `client_secret_basic` alone, and a public client (`none`) would read it may not revoke.
    clientAuthMethods: [...CLIENT_AUTH_METHODS],
    discovery: { claim_types_supported: ["normal"], revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS] },
    clientDefaults: {
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      id_token_signed_response_alg: "ES256",
    },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      // No DPoP (RFC 9449, on by default in the provider): /mcp takes bearer tokens and checks no
      // proof, so a token bound to a client's key would be advertised as sender-constrained and
      // honoured by anyone holding it (and a client using the DPoP scheme would be refused).
      dPoP: { enabled: false },
      registration: { enabled: true },
      // OAuth Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, the
      // revision the provider implements and names `draft-02`): a client whose client_id is an https URL is
      // described by the JSON document at that URL, fetched when it asks for a code and kept as
      // long as the document's Cache-Control says (five minutes to a day). The MCP authorization spec
      // prefers it to dynamic registration for clients the service has never met: nothing is
      // stored for them, and the person sees on the consent page where the client comes from.
      // A document is held to a registration's bounds (`checkClient`).
      clientIdMetadataDocument: {
        enabled: options.clientMetadataDocuments,
        ack: "draft-02",
        // kept at least five minutes, whatever the document's Cache-Control says (at most a day)
        cacheDuration: { min: 300, max: 86_400 },
        // Whether a document this instance does not hold may be fetched now. Where a flow begins
        // or goes on in a browser (an authorization request, its resumption, a pushed request,
        // and the sign-in and consent pages, `interactionAddress`), each fetch counts against the
        // asking address's hourly registration budget (OAUTH_REGISTRATION_LIMIT_PER_HOUR), as a
        // registration would: no address makes the service fetch page after page. At the token
        // and revocation endpoints only for a code or refresh token the service issued to that
        // client (or, to revoke it, an access token it signed for that client), uncounted: a
        // hosted client's backend refreshes all its people's tokens from a few addresses, and
        // must not be locked out by its own earlier sign-ins. Nowhere else.
        // A client_id is at most 255 characters (it is stored in grants and named in the activity
        // log) and written as a URL parser writes it back (`HTTPS://`, `:443` or `%7E` would make
        // one document several clients). A request fetches a document once at most (`firstAskIn`).
        // The provider's `ctx.ip` is the peer address `presentAsPublic` set: counted under the
        // client's key (an IPv6 client: its /56), as its registrations are.
        allowFetch: async (ctx: KoaContextWithOIDC | undefined, clientId) => {
          if (clientId.length > MAX_CLIENT_ID_URL_LENGTH || URL.parse(clientId)?.href !== clientId) return false
          if (ctx !== undefined && !firstAskIn(ctx, clientId)) return false
          const route = ctx?.oidc?.route
          if (ctx !== undefined && (route === "authorization" || route === "resume" || route === "pushed_authorization_request")) return withinBudget(clientKeyOf(ctx.ip))
          if (ctx !== undefined && (route === "token" || route === "revocation")) return issuedTo(ctx.oidc.params ?? {}, clientId, route === "revocation")
          const page = interactionAddress.getStore()
          return ctx === undefined && page !== undefined ? withinBudget(page) : false
        },
        allowClient: (_ctx, client) => {
          const metadata = client.metadata() as StoredPayload
          checkStorable("Client", metadata)
          checkClient(metadata)
          return true
        },
      },
      revocation: { enabled: true },
      rpInitiatedLogout: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => mcpUrl,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== mcpUrl) throw new errors.InvalidTarget(`The only resource here is ${mcpUrl}.`)
          return {
            scope: MCP_SCOPES.join(" "),
            audience: mcpUrl,
            accessTokenTTL: OAUTH_TTL.AccessToken,
            accessTokenFormat: "jwt",
            jwt: { sign: { alg: "ES256", kid: options.keys.signing.active.kid } },
          }
        },
      },
    },
    // The provider's own fetch would hand Node's fetch a dispatcher of the undici this service
    // loads (a major version Node's fetch cannot drive: every document failed to load) and checked
    // a socket's address only once TCP and TLS were done; documents are fetched as images are,
    // held to the same address policy before any connection (`publicDocumentFetch`). It serves
    // every URL the provider reads (a key set, a sector identifier document too): it reads as much
    // as the largest of `fetchResponseBodyLimits`, which then caps each purpose on its own.
    fetch: (options.clientMetadataFetch ?? publicDocumentFetch({ ...options.clientMetadataTrust, maxBytes: 64 * 1024 })) as NonNullable<Configuration["fetch"]>,
    // What the provider reads of a URL a client named (anyone may register a client): a metadata
    // document 5 KB, as the provider's default; a key set (`jwks_uri`, private_key_jwt clients)
    // 64 KB and a sector identifier document 16 KB, which the provider would read whole, however
    // large, into memory within its 2.5 s, at each token request that makes it fetch them.
    fetchResponseBodyLimits: { "client_id metadata document": 5 * 1024, jwks_uri: 64 * 1024, sector_identifier_uri: 16 * 1024 },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    interactions: { url: (_ctx, interaction) => `/oauth/interaction/${interaction.uid}`, policy: signInPolicy(options.signedInAccountId, mcpUrl) },
    routes: OAUTH_ROUTES,
    ttl: OAUTH_TTL,
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    // Refresh tokens rotate on every use. This is called once a refresh request is checked and
    // before its refresh token is used up, so it is also where a refresh that asks for a scope
    // the person never granted (or refused since: `mcp` after a read-only choice) is refused with
    // `invalid_scope` (RFC 6749 section 6). The provider checks the asked scope against the
    // refresh token's, which carries what the authorization request asked, and would answer 200
    // with a token of no scope at all, which a client takes for the access it asked for.
    rotateRefreshToken: (ctx) => {
      refuseOtherResource(ctx)
      const grant = ctx.oidc.entities.Grant
      if (typeof ctx.oidc.params?.["scope"] === "string" && grant !== undefined) {
        // (the grant's OpenID scopes name the MCP scopes too, as asked; only the resource's say
        // which of them the person granted, a refused `mcp` left out)
        const oidc = grant.getOIDCScope().split(" ").filter((scope) => !MCP_SCOPES.includes(scope))
        const granted = new Set([...oidc, ...grant.getResourceScope(mcpUrl).split(" ")])
        const ungranted = [...ctx.oidc.requestParamScopes].filter((scope) => !granted.has(scope))
        if (ungranted.length > 0) throw new errors.InvalidScope("the grant does not give the requested scope", ungranted.join(" "))
      }
      return true
    },
    expiresWithSession: () => false,
    // The grant id lets the resource server refuse a revoked connection at once; the client's
    // name goes into the activity log without another lookup.
    extraTokenClaims: (ctx, token) => ({
      gid: (token as { grantId?: string }).grantId,
      cname: ctx.oidc?.client?.clientName ?? (token as { clientId?: string }).clientId,
    }),
    // Browser-based MCP clients (the MCP Inspector's UI) call the token and registration endpoints cross-origin.
    clientBasedCORS: () => true,
    renderError: (ctx, out, error) => {
      ctx.type = "html"
      ctx.set("Cache-Control", "no-store")
      const back = heldBack.get(error)
      // (an error met once the provider had set a redirect's status, `prompt=none`'s: a page is no redirect)
      if (ctx.status < 400) ctx.status = 400
      const page = errorPage(
        String(out["error"] ?? "error"),
        String(out["error_description"] ?? "The request could not be completed."),
        back === undefined ? undefined : "This service does not send you on to an app you have not allowed before without asking.",
        back,
      )
      ctx.set("Content-Security-Policy", page.csp)
      ctx.body = page.html
    },
  }
  const provider = new Provider(publicUrl, configuration)
  // A loopback redirect URI takes any port at the time of the request (RFC 8252 §7.3), for every
  // client: the provider grants it to clients registered as `native` only, and the MCP clients
  // that need it register without an `application_type` (so as `web`). The provider's documented
  // way to widen its redirect check (its wildcard recipe) is this method of its Client class.
  const exactRedirect = provider.Client.prototype.redirectUriAllowed
  provider.Client.prototype.redirectUriAllowed = function redirectUriAllowed(this: InstanceType<Provider["Client"]>, value: string) {
    return exactRedirect.call(this, value) || loopbackRedirectAllowed(value, this.redirectUris ?? [])
  }
  // A code is used up (after its PKCE and redirect URI checks) before the provider checks the
  // resource of its exchange: `refuseOtherResource` first (refresh tokens: `rotateRefreshToken`).
  const consumeCode = provider.AuthorizationCode.prototype.consume
  provider.AuthorizationCode.prototype.consume = function consume(this: InstanceType<Provider["AuthorizationCode"]>) {
    refuseOtherResource((Provider as unknown as { readonly ctx: KoaContextWithOIDC | undefined }).ctx)
    return consumeCode.call(this)
  }
  // The `form_post` response mode (advertised in `response_modes_supported`) answers with a page
  // whose inline script posts the code to the redirect URI: the provider's pages get a CSP that
  // allows no script and no form target (`mountMcp`), which would leave the person on a blank
  // page and the client without its code. That page alone may run its one script (by its hash)
  // and post to the redirect URI's origin.
  provider.use(async (ctx, next) => {
    await next()
    const route = ctx.oidc?.route
    if ((route !== "authorization" && route !== "resume") || ctx.oidc?.params?.["response_mode"] !== "form_post" || typeof ctx.body !== "string") return
    const redirectUri = ctx.oidc.params["redirect_uri"]
    const target = typeof redirectUri === "string" ? URL.parse(redirectUri) : null
    const script = /<script>([\s\S]*?)<\/script>/.exec(ctx.body)?.[1]
    if (target === null || script === undefined || !ctx.response.is("html")) return
    const hash = createHash("sha256").update(script).digest("base64")
    ctx.set("Content-Security-Policy", `default-src 'none'; script-src 'sha256-${hash}'; form-action ${target.origin}; frame-ancestors 'none'; base-uri 'none'`)
  })
  // Revoking an access token (RFC 7009) ends its grant. The provider refuses every JWT at its
  // revocation endpoint (`unsupported_token_type`: it stores no structured token, so it cannot
  // find one to destroy, and no setting turns that off), and the token went on working for up to
  // 15 minutes, where a client revoking it expects it to stop. It refuses only after the client
  // has authenticated, so that refusal is answered here instead: a token this server signed for
  // `/mcp`, still valid and issued to the client revoking it, has its grant revoked (its refresh
  // tokens, codes and the grant itself, which `/mcp` checks on every call: the token stops at
  // once, as when a refresh token is revoked or the person disconnects the app on `/connect`),
  // and the answer is 200 as for any revocation. Another client's token, an expired or a foreign
  // one is a silent no-op (200, RFC 7009 section 2.2), as the provider answers for another
  // client's refresh token.
  provider.use(async (ctx, next) => {
    await next()
    if (ctx.oidc?.route !== "revocation" || ctx.status !== 400 || refusals.get(ctx.req) !== "unsupported_token_type") return
    const clientId = ctx.oidc.client?.clientId
    const token = ctx.oidc.params?.["token"]
    if (clientId === undefined || typeof token !== "string") return
    const claims = await verifiedAccessToken(token)
    const grantId = claims?.["gid"]
    if (claims?.["client_id"] === clientId && typeof grantId === "string" && isStorableText(grantId)) {
      const revoked = await options.runtime.runPromiseExit(
        OAuthStore.use((store) =>
          Effect.gen(function* () {
            const grant = yield* store.find("Grant", grantId)
            if (Option.isNone(grant) || grant.value["clientId"] !== clientId) return
            yield* revokeGrant(store, grantId)
          }),
        ),
      )
      if (Exit.isFailure(revoked)) {
        // the store cannot answer: 503 to retry, as the provider's own endpoints answer then
        const error = Option.getOrUndefined(Cause.findErrorOption(revoked.cause))
        refusals.set(ctx.req, "unavailable")
        ctx.status = 503
        ctx.set("Retry-After", "5")
        ctx.body = { error: "temporarily_unavailable", error_description: error instanceof Unavailable ? error.detail : "The token could not be revoked now; retry in a moment." }
        return
      }
      provider.emit("grant.revoked", ctx, grantId)
    }
    refusals.delete(ctx.req)
    ctx.status = 200
    ctx.body = ""
  })
  // The revocation endpoint's answers, its refusals (RFC 7009 section 2.2.1: RFC 6749 section
  // 5.2's JSON errors) included, are kept by no cache, as the token endpoint's are: the provider
  // sets `no-store` on the token endpoint only. (Inside the middleware above, which changes a
  // refusal's status and body but keeps this header.)
  provider.use(async (ctx, next) => {
    await next()
    if (ctx.oidc?.route === "revocation") ctx.set("Cache-Control", "no-store")
  })
  // Every request reaches the provider through `presentAsPublic`, which sets the forwarded headers.
  provider.proxy = true
  // each endpoint's refusal, by its OAuth error code, for the request's access line and metrics
  const events = provider as unknown as EventEmitter
  for (const event of OAUTH_ERROR_EVENTS) events.on(event, (ctx: KoaContextWithOIDC, error: { error?: unknown }) => noteRefusal(ctx.req, error))
  // (emitted by the authorization endpoint's error handler before it decides whether to redirect)
  events.on("authorization.error", holdBackUntrustedRedirect)
  events.on("server_error", (ctx: KoaContextWithOIDC, error: unknown) => {
    if (!(error instanceof Unavailable)) return refusals.set(ctx.req, "internal")
    // The database (clients, codes, tokens) cannot answer: a 503 to retry in a moment, as every
    // other endpoint answers then, not a 500 defect. A page (the authorization endpoint's) keeps
    // its body; an endpoint's JSON answer says so in OAuth's words.
    refusals.set(ctx.req, "unavailable")
    ctx.status = 503
    for (const [name, value] of Object.entries(problemHeaders(error))) ctx.set(name, value)
    if (!ctx.response.is("html")) ctx.body = { error: "temporarily_unavailable", error_description: error.detail }
  })
  return provider
}

/**
 * The provider's error events, one per endpoint: its error handlers emit them with the request's
 * context and the error (`server_error` for its own failures), after writing the answer themselves.
 */
const OAUTH_ERROR_EVENTS = [
  "authorization.error", "backchannel.error", "backchannel_authentication.error", "challenge.error", "code_verification.error",
  "credential.error", "device_authorization.error", "device_resume.error", "discovery.error", "end_session.error",
  "end_session_confirm.error", "end_session_success.error", "grant.error", "introspection.error", "jwks.error",
  "openid_credential_issuer.error", "pushed_authorization_request.error", "registration_create.error",
  "registration_delete.error", "registration_read.error", "registration_update.error", "revocation.error", "userinfo.error",
] as const

// the OAuth error code each refused request was answered with (the answer's own `error`)
const refusals = new WeakMap<IncomingMessage, string>()
const noteRefusal = (req: IncomingMessage, error: { error?: unknown }): void => {
  // the provider's own codes (`invalid_grant`, `invalid_client`, ...): a small fixed set, fit for a metric label
  refusals.set(req, typeof error.error === "string" && /^[a-z_]{1,64}$/.test(error.error) ? error.error : "invalid_request")
}

/** The OAuth error code the provider refused this request with, if it refused it. */
export const oauthRefusalOf = (req: IncomingMessage): string | undefined => refusals.get(req)
