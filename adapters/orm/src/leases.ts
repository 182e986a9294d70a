/**
 * Leased request counting: an instance reserves a batch of hits from the shared counter in one
 * atomic statement and spends them locally, so a busy key costs one round trip per batch instead
 * of one per hit.
 *
 * The statement grants `least(wanted, ceil((limit - count) / 10), limit - count)` (never negative)
 * and adds the grant to the shared count. Grants never exceed what is left, so all instances
 * together never let more than the limit through; near the limit the grants shrink to 1, and the
 * grant that reaches the limit is always 1. `wanted` adapts per key: it starts at 1 (rare keys,
 * like auth failures, stay exact) and doubles up to 256 while each lease is spent within a second.
 *
 * Limits: granted hits an instance has not spent count as used for the others (they see up to
 * a tenth of what is left reserved elsewhere); hits reserved when a window ends, or when the
 * process stops, are lost for that window.
 */
import type { LimitVerdict } from "@content-site/core"
import type { Sql } from "./sql.ts"

/** A fixed window aligned to its length (like the memory adapter): every instance counts in the same one. */
export const windowOf = (windowSeconds: number, now: number): { start: number; end: number } => {
  const length = windowSeconds * 1000
  const start = Math.floor(now / length) * length
  return { start, end: start + length }
}

/** A verdict from a count; `remaining` never goes below 0. */
export const verdict = (limit: number, count: number, end: number, now: number, allowed: boolean): LimitVerdict => ({
  allowed,
  limit,
  remaining: Math.max(0, limit - count),
  resetSeconds: Math.max(1, Math.ceil((end - now) / 1000)),
})

/** What a lease statement answered: the shared count after it and how many hits it granted. */
export interface Lease {
  readonly count: number
  readonly granted: number
}

/** Reserves up to `wanted` hits of `key` in the window starting at `windowStart`. */
export type Reserve = (key: string, windowStart: number, limit: number, wanted: number) => Promise<Lease>

/** Largest batch one lease asks for. */
export const MAX_LEASE = 256
/** A lease spent faster than this asks for twice as many next time. */
const FAST_SPEND_MS = 1_000
/** Above this many keys, states of ended windows are swept. */
const SWEEP_ABOVE = 10_000

// The row is locked first (FOR UPDATE re-reads the newest version after a concurrent update), so
// the grant is computed from the count it is added to; RETURNING then tells the grant.
const RESERVE_EXISTING = `with cur as (
    select case when window_start < $2::bigint then 0 else count end as c
      from limit_counters where key = $1 for update
  ), g as (
    select c, greatest(0, least($3::int, ceil(($4::int - c) / 10.0)::int, $4::int - c)) as n from cur
  )
  update limit_counters t set count = g.c + g.n, window_start = greatest(t.window_start, $2::bigint)
    from g where t.key = $1
  returning t.count as count, g.n as granted`

const RESERVE_NEW = `insert into limit_counters (key, window_start, count)
  values ($1, $2::bigint, greatest(0, least($3::int, ceil($4::int / 10.0)::int, $4::int)))
  on conflict (key) do nothing
  returning count`

/** The lease statement on `limit_counters`: the row's first lease inserts it, later ones update it. */
export const reserveIn = (sql: Sql): Reserve => async (key, windowStart, limit, wanted) => {
  const params = [key, windowStart, wanted, limit]
  for (;;) {
    const updated = await sql<{ count: number | string; granted: number | string }>(RESERVE_EXISTING, params)
    if (updated[0]) return { count: Number(updated[0].count), granted: Number(updated[0].granted) }
    const inserted = await sql<{ count: number | string }>(RESERVE_NEW, params)
    // another instance inserted the row first: lease from it
    if (inserted[0]) return { count: Number(inserted[0].count), granted: Number(inserted[0].count) }
  }
}

/** One key's lease in one window. */
interface KeyState {
  readonly start: number
  readonly end: number
  /** Granted hits not yet spent. */
  tokens: number
  /** The shared count after this instance's last lease. */
  count: number
  /** Hits this instance let through in the window. */
  spent: number
  /** The shared count reached the limit: no lease can grant more in this window. */
  exhausted: boolean
  wanted: number
  leasedAt: number
  pending: Promise<void> | undefined
}

export interface LeaseOptions {
  readonly now: () => number
  /** A lease of this instance brought the key's window to its limit. */
  readonly onExhausted: (key: string, end: number) => void
}

/** Hits counted through leases; `hit` answers without a round trip while the key holds tokens. */
export const leasedCounter = (reserve: Reserve, options: LeaseOptions) => {
  const states = new Map<string, KeyState>()

  const sweep = (now: number) => {
    for (const [key, s] of states) if (s.end <= now) states.delete(key)
  }
  /** The key's state in the window of `now`; a new window drops the old lease. */
  const stateOf = (key: string, windowSeconds: number, now: number): KeyState => {
    const { start, end } = windowOf(windowSeconds, now)
    const s = states.get(key)
    if (s !== undefined && s.start === start) return s
    if (s === undefined && states.size >= SWEEP_ABOVE) sweep(now)
    const next: KeyState = {
      start,
      end,
      tokens: 0,
      count: 0,
      spent: 0,
      exhausted: false,
      wanted: s?.wanted ?? 1,
      leasedAt: 0,
      pending: undefined,
    }
    states.set(key, next)
    return next
  }
  /** Spends a token, or refuses when the window is exhausted; undefined when a lease is needed. */
  const take = (s: KeyState, limit: number, now: number): LimitVerdict | undefined => {
    if (s.tokens > 0) {
      s.tokens--
      s.spent++
      return verdict(limit, s.count - s.tokens, s.end, now, true)
    }
    return s.exhausted ? verdict(limit, limit, s.end, now, false) : undefined
  }
  const lease = async (key: string, s: KeyState, limit: number): Promise<void> => {
    const started = options.now()
    if (s.leasedAt > 0) {
      s.wanted = started - s.leasedAt <= FAST_SPEND_MS ? Math.min(MAX_LEASE, s.wanted * 2) : Math.max(1, s.wanted >> 1)
    }
    const { count, granted } = await reserve(key, s.start, limit, s.wanted)
    s.leasedAt = options.now()
    s.count = count
    s.tokens += granted
    s.exhausted = count >= limit
    if (granted > 0 && s.exhausted) options.onExhausted(key, s.end)
  }
  /** Waits for the key's one lease in flight (starting it if none) until a token or a refusal. */
  const slow = async (key: string, limit: number, windowSeconds: number): Promise<LimitVerdict> => {
    for (;;) {
      const now = options.now()
      const s = stateOf(key, windowSeconds, now)
      const v = take(s, limit, now)
      if (v) return v
      s.pending ??= lease(key, s, limit).finally(() => {
        s.pending = undefined
      })
      await s.pending
    }
  }
  return {
    /** Counts one hit: from a local token when there is one, else after a (shared) lease. */
    hit: (key: string, limit: number, windowSeconds: number): LimitVerdict | Promise<LimitVerdict> => {
      const now = options.now()
      return take(stateOf(key, windowSeconds, now), limit, now) ?? slow(key, limit, windowSeconds)
    },
    /** Whether a lease of this instance found `key`'s window starting at `start` at its limit. */
    exhaustedIn: (key: string, start: number): boolean => {
      const s = states.get(key)
      return s !== undefined && s.start === start && s.exhausted
    },
    /** Hits this instance let through for `key` in the window starting at `start`. */
    spentIn: (key: string, start: number): number => {
      const s = states.get(key)
      return s !== undefined && s.start === start ? s.spent : 0
    },
  }
}
