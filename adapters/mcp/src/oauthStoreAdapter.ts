import { isStorableText, OAuthStore, type StoredPayload } from "@content-site/core"
import type { AppRuntime } from "@content-site/http"
import { Effect, Option } from "effect"
import { type Adapter, type AdapterFactory, type AdapterPayload, errors } from "oidc-provider"
import { LOOPBACK_HOSTS } from "./loopbackRedirects.ts"

const toPayload = (stored: Option.Option<StoredPayload>): AdapterPayload | undefined =>
  Option.isSome(stored) ? (stored.value as AdapterPayload) : undefined

// A JSON round trip: stores keep plain JSON, and a store in memory must not share objects with the provider.
const plain = (payload: AdapterPayload): StoredPayload => JSON.parse(JSON.stringify(payload)) as StoredPayload

/** The path of the first string (key or value) PostgreSQL cannot store, or undefined. */
export const unstorablePath = (value: unknown, path = ""): string | undefined => {
  if (typeof value === "string") return isStorableText(value) ? undefined : path || "(value)"
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unstorablePath(value[i], `${path}[${i}]`)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const at = path === "" ? key : `${path}.${key}`
      if (!isStorableText(key)) return at
      const found = unstorablePath(item, at)
      if (found !== undefined) return found
    }
  }
  return undefined
}

/** Largest client name, in characters: it is shown on pages and copied into activity entries. */
export const MAX_CLIENT_NAME_LENGTH = 100

/**
 * What the provider would store must be storable: a registration (model Client) carrying a NUL or
 * an unpaired surrogate in any field is `invalid_client_metadata`, anything else `invalid_request`;
 * both are 400 answers from the provider, never a driver error.
 */
export const checkStorable = (model: string, payload: StoredPayload): void => {
  const path = unstorablePath(payload)
  if (path === undefined) return
  const why = `${path} contains a NUL character or an unpaired surrogate`
  throw model === "Client" ? new errors.InvalidClientMetadata(why) : new errors.InvalidRequest(why)
}

/**
 * A registration's own bounds, checked as it is stored (so clients stored before are still read),
 * and each time a client's metadata document is read (`clientIdMetadataDocument`): `client_name`
 * at most 100 characters (`invalid_client_metadata`); a redirect URI over plain http only to a
 * loopback host, any other web redirect https (`invalid_redirect_uri`), so a code never crosses a
 * network in the clear.
 */
export const checkClient = (payload: StoredPayload): void => {
  const name = payload["client_name"]
  if (typeof name === "string" && [...name].length > MAX_CLIENT_NAME_LENGTH) {
    throw new errors.InvalidClientMetadata(`client_name must be at most ${MAX_CLIENT_NAME_LENGTH} characters long`)
  }
  for (const field of ["redirect_uris", "post_logout_redirect_uris"]) {
    const uris = payload[field]
    if (!Array.isArray(uris)) continue
    for (const uri of uris) {
      const parsed = typeof uri === "string" ? URL.parse(uri) : null
      if (parsed?.protocol === "http:" && !LOOPBACK_HOSTS.has(parsed.hostname)) {
        // the provider names the error after the field: invalid_redirect_uri
        throw new errors.InvalidClientMetadata(`${field} must use https, or http to a loopback address only (127.0.0.1, [::1], localhost)`)
      }
    }
  }
}

/** The models a token request redeems once, and how the provider names them. */
const GRANT_SOURCES = new Map([
  ["AuthorizationCode", "authorization code"],
  ["RefreshToken", "refresh token"],
  ["DeviceCode", "device code"],
  ["BackchannelAuthenticationRequest", "backchannel authentication request"],
])

/**
 * Revokes a grant: its tokens and codes, and the grant itself, which `/mcp` checks each access
 * token against (the token stops at once). One place for every way a grant ends here.
 */
export const revokeGrant = (store: OAuthStore["Service"], grantId: string) =>
  Effect.andThen(store.revokeByGrantId(grantId), store.destroy("Grant", grantId))

/**
 * The oidc-provider adapter over the core OAuthStore port: clients, grants, codes, tokens,
 * sessions and interactions live in the service's database, so every instance shares them.
 */
export const oauthStoreAdapter = (runtime: AppRuntime): AdapterFactory => (model: string): Adapter => {
  const run = <A>(f: (store: OAuthStore["Service"]) => Effect.Effect<A, unknown>) =>
    runtime.runPromise(OAuthStore.use(f) as Effect.Effect<A>)
  return {
    upsert: async (id, payload, expiresIn) => {
      const stored = plain(payload)
      checkStorable(model, stored)
      if (model === "Client") checkClient(stored)
      return run((s) => s.upsert(model, id, stored, expiresIn))
    },
    // An id that could never have been stored (a NUL in a client_id, a code, a cookie) is simply unknown.
    find: async (id) => (isStorableText(id) ? run((s) => s.find(model, id)).then(toPayload) : undefined),
    findByUid: async (uid) => (isStorableText(uid) ? run((s) => s.findByUid(model, uid)).then(toPayload) : undefined),
    findByUserCode: async (code) => (isStorableText(code) ? run((s) => s.findByUserCode(model, code)).then(toPayload) : undefined),
    // The provider checks `consumed` on what it found and then consumes: two redemptions of one code or
    // refresh token at once (at two instances) both pass that check; the one that did not consume it is
    // refused, and its grant revoked, as the provider does for one presented again after its use (a
    // code or refresh token used twice may have been stolen: every token of the grant stops working).
    consume: async (id) => {
      if (!isStorableText(id)) return
      const consumed = await run((s) => s.consume(model, id))
      if (consumed || !GRANT_SOURCES.has(model)) return
      const grantId = Option.getOrUndefined(await run((s) => s.find(model, id)))?.["grantId"]
      if (typeof grantId === "string" && isStorableText(grantId)) await run((s) => revokeGrant(s, grantId))
      throw new errors.InvalidGrant(`${GRANT_SOURCES.get(model)} already used`)
    },
    destroy: async (id) => (isStorableText(id) ? run((s) => s.destroy(model, id)) : undefined),
    revokeByGrantId: async (grantId) => (isStorableText(grantId) ? run((s) => s.revokeByGrantId(grantId)) : undefined),
  }
}
