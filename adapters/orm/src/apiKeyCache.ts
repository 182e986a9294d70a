/**
 * Found, non-revoked API keys by hash, kept only while the event bus is connected. A revocation
 * anywhere publishes `key:<id>` in its transaction and every instance drops the key on commit; a
 * reset of the bus (disconnect or reconnect) drops everything. Misses are never cached.
 *
 * Limit: a key revoked by hand in SQL (no notification) stays usable on instances that cached it
 * until their bus reconnects or the process restarts; revoke through the service.
 */
import type { ApiKeyRecord } from "@content-site/core"
import type { EventBus } from "./bus.ts"

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

/** A cache subscribed to `bus`, bounded to `maxEntries` keys. */
export const apiKeyCache = (bus: EventBus, maxEntries: number = API_KEY_CACHE_SIZE): ApiKeyCache => {
  const byHash = new Map<string, ApiKeyRecord>()
  const hashById = new Map<string, string>()
  // bumped by every invalidation, so a read that raced one is not cached
  let generation = 0
  const clear = () => {
    generation++
    byHash.clear()
    hashById.clear()
  }
  const forget = (keyId: string) => {
    generation++
    const hash = hashById.get(keyId)
    if (hash === undefined) return
    hashById.delete(keyId)
    byHash.delete(hash)
  }
  bus.subscribe({
    event: (payload) => {
      if (payload.startsWith(KEY_EVENT)) forget(payload.slice(KEY_EVENT.length))
    },
    reset: clear,
  })
  return {
    get: (hash) => {
      if (bus.connected()) return byHash.get(hash)
      if (byHash.size > 0) clear()
      return undefined
    },
    ticket: () => generation,
    put: (key, ticket) => {
      if (ticket !== generation || key.revoked_at !== null || !bus.connected()) return
      const previous = hashById.get(key.id)
      if (previous !== undefined && previous !== key.key_hash) byHash.delete(previous)
      byHash.set(key.key_hash, key)
      hashById.set(key.id, key.key_hash)
      while (byHash.size > maxEntries) {
        const oldest = byHash.keys().next().value as string
        const evicted = byHash.get(oldest)!
        byHash.delete(oldest)
        hashById.delete(evicted.id)
      }
    },
    forget,
    touched: (keyId, at) => {
      const hash = hashById.get(keyId)
      const key = hash === undefined ? undefined : byHash.get(hash)
      if (key && hash !== undefined) byHash.set(hash, { ...key, last_used_at: at })
    },
  }
}
