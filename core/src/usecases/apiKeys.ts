import { Effect } from "effect"
import { toTimestamp } from "../policy/time.ts"
import { Clock, Ids, Secrets } from "../ports/Platform.ts"
import { ApiKeyRepository } from "../ports/Repositories.ts"
import type { ApiKeyRecord } from "../ports/records.ts"
import type { KeyScope } from "../schema/common.ts"
import { decodeInput } from "../schema/decode.ts"
import { ApiKeyName } from "../schema/writes.ts"

/** An API key as shown to its owner (never the secret, which is shown once at creation). */
export interface ApiKeyView {
  readonly id: string
  readonly name: string
  readonly scope: KeyScope
  readonly created_at: string
  readonly last_used_at: string | null
  readonly revoked_at: string | null
}

const keyView = (k: ApiKeyRecord): ApiKeyView => ({
  id: k.id,
  name: k.name,
  scope: k.scope,
  created_at: k.created_at,
  last_used_at: k.last_used_at,
  revoked_at: k.revoked_at,
})

/** Creates an API key for the account; the plaintext is returned once and only its hash is stored. */
export const createApiKey = (accountId: string, input: { readonly name: string; readonly scope: KeyScope; readonly id?: string; readonly plaintext?: string }) =>
  Effect.gen(function* () {
    const name = yield* decodeInput(ApiKeyName, input.name, "API key", "name")
    const secrets = yield* Secrets
    const key = input.plaintext ?? (yield* secrets.generateApiKey)
    const now = yield* (yield* Clock).now
    const record: ApiKeyRecord = {
      id: input.id ?? (yield* (yield* Ids).make("key")),
      account_id: accountId,
      name: name.trim() || "API key",
      scope: input.scope,
      key_hash: yield* secrets.hashApiKey(key),
      created_at: toTimestamp(now),
      last_used_at: null,
      revoked_at: null,
    }
    yield* (yield* ApiKeyRepository).insert(record)
    return { key, view: keyView(record) }
  })

/** Lists the account's API keys, revoked ones included. */
export const listApiKeys = (accountId: string) =>
  Effect.map(ApiKeyRepository.use((keys) => keys.list(accountId)), (all) => all.map(keyView))

/**
 * Revokes one of the account's keys; it stops working at once. Answers when it was revoked and
 * whether it was already (`already`: revoked before, by this call's twin at the same moment too,
 * its time kept): one step in the store, so of two revocations at once exactly one revokes it.
 */
export const revokeApiKey = (accountId: string, keyId: string) =>
  Effect.gen(function* () {
    const now = yield* (yield* Clock).now
    const { revokedAt, already } = yield* (yield* ApiKeyRepository).revoke(accountId, keyId, toTimestamp(now))
    return { revoked_at: revokedAt, already }
  })
