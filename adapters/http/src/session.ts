/**
 * The one sign-in of a browser: a session cookie (`cs_session`) whose hash keys a record in the
 * OAuthStore. The web pages sign in and out with it, and the OAuth authorization server accepts a
 * browser as signed in only while it holds a live session of the same account, so signing out of
 * the pages ends the OAuth sign-in too.
 */
import { AccountRepository, type AccountRecord, OAuthStore, type StoredPayload } from "@content-site/core"
import type { HttpDeps } from "./deps.ts"
import { noteAccount } from "./notes.ts"
import { Effect, Option } from "effect"
import type { ParameterizedContext } from "koa"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"

/** The session cookie's name (contract: the web pages' sign-in). */
export const SESSION_COOKIE = "cs_session"
/** The pre-sign-in CSRF cookie (double submit for the sign-in form). */
export const PRE_CSRF_COOKIE = "cs_csrf"
/** The OAuthStore model web sessions are kept under. */
export const SESSION_MODEL = "WebSession"
/** How long a session lives: from its sign-in, however it is used meanwhile. */
export const SESSION_TTL_SECONDS = 7 * 24 * 60 * 60

/** Seconds a session signed in at `createdAt` (ms) has left (0: it has ended). */
const secondsLeft = (createdAt: number): number => Math.max(0, Math.floor((createdAt + SESSION_TTL_SECONDS * 1000 - Date.now()) / 1000))

/** A message shown once on the next page (post/redirect/get). */
export interface Flash {
  readonly kind: "success" | "error" | "info"
  readonly message: string
  readonly details?: ReadonlyArray<string>
  /** A link shown after the message (for example to the revision an edit was merged with). */
  readonly link?: { readonly href: string; readonly text: string }
}

/** A signed-in web session. */
export interface WebSession {
  /** The store key (a hash of the cookie value; the cookie itself is never stored). */
  readonly key: string
  readonly accountId: string
  readonly csrf: string
  readonly createdAt: number
  readonly flash: Flash | null
}

/** A random token in base64url. */
export const token = (bytes = 32): string => randomBytes(bytes).toString("base64url")

/** The store key of a session cookie value: a leaked store does not hand out live sessions. */
const keyOf = (cookieValue: string): string => createHash("sha256").update(cookieValue).digest("base64url")

const COOKIE_VALUE = /^[A-Za-z0-9_-]{20,100}$/

const secureOf = (deps: HttpDeps): boolean => deps.publicUrl.startsWith("https:")

/** Writes a cookie by hand so `Secure` follows PUBLIC_URL even behind a TLS-terminating proxy. */
export const setCookie = (ctx: ParameterizedContext, deps: HttpDeps, name: string, value: string, maxAgeSeconds: number): void => {
  const parts = [`${name}=${value}`, "Path=/", "HttpOnly", "SameSite=Lax", `Max-Age=${maxAgeSeconds}`]
  if (secureOf(deps)) parts.push("Secure")
  ctx.append("Set-Cookie", parts.join("; "))
}

/** A cookie of this service's own token shape (20 to 100 base64url characters), or undefined. */
export const cookieOf = (ctx: ParameterizedContext, name: string): string | undefined => {
  // Unsigned on purpose (the value is a random token looked up by hash): read it as such even in an
  // app that has cookie keys, such as the OAuth provider's, whose default would demand a signature.
  const value = ctx.cookies.get(name, { signed: false })
  return value !== undefined && COOKIE_VALUE.test(value) ? value : undefined
}

const payloadOf = (s: WebSession): StoredPayload => ({
  accountId: s.accountId,
  csrf: s.csrf,
  createdAt: s.createdAt,
  flash: s.flash as unknown as StoredPayload,
})

const sessionOf = (key: string, p: StoredPayload): WebSession | null => {
  const { accountId, csrf, createdAt, flash } = p as Record<string, unknown>
  if (typeof accountId !== "string" || typeof csrf !== "string" || typeof createdAt !== "number") return null
  return { key, accountId, csrf, createdAt, flash: (flash as Flash | null | undefined) ?? null }
}

/** Reads the session of a request, or null. Memoised on `ctx.state`. */
export const readSession = async (ctx: ParameterizedContext, deps: HttpDeps): Promise<WebSession | null> => {
  const state = ctx.state as { webSession?: WebSession | null }
  if (state.webSession !== undefined) return state.webSession
  const value = cookieOf(ctx, SESSION_COOKIE)
  let session: WebSession | null = null
  if (value !== undefined) {
    const key = keyOf(value)
    const found = await deps.runtime.runPromise(OAuthStore.use((store) => store.find(SESSION_MODEL, key)))
    session = Option.isSome(found) ? sessionOf(key, found.value) : null
    // A session ends 7 days after its sign-in, whatever wrote its record since (a message, say).
    if (session !== null && secondsLeft(session.createdAt) === 0) session = null
  }
  state.webSession = session
  return session
}

