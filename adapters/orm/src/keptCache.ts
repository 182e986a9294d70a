/**
 * A bounded in-process cache kept honest by the event bus: an entry is served only while the bus
 * is connected; the event `<prefix><key>` from any instance drops it; a reset of the bus (disconnect
 * or reconnect) drops everything. A read that raced an invalidation is not cached (tickets).
 */
import type { EventBus } from "./bus.ts"

export interface KeptCache<V> {
  /** The cached value, or undefined (not cached, or the bus is not connected). */
  readonly get: (key: string) => V | undefined
  /** Taken before reading the database; `put` refuses a value read across an invalidation. */
  readonly ticket: () => number
  /** Caches a value read from the database, unless something was invalidated since `ticket`. */
  readonly put: (key: string, value: V, ticket: number) => void
  /** Drops one key here (the writer also publishes `event(key)` for the other instances). */
  readonly forget: (key: string) => void
  /** The event that makes every instance drop `key`. */
  readonly event: (key: string) => string
}

/** A cache of at most `maxEntries` values (the oldest goes first), subscribed to `bus`. */
export const keptCache = <V>(bus: EventBus, prefix: string, maxEntries = 10_000): KeptCache<V> => {
  const entries = new Map<string, V>()
  let generation = 0
  const forget = (key: string) => {
    generation++
    entries.delete(key)
  }
  bus.subscribe({
    event: (payload) => {
      if (payload.startsWith(prefix)) forget(payload.slice(prefix.length))
    },
    reset: () => {
      generation++
      entries.clear()
    },
  })
  return {
    get: (key) => {
      if (bus.connected()) return entries.get(key)
      if (entries.size > 0) entries.clear()
      return undefined
    },
    ticket: () => generation,
    put: (key, value, ticket) => {
      if (ticket !== generation || !bus.connected()) return
      entries.delete(key)
      entries.set(key, value)
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value as string)
    },
    forget,
    event: (key) => `${prefix}${key}`,
  }
}
