import { type AccountRecord, AccountRepository, type Caller, isCoreError, namedAction, recordActivity, toProblem, userPrincipal, verifyCredentials } from "@content-site/core"
import { clientAddress, displayName, type HttpDeps, noteAccount, notesOf, problemHeaders, requestIdOf, signedInAccount, startSession, strictQuery } from "@content-site/http"
import { Cause, Exit, Option } from "effect"
import type { Context, Middleware } from "koa"
import { createHmac, timingSafeEqual } from "node:crypto"
import type Provider from "oidc-provider"
import { interactionAddress, MCP_READ_SCOPE, MCP_SCOPE, presentAsPublic } from "./authorizationServer.ts"
import { type ClientView, consentPage, errorPage, type Page, signInPage } from "./pages.ts"

const MAX_FORM_BYTES = 16 * 1024

const readForm = async (ctx: Context): Promise<URLSearchParams> => {
  if (!ctx.is("application/x-www-form-urlencoded")) return new URLSearchParams()
  const chunks: Array<Buffer> = []
  let size = 0
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length
    if (size > MAX_FORM_BYTES) break
    chunks.push(chunk as Buffer)
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"))
}

/** A refused interaction's code, by its status, for its access line and the refusals metric (the answer is a page). */
const REFUSAL_CODES: Record<number, string> = { 400: "invalid_request", 401: "unauthenticated", 403: "invalid_request", 429: "rate_limited" }

const send = (ctx: Context, page: Page, status = 200) => {
  ctx.status = status
  if (status >= 400) notesOf(ctx).problemCode = REFUSAL_CODES[status] ?? "internal"
  ctx.set("Cache-Control", "no-store")
  ctx.set("Content-Security-Policy", page.csp)
  ctx.type = "html"
  ctx.body = page.html
}

/**
 * Whether the app asked for full access (`mcp`; asking for no scope is asking for it, see
 * `requestedScope`): the owner then picks full access or reading only. Otherwise it asked for
 * `mcp:read` alone and can be granted nothing more.
 */
const fullAccessAsked = (params: Record<string, unknown>): boolean =>
  typeof params["scope"] === "string" && params["scope"].split(" ").includes(MCP_SCOPE)

/**
 * What these pages log, in the web pages' naming (method and route, then what it did): they are
 * web pages a person acts on, so the entries have channel `web` and the person as actor, like a
 * sign-in on `/` and an agent revoked on `/connect`. The access granted is in the name because an
 * entry has no field for it; an Allow's name is followed by the client's in curly quotes
 * (`namedAction`), which the pages' "Changes only" filter leaves out when it matches the fixed set
 * of names (the web adapter's `activityWords.ts` tells them in words).
 */
const AGENT_SIGN_IN_ACTION = "POST /oauth/interaction/{uid}/login (sign in)"
/** The logged action of a sign-in here with an account's email and a wrong password, as `/` logs its own: shown to the account's owner. */
const AGENT_FAILED_SIGN_IN_ACTION = "POST /oauth/interaction/{uid}/login (sign in, wrong password)"
/** The logged action of an Allow on the consent page, by the access granted. */
const AGENT_ALLOWED_ACTIONS = {
  write: "POST /oauth/interaction/{uid}/confirm (allow mcp)",
  read: "POST /oauth/interaction/{uid}/confirm (allow mcp:read)",
} as const

const INTERACTION_PATH = /^\/oauth\/interaction\/([A-Za-z0-9_-]{1,128})(?:\/(login|confirm))?$/

/**
 * The OAuth interaction pages: sign-in (email and password, or "Continue as" with a web session)
 * and consent (Allow / Deny). Plain HTML forms with a CSRF token bound to the interaction.
 */
