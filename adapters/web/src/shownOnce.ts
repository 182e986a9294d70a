import { OAuthStore, type StoredPayload } from "@content-site/core"
import type { HttpDeps } from "@content-site/http"
import { Option } from "effect"
import type { ParameterizedContext } from "koa"
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"
import { cookieOf, SESSION_COOKIE, token, type WebSession } from "@content-site/http"

/** The OAuthStore model a secret waits in between its POST and the page that shows it. */
export const SHOWN_ONCE_MODEL = "WebShownOnce"
/** How long a secret waits to be shown. */
export const SHOWN_ONCE_TTL_SECONDS = 10 * 60

const ID = /^[A-Za-z0-9_-]{16,64}$/

/**
 * The encryption key: derived from the session cookie's value, which the server never stores (it
 * keeps only a hash), so a copy of the store cannot read a waiting secret.
 */
const keyOf = (cookieValue: string): Buffer => createHash("sha256").update(`shown-once:${cookieValue}`).digest()

/**
 * Holds a secret (a new API key) for the redirect that follows its creation (post/redirect/get),
 * encrypted, bound to this session, for a few minutes at most. Returns the id the page address
 * carries; `takeShownOnce` hands the secret out once and deletes it.
 */
export const holdShownOnce = async (ctx: ParameterizedContext, deps: HttpDeps, session: WebSession, secret: StoredPayload): Promise<string> => {
  const cookie = cookieOf(ctx, SESSION_COOKIE)
  if (cookie === undefined) throw new Error("holdShownOnce needs the request's session cookie")
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", keyOf(cookie), iv)
  const data = Buffer.concat([cipher.update(JSON.stringify(secret), "utf8"), cipher.final()])
  const id = token(18)
  const payload = { iv: iv.toString("base64url"), data: data.toString("base64url"), tag: cipher.getAuthTag().toString("base64url") }
  await deps.runtime.runPromise(OAuthStore.use((store) => store.upsert(SHOWN_ONCE_MODEL, `${session.key}:${id}`, payload, SHOWN_ONCE_TTL_SECONDS)))
  return id
}

/** The held secret, once: it is deleted as it is read. Null when already shown, expired or foreign. */
export const takeShownOnce = async (ctx: ParameterizedContext, deps: HttpDeps, session: WebSession, id: string | undefined): Promise<StoredPayload | null> => {
  const cookie = cookieOf(ctx, SESSION_COOKIE)
  if (id === undefined || !ID.test(id) || cookie === undefined) return null
  const key = `${session.key}:${id}`
  const found = await deps.runtime.runPromise(OAuthStore.use((store) => store.find(SHOWN_ONCE_MODEL, key)))
  if (Option.isNone(found)) return null
  // of requests that found it at once (on any instance), only the one that consumes it shows it
  const mine = await deps.runtime.runPromise(OAuthStore.use((store) => store.consume(SHOWN_ONCE_MODEL, key)))
  await deps.runtime.runPromise(OAuthStore.use((store) => store.destroy(SHOWN_ONCE_MODEL, key)))
  if (!mine) return null
  const { iv, data, tag } = found.value as Record<string, unknown>
  if (typeof iv !== "string" || typeof data !== "string" || typeof tag !== "string") return null
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyOf(cookie), Buffer.from(iv, "base64url"))
    decipher.setAuthTag(Buffer.from(tag, "base64url"))
    const text = Buffer.concat([decipher.update(Buffer.from(data, "base64url")), decipher.final()]).toString("utf8")
    return JSON.parse(text) as StoredPayload
  } catch {
    return null
  }
}
