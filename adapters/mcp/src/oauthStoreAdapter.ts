import { isStorableText, OAuthStore, type StoredPayload } from "@content-site/core"
import type { AppRuntime } from "@content-site/http"
import { Effect, Option } from "effect"
import { type Adapter, type AdapterFactory, type AdapterPayload, errors } from "oidc-provider"

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

/**
 * What the provider would store must be storable: a registration (model Client) carrying a NUL or
 * an unpaired surrogate in any field is `invalid_client_metadata`, anything else `invalid_request`;
 * both are 400 answers from the provider, never a driver error.
 */
const checkStorable = (model: string, payload: StoredPayload): void => {
  const path = unstorablePath(payload)
  if (path === undefined) return
  const why = `${path} contains a NUL character or an unpaired surrogate`
  throw model === "Client" ? new errors.InvalidClientMetadata(why) : new errors.InvalidRequest(why)
}

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
      return run((s) => s.upsert(model, id, stored, expiresIn))
    },
    // An id that could never have been stored (a NUL in a client_id, a code, a cookie) is simply unknown.
    find: async (id) => (isStorableText(id) ? run((s) => s.find(model, id)).then(toPayload) : undefined),
    findByUid: async (uid) => (isStorableText(uid) ? run((s) => s.findByUid(model, uid)).then(toPayload) : undefined),
    findByUserCode: async (code) => (isStorableText(code) ? run((s) => s.findByUserCode(model, code)).then(toPayload) : undefined),
    consume: async (id) => (isStorableText(id) ? run((s) => s.consume(model, id)) : undefined),
    destroy: async (id) => (isStorableText(id) ? run((s) => s.destroy(model, id)) : undefined),
    revokeByGrantId: async (grantId) => (isStorableText(grantId) ? run((s) => s.revokeByGrantId(grantId)) : undefined),
  }
}