/**
 * Saves a session's changed fields (flash), keeping its expiry: 7 days after its sign-in, never later.
 * Only a session still in the store is rewritten: a request that read it before a sign-out (on any
 * instance) must not bring it back as it leaves its message.
 */
export const saveSession = async (deps: HttpDeps, session: WebSession): Promise<void> => {
  const left = secondsLeft(session.createdAt)
  if (left === 0) return
  // one statement: a sign-out landing between a read and a write would be undone by an upsert
  await deps.runtime.runPromise(OAuthStore.use((store) => store.replace(SESSION_MODEL, session.key, payloadOf(session), left)))
}

/**
 * Starts a new session for an account: a fresh id (never the one the browser came with, so a
 * planted cookie cannot be fixed), a fresh CSRF token, and the old session, if any, destroyed.
 */
export const startSession = async (ctx: ParameterizedContext, deps: HttpDeps, accountId: string): Promise<WebSession> => {
  await endSession(ctx, deps)
  const value = token()
  const session: WebSession = { key: keyOf(value), accountId, csrf: token(), createdAt: Date.now(), flash: null }
  await deps.runtime.runPromise(OAuthStore.use((store) => store.upsert(SESSION_MODEL, session.key, payloadOf(session), SESSION_TTL_SECONDS)))
  setCookie(ctx, deps, SESSION_COOKIE, value, SESSION_TTL_SECONDS)
  ;(ctx.state as { webSession?: WebSession | null }).webSession = session
  return session
}

/** Destroys the request's session, if any, and clears the cookie. */
export const endSession = async (ctx: ParameterizedContext, deps: HttpDeps): Promise<void> => {
  const value = cookieOf(ctx, SESSION_COOKIE)
  if (value !== undefined) {
    await deps.runtime.runPromise(OAuthStore.use((store) => store.destroy(SESSION_MODEL, keyOf(value))))
    setCookie(ctx, deps, SESSION_COOKIE, "", 0)
  }
  ;(ctx.state as { webSession?: WebSession | null }).webSession = null
}

/** Sets a one-time message for the next page. */
export const setFlash = (deps: HttpDeps, session: WebSession, flash: Flash): Promise<void> => saveSession(deps, { ...session, flash })

/** Takes the one-time message, if any (it is shown once). */
export const takeFlash = async (deps: HttpDeps, session: WebSession): Promise<Flash | null> => {
  if (session.flash === null) return null
  await saveSession(deps, { ...session, flash: null })
  return session.flash
}

/** The CSRF token for the sign-in form: a double-submit cookie, created when missing. */
export const preSessionCsrf = (ctx: ParameterizedContext, deps: HttpDeps): string => {
  const existing = cookieOf(ctx, PRE_CSRF_COOKIE)
  if (existing !== undefined) return existing
  const fresh = token()
  setCookie(ctx, deps, PRE_CSRF_COOKIE, fresh, 2 * 60 * 60)
  return fresh
}

const sameToken = (a: string, b: string): boolean => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y)
}

/** Whether a posted CSRF token matches the session's (or, before sign-in, the double-submit cookie). */
export const csrfOk = (ctx: ParameterizedContext, session: WebSession | null, posted: unknown): boolean => {
  if (typeof posted !== "string") return false
  if (session !== null) return sameToken(session.csrf, posted)
  const cookie = cookieOf(ctx, PRE_CSRF_COOKIE)
  return cookie !== undefined && sameToken(cookie, posted)
}

/**
 * The account signed in on this request (session cookie `cs_session`), or null. Shared with the
 * MCP adapter's OAuth sign-in so a person already signed in is not asked again.
 */
export const signedInAccount = async (ctx: ParameterizedContext, deps: HttpDeps): Promise<AccountRecord | null> => {
  const session = await readSession(ctx, deps)
  if (session === null) return null
  const account = await deps.runtime.runPromise(
    AccountRepository.use((accounts) => accounts.get(session.accountId)).pipe(
      Effect.map(Option.some),
      Effect.catchTag("NotFound", () => Effect.succeed(Option.none<AccountRecord>())),
    ),
  )
  if (Option.isSome(account)) noteAccount(ctx, account.value.id)
  return Option.getOrNull(account)
}
