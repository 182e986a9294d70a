/**
 * Found, non-revoked API keys by hash, kept only while the event bus is connected. A revocation
 * anywhere publishes `key:<id>` in its transaction and every instance drops the key on commit; a
 * reset of the bus (disconnect or reconnect) drops everything. Misses are never cached.
 *
 * A key revoked, changed or deleted by hand in SQL is announced too, by the table's trigger
 * (`entities.ts`); only a session that skips triggers (`session_replication_role = replica`)
 * changes a key unannounced.
 */
import type { ApiKeyRecord } from "@content-site/core"
import type { EventBus } from "./bus.ts"
import { keptCache } from "./keptCache.ts"

/** The in-process API-key cache. */
export interface ApiKeyCache {
  /** The cached key for `hash`, or undefined (not cached, or the bus is not connected). */
  readonly get: (hash: string) => ApiKeyRecord | undefined
  /** Taken before reading the database; `put` refuses a record read across an invalidation. */
  readonly ticket: () => number
  /** Caches a key read from the database, unless revoked or invalidated since `ticket`. */
  readonly put: (key: ApiKeyRecord, ticket: number) => void
  /** Drops the key with this id (a revocation). */
  readonly forget: (keyId: string) => void
  /** Records a use in the cached copy, so the core does not touch again on every request. */
  readonly touched: (keyId: string, at: string) => void
}

/** Default bound on cached keys; the oldest entry goes first. */
export const API_KEY_CACHE_SIZE = 10_000

const KEY_EVENT = "key:"

/** The event that makes every instance drop a key. */
export const keyEvent = (keyId: string): string => `${KEY_EVENT}${keyId}`

/**
 * A cache subscribed to `bus`, bounded to `maxEntries` keys: the bus-kept cache by key id (what a
 * revocation names), reached from a hash through an index (a key's hash never changes, so a stale
 * index entry only leads to a miss).
 */
export const apiKeyCache = (bus: EventBus, maxEntries: number = API_KEY_CACHE_SIZE): ApiKeyCache => {
  const byId = keptCache<ApiKeyRecord>(bus, KEY_EVENT, maxEntries)
  const idByHash = new Map<string, string>()
  return {
    get: (hash) => {
      const id = idByHash.get(hash)
      return id === undefined ? undefined : byId.get(id)
    },
    ticket: byId.ticket,
    put: (key, ticket) => {
      if (key.revoked_at !== null) return
      byId.put(key.id, key, ticket)
      if (idByHash.size >= 2 * maxEntries) idByHash.clear()
      idByHash.set(key.key_hash, key.id)
    },
    forget: byId.forget,
    touched: (keyId, at) => {
      const key = byId.get(keyId)
      if (key !== undefined) byId.put(keyId, { ...key, last_used_at: at }, byId.ticket())
    },
  }
}
