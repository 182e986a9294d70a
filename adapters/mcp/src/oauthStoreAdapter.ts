import { OAuthStore, type StoredPayload } from "@content-site/core"
import type { AppRuntime } from "@content-site/rest"
import { Effect, Option } from "effect"
import type { Adapter, AdapterFactory, AdapterPayload } from "oidc-provider"

const toPayload = (stored: Option.Option<StoredPayload>): AdapterPayload | undefined =>
  Option.isSome(stored) ? (stored.value as AdapterPayload) : undefined

// A JSON round trip: stores keep plain JSON, and a store in memory must not share objects with the provider.
const plain = (payload: AdapterPayload): StoredPayload => JSON.parse(JSON.stringify(payload)) as StoredPayload

/**
 * The oidc-provider adapter over the core OAuthStore port: clients, grants, codes, tokens,
 * sessions and interactions live in the service's database, so every instance shares them.
 */
export const oauthStoreAdapter = (runtime: AppRuntime): AdapterFactory => (model: string): Adapter => {
  const run = <A>(f: (store: OAuthStore["Service"]) => Effect.Effect<A, unknown>) =>
    runtime.runPromise(OAuthStore.use(f) as Effect.Effect<A>)
  return {
    upsert: (id, payload, expiresIn) => run((s) => s.upsert(model, id, plain(payload), expiresIn)),
    find: (id) => run((s) => s.find(model, id)).then(toPayload),
    findByUid: (uid) => run((s) => s.findByUid(model, uid)).then(toPayload),
    findByUserCode: (code) => run((s) => s.findByUserCode(model, code)).then(toPayload),
    consume: (id) => run((s) => s.consume(model, id)),
    destroy: (id) => run((s) => s.destroy(model, id)),
    revokeByGrantId: (grantId) => run((s) => s.revokeByGrantId(grantId)),
  }
}
