import { Effect } from "effect"
import { toTimestamp } from "../policy/time.ts"
import { Clock, Ids, Secrets } from "../ports/Platform.ts"
import { ApiKeyRepository } from "../ports/Repositories.ts"
import type { ApiKeyRecord } from "../ports/records.ts"
import type { Actor, KeyScope } from "../schema/common.ts"
import { decodeInput } from "../schema/decode.ts"
import { ApiKeyName } from "../schema/writes.ts"
import type { LoggedCaller } from "./Caller.ts"
import { namedAction } from "./recordActivity.ts"
import { activityFor } from "./views.ts"

/**
 * The call a key change is made by, when its activity entry is to be written with the change (in
 * its transaction: no change without its entry), and the status that entry records.
 */
export interface KeyChangeCall {
  readonly caller: LoggedCaller
  readonly httpStatus: number
}

/** Who the admin command line's changes to an account name: the platform's operator (channel `platform`). */
export const ADMIN_ACTOR: Actor = { type: "platform", id: "admin", name: "Administrator" }

/**
 * The call of an admin command that changes one of an account's keys (`key create`, `key revoke`),
 * for the entry written with the change in the account's log: channel `platform`, actor
 * `ADMIN_ACTOR`, the command as the action with the key's name after it.
 */
export const adminKeyCall = (accountId: string, command: "key create" | "key revoke", keyName: string) =>
  Effect.gen(function* () {
    const caller: LoggedCaller = {
      accountId,
      actor: ADMIN_ACTOR,
      channel: "platform",
      requestId: yield* (yield* Ids).make("adm"),
      action: namedAction(command, keyName),
      startedAt: yield* (yield* Clock).now,
    }
    return { caller, httpStatus: 200 } satisfies KeyChangeCall
  })

/** The activity entry of a key change made by `call` at `nowMs`. */
const entryOf = (call: KeyChangeCall | undefined, nowMs: number) =>
  call === undefined
    ? Effect.succeed(undefined)
    : Effect.map(Ids.use((ids) => ids.make("act")), (id) => activityFor(call.caller, { id, nowMs, ok: true, httpStatus: call.httpStatus }))

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

/**
 * Creates an API key for the account; the plaintext is returned once and only its hash is stored.
 * With `call`, the call's activity entry is stored with the key, atomically.
 */
export const createApiKey = (
  accountId: string,
  input: { readonly name: string; readonly scope: KeyScope; readonly id?: string; readonly plaintext?: string },
  call?: KeyChangeCall,
) =>
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
    yield* (yield* ApiKeyRepository).insert(record, yield* entryOf(call, now))
    return { key, view: keyView(record) }
  })

/** Lists the account's API keys, revoked ones included. */
export const listApiKeys = (accountId: string) =>
  Effect.map(ApiKeyRepository.use((keys) => keys.list(accountId)), (all) => all.map(keyView))

/**
 * Revokes one of the account's keys; it stops working at once. Answers when it was revoked and
 * whether it was already (`already`: revoked before, by this call's twin at the same moment too,
 * its time kept): one step in the store, so of two revocations at once exactly one revokes it.
 * With `call`, the call's activity entry is written in that step when it revokes the key.
 */
export const revokeApiKey = (accountId: string, keyId: string, call?: KeyChangeCall) =>
  Effect.gen(function* () {
    const now = yield* (yield* Clock).now
    const { revokedAt, already } = yield* (yield* ApiKeyRepository).revoke(accountId, keyId, toTimestamp(now), yield* entryOf(call, now))
    return { revoked_at: revokedAt, already }
  })