export const interactionPages = (options: {
  /** The authorization server in force (it is rebuilt when the signing keys rotate). */
  readonly provider: () => Provider
  readonly deps: HttpDeps
  readonly csrfKey: string
}): Middleware => {
  const { provider, deps } = options
  const runtime = deps.runtime
  const mcpUrl = `${deps.publicUrl}/mcp`

  const csrfOf = (uid: string) => createHmac("sha256", options.csrfKey).update(`interaction-csrf:${uid}`).digest("base64url")
  const csrfMatches = (uid: string, presented: string | null) => {
    const expected = Buffer.from(csrfOf(uid))
    const given = Buffer.from(presented ?? "")
    return given.length === expected.length && timingSafeEqual(given, expected)
  }

  /** What the pages say about the client; undefined when it cannot be read now (its metadata document). */
  const clientView = async (clientId: string, redirectUri: string | undefined, address: string): Promise<ClientView | undefined> => {
    // (a metadata document read here counts against the person's address, `interactionAddress`)
    // (the provider's refusal of the client, its document unreadable or over the budget: undefined;
    // a store that cannot answer: its error, for the error funnel)
    const client = await interactionAddress.run(address, () => provider().Client.find(clientId)).catch((error: unknown) => {
      if (isCoreError(error)) throw error
      return null
    })
    if (client === null) return undefined
    let redirectHost = "(unknown)"
    try {
      if (redirectUri !== undefined) {
        const url = new URL(redirectUri)
        redirectHost = url.host === "" ? `${url.protocol}` : url.host
      }
    } catch {
      // An unparseable redirect URI never gets this far: the provider validated it.
    }
    // a client described by its metadata document: its client_id is the document's https URL
    const publishedBy = (client as { clientIdMetadataDocument?: unknown } | undefined)?.clientIdMetadataDocument === true ? URL.parse(clientId)?.host : undefined
    return { name: displayName(client?.clientName ?? clientId), redirectUri, redirectHost, ...(publishedBy !== undefined ? { publishedBy } : {}) }
  }

  const accountOf = async (accountId: string): Promise<AccountRecord | null> => {
    const exit = await runtime.runPromiseExit(AccountRepository.use((accounts) => accounts.get(accountId)))
    return Exit.isSuccess(exit) ? exit.value : null
  }
  const accountEmail = async (accountId: string): Promise<string> => (await accountOf(accountId))?.email ?? accountId

  /**
   * One activity entry for what the person did here, as the web pages record theirs. A log that
   * cannot be written does not undo the sign-in or the connection (the pages do the same).
   */
  const logDone = async (ctx: Context, account: AccountRecord, action: string, startedAt: number): Promise<void> => {
    const caller: Caller = { ...userPrincipal(account), channel: "web", requestId: requestIdOf(ctx), action, startedAt }
    await runtime.runPromise(recordActivity(caller, { ok: true, httpStatus: ctx.status })).catch(() => undefined)
  }

  const signedIn = (ctx: Context): Promise<AccountRecord | null> => signedInAccount(ctx, deps).catch(() => null)

  /**
   * Ends the provider's session of another account that an interaction began in: the session is
   * destroyed and the interaction no longer names it, so that resuming starts a new session.
   */
  const endProviderSession = async (uid: string, sessionCookie: string | undefined): Promise<void> => {
    const interaction = await provider().Interaction.find(uid)
    if (interaction?.session !== undefined) {
      delete interaction.session
      await interaction.persist()
    }
    if (sessionCookie !== undefined) await (await provider().Session.find(sessionCookie))?.destroy()
  }

  const pages: Middleware = async (ctx, next) => {
    const match = INTERACTION_PATH.exec(ctx.path)
    if (match === null) return next()
    strictQuery(ctx.querystring, [])
    const uid = match[1] as string
    const address = clientAddress(ctx)
    presentAsPublic(ctx.req, deps.publicUrl, address)
    const step = match[2]
    let details: Awaited<ReturnType<Provider["interactionDetails"]>>
    try {
      details = await provider().interactionDetails(ctx.req, ctx.res)
    } catch (error) {
      // (a store that cannot answer, the database away: its error, a 503 page below; the link is
      // not what failed, and the person may simply reload)
      if (isCoreError(error)) throw error
      return send(ctx, errorPage("This sign-in link has expired or was already used.", "Connections must be completed within an hour, in the same browser."), 400)
    }
    if (details.uid !== uid) return send(ctx, errorPage("This sign-in link does not match your browser session.", "Start again from your app."), 400)
    const params = details.params as { client_id?: string; redirect_uri?: string }
    const client = await clientView(String(params.client_id ?? ""), params.redirect_uri, address)
    if (client === undefined) return send(ctx, errorPage("This app could not be identified just now.", "Its description could not be read. Try again later, or start again from your app."), 400)
    const csrf = csrfOf(uid)
    const promptName = details.prompt.name

    if (ctx.method === "GET" && step === undefined) {
      if (promptName === "login") {
        const account = await signedIn(ctx)
        return send(ctx, signInPage({ uid, csrf, client, signedInEmail: account?.email }))
      }
      const accountId = details.session?.accountId
      if (accountId === undefined) return send(ctx, errorPage("You are not signed in.", "Start again from your app."), 400)
      // (the access line names the account whose consent is asked)
      noteAccount(ctx, accountId)
      return send(ctx, consentPage({ uid, csrf, client, accountEmail: await accountEmail(accountId), fullAccessAsked: fullAccessAsked(details.params) }))
    }

    if (ctx.method !== "POST" || step === undefined) {
      notesOf(ctx).problemCode = "method_not_allowed"
      ctx.status = 405
      ctx.set("Allow", step === undefined ? "GET" : "POST")
      return
    }
    const startedAt = Date.now()
    const form = await readForm(ctx)
    if (!csrfMatches(uid, form.get("csrf"))) {
      return send(ctx, errorPage("The form was out of date.", "Reload the page and try again."), 403)
    }

    if (step === "login") {
      if (promptName !== "login") return ctx.redirect(`/oauth/interaction/${uid}`)
      let account: AccountRecord | null = null
      if (form.get("continue") === "session") account = await signedIn(ctx)
      if (account === null) {
        const email = form.get("email") ?? ""
        const exit = await runtime.runPromiseExit(verifyCredentials(email, form.get("password") ?? "", address))
        if (Exit.isFailure(exit)) {
          const error = Option.getOrUndefined(Cause.findErrorOption(exit.cause))
          if (error !== undefined && isCoreError(error) && error._tag === "RateLimited") {
            // Refused for a limit, so still logged, as `/` and the API log theirs: no account is
            // known before the address's budget is checked, so with none, counted against the address.
            const refused = { accountId: null, actor: null, channel: "web", requestId: requestIdOf(ctx), action: AGENT_SIGN_IN_ACTION, startedAt, address } as const
            await runtime.runPromise(recordActivity(refused, { ok: false, httpStatus: 429, errorCode: "rate_limited" })).catch(() => undefined)
            ctx.set("Retry-After", String(error.retryAfterSeconds))
            return send(ctx, signInPage({ uid, csrf, client, email, error: `Too many failed sign-ins; try again in ${error.retryAfterSeconds} seconds.` }), 429)
          }
          if (error !== undefined && isCoreError(error) && error._tag === "InvalidRequest") {
            return send(ctx, signInPage({ uid, csrf, client, error: "That is not an email address that can have an account." }), 400)
          }
          if (error !== undefined && isCoreError(error) && error._tag === "Unauthenticated") {
            // A wrong password for an account's email is shown to its owner, as on `/`: guessing
            // here leaves the same trace. Not awaited: the answer takes as long whether the email
            // is known or not.
            if (error.attemptedAccountId !== undefined) {
              const attempt = { accountId: error.attemptedAccountId, actor: null, channel: "web", requestId: requestIdOf(ctx), action: AGENT_FAILED_SIGN_IN_ACTION, startedAt } as const
              void runtime.runPromise(recordActivity(attempt, { ok: false, httpStatus: 401, errorCode: "unauthenticated" })).catch(() => undefined)
            }
            return send(ctx, signInPage({ uid, csrf, client, email, error: "Wrong email or password." }), 401)
          }
          throw error ?? new Error(Cause.pretty(exit.cause))
        }
        account = exit.value
        // One sign-in per browser: the password typed here signs the web pages in as well, and
        // signing out there ends this sign-in (see the provider's `signed_out` login check).
        await startSession(ctx, deps, account.id)
      }
      noteAccount(ctx, account.id)
      // The provider's own session may still be another account's (that sign-in ended on the
      // pages and this person signed in since): the provider would answer this sign-in with a
      // logout page of its own that posts to its end-session endpoint, which this service does
      // not serve, and the person would be left without a code. That session ends here instead;
      // this sign-in begins a new one, with none of the other account's consents.
      const previous = details.session
      if (previous?.accountId !== undefined && previous.accountId !== account.id) await endProviderSession(uid, previous.cookie)
      const target = await provider().interactionResult(ctx.req, ctx.res, { login: { accountId: account.id } }, { mergeWithLastSubmission: false })
      ctx.status = 303
      ctx.redirect(target)
      // Like `/`, a sign-in is logged once it succeeded ("Continue as" included: the person chose
      // the account for this agent), and a wrong password for an account's email above.
      return logDone(ctx, account, AGENT_SIGN_IN_ACTION, startedAt)
    }

    // step === "confirm"
    if (promptName !== "consent" || details.session?.accountId === undefined) return ctx.redirect(`/oauth/interaction/${uid}`)
    noteAccount(ctx, details.session.accountId)
    // Deny creates nothing and is not logged, like a confirmation the person cancels on the pages.
    if (form.get("decision") !== "allow") {
      const target = await provider().interactionResult(
        ctx.req,
        ctx.res,
        { error: "access_denied", error_description: "The account owner denied access." },
        { mergeWithLastSubmission: false },
      )
      ctx.status = 303
      return ctx.redirect(target)
    }
    const accountId = details.session.accountId
    // An Allow counts only while the browser still holds a live sign-in of that account: after a
    // sign-out on the pages (or another account's sign-in) no code is given without the password.
    if ((await signedIn(ctx))?.id !== accountId) {
      return send(ctx, errorPage("You are no longer signed in.", "Start again from your app."), 400)
    }
    const account = await accountOf(accountId)
    const grant = details.grantId
      ? ((await provider().Grant.find(details.grantId)) ?? new (provider().Grant)({ accountId, clientId: String(params.client_id) }))
      : new (provider().Grant)({ accountId, clientId: String(params.client_id) })
    const missing = details.prompt.details as {
      missingOIDCScope?: ReadonlyArray<string>
      missingOIDCClaims?: ReadonlyArray<string>
      missingResourceScopes?: Record<string, ReadonlyArray<string>>
    }
    if (missing.missingOIDCScope && missing.missingOIDCScope.length > 0) grant.addOIDCScope(missing.missingOIDCScope.join(" "))
    if (missing.missingOIDCClaims && missing.missingOIDCClaims.length > 0) grant.addOIDCClaims([...missing.missingOIDCClaims])
    // `mcp` only when the app asked for it and the person left the choice on full access; every
    // other scope asked for (`mcp:read`, always asked for with `mcp`) is granted.
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      const others = scopes.filter((x) => x !== MCP_SCOPE)
      if (indicator === mcpUrl && others.length > 0) grant.addResourceScope(indicator, others.join(" "))
    }
    const granted = !fullAccessAsked(details.params) || form.get("access") === "read" ? "read" : "write"
    if (!fullAccessAsked(details.params)) {
      // Read-only asked for: `mcp` is neither granted nor refused, so that a later request of the
      // app for full access asks the person again. A posted `access=write` changes nothing.
      grant.addResourceScope(mcpUrl, MCP_READ_SCOPE)
    } else if (form.get("access") === "read") {
      // Read-only chosen: `mcp:read` granted and `mcp` refused, so the consent is complete (no new
      // prompt) and the access token carries `mcp:read` only.
      grant.addResourceScope(mcpUrl, MCP_READ_SCOPE)
      grant.rejectResourceScope(mcpUrl, MCP_SCOPE)
    } else {
      // Full access; an earlier read-only choice for this client is lifted.
      const rejected = (grant as { rejected?: { resources?: Record<string, string> } }).rejected
      if (rejected?.resources?.[mcpUrl] !== undefined) delete rejected.resources[mcpUrl]
      grant.addResourceScope(mcpUrl, MCP_SCOPE)
    }
    const grantId = await grant.save()
    const target = await provider().interactionResult(ctx.req, ctx.res, { consent: { grantId } }, { mergeWithLastSubmission: true })
    ctx.status = 303
    ctx.redirect(target)
    if (account !== null) await logDone(ctx, account, namedAction(AGENT_ALLOWED_ACTIONS[granted], client.name), startedAt)
  }

  // A refusal of the service's own on these pages (a store that cannot answer, a limit, a query
  // they do not take) is a page too, as the web pages answer theirs: the problem's status, its
  // sentence and its headers (`Retry-After`). A defect goes on to the error funnel (a 500, logged).
  return async (ctx, next) => {
    try {
      return await pages(ctx, next)
    } catch (error) {
      if (!isCoreError(error) || !INTERACTION_PATH.test(ctx.path) || ctx.headerSent) throw error
      const problem = toProblem(error, requestIdOf(ctx), deps.publicUrl)
      for (const [name, value] of Object.entries(problemHeaders(error))) ctx.set(name, value)
      const advice = problem.status >= 500 || problem.status === 429 ? "Reload this page in a few seconds: the connection goes on from where it was." : undefined
      send(ctx, errorPage(problem.title, problem.detail, advice), problem.status)
      notesOf(ctx).problemCode = problem.code
    }
  }
}
