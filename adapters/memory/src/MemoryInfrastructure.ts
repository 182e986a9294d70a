import {
  Clock,
  DataImporter,
  LimitStore,
  MediaStore,
  OAuthStore,
  type ImportSummary,
  type LimitVerdict,
  type StoredPayload,
} from "@content-site/core"
import { Effect, Layer, Option, Semaphore } from "effect"
import { MEMORY_COUNTERS_SWEEP_ABOVE, type MemoryState } from "./MemoryState.ts"

/**
 * Counters with fixed windows aligned to the window length, so every instance agrees on them.
 * Counters of ended windows are dropped once there are many, so keys seen once (client addresses
 * that failed to authenticate) do not pile up.
 */
export const memoryLimitStore = (state: MemoryState, now: () => number = Date.now) => {
  const windowOf = (key: string, windowSeconds: number) => {
    const t = now()
    const start = Math.floor(t / (windowSeconds * 1000)) * windowSeconds * 1000
    let w = state.limitWindows.get(key)
    if (!w || w.start !== start) {
      if (!w && state.limitWindows.size >= MEMORY_COUNTERS_SWEEP_ABOVE) {
        for (const [k, old] of state.limitWindows) if (old.end <= t) state.limitWindows.delete(k)
      }
      w = { start, end: start + windowSeconds * 1000, count: 0 }
      state.limitWindows.set(key, w)
    }
    return { w, resetSeconds: Math.max(1, Math.ceil((start + windowSeconds * 1000 - t) / 1000)) }
  }
  const verdict = (limit: number, count: number, resetSeconds: number, allowed: boolean): LimitVerdict => ({
    allowed,
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds,
  })
  return Layer.succeed(LimitStore, {
    hit: (key, limit, windowSeconds) =>
      Effect.sync(() => {
        const { w, resetSeconds } = windowOf(key, windowSeconds)
        w.count++
        return verdict(limit, w.count, resetSeconds, w.count <= limit)
      }),
    peek: (key, limit, windowSeconds) =>
      Effect.sync(() => {
        const { w, resetSeconds } = windowOf(key, windowSeconds)
        return verdict(limit, w.count, resetSeconds, w.count < limit)
      }),
  })
}

/** OAuth and session payloads with expiry, as oidc-provider's adapter expects them. */
export const memoryOAuthStore = (state: MemoryState, now: () => number = Date.now) => {
  const live = (model: string, id: string) => {
    const entry = state.oauth.get(`${model}#${id}`)
    if (!entry) return undefined
    if (entry.expiresAt !== null && entry.expiresAt <= now()) {
      state.oauth.delete(`${model}#${id}`)
      return undefined
    }
    return entry
  }
  const withConsumed = (e: { payload: StoredPayload; consumed: boolean }): StoredPayload =>
    e.consumed ? { ...e.payload, consumed: Math.floor(now() / 1000) } : e.payload
  const findBy = (model: string, field: string, value: string) =>
    Effect.sync(() => {
      for (const [k, e] of state.oauth) {
        if (k.startsWith(`${model}#`) && e.payload[field] === value) {
          const found = live(model, k.slice(model.length + 1))
          if (found) return Option.some(withConsumed(found))
        }
      }
      return Option.none<StoredPayload>()
    })
  return Layer.succeed(OAuthStore, {
    upsert: (model, id, payload, expiresInSeconds) =>
      Effect.sync(() =>
        void state.oauth.set(`${model}#${id}`, {
          payload,
          expiresAt: expiresInSeconds === undefined ? null : now() + expiresInSeconds * 1000,
          consumed: false,
        }),
      ),
    replace: (model, id, payload, expiresInSeconds) =>
      Effect.sync(() => {
        const e = live(model, id)
        if (e === undefined) return false
        state.oauth.set(`${model}#${id}`, { ...e, payload, expiresAt: expiresInSeconds === undefined ? null : now() + expiresInSeconds * 1000 })
        return true
      }),
    find: (model, id) => Effect.sync(() => Option.map(Option.fromUndefinedOr(live(model, id)), withConsumed)),
    findByUid: (model, uid) => findBy(model, "uid", uid),
    findByUserCode: (model, code) => findBy(model, "userCode", code),
    consume: (model, id) =>
      Effect.sync(() => {
        const e = live(model, id)
        if (e === undefined || e.consumed) return false
        e.consumed = true
        return true
      }),
    destroy: (model, id) => Effect.sync(() => void state.oauth.delete(`${model}#${id}`)),
    // one synchronous step, as the database's delete ... returning: of two takes, one gets the payload
    take: (model, id, match) =>
      Effect.sync(() => {
        const e = live(model, id)
        if (e === undefined || !Object.entries(match).every(([field, value]) => e.payload[field] === value)) return Option.none<StoredPayload>()
        state.oauth.delete(`${model}#${id}`)
        return Option.some(withConsumed(e))
      }),
    revokeByGrantId: (grantId) =>
      Effect.sync(() => {
        for (const [k, e] of state.oauth) if (e.payload["grantId"] === grantId) state.oauth.delete(k)
      }),
    // one synchronous step, as the database's transaction
    revokeClient: (accountId, clientId, also, activity) =>
      Effect.sync(() => {
        const revoked: Array<string> = []
        for (const [k, e] of state.oauth) {
          if (k.startsWith("Grant#") && e.payload["accountId"] === accountId && e.payload["clientId"] === clientId) revoked.push(k.slice("Grant#".length))
        }
        if (revoked.length === 0) return false
        for (const id of revoked) state.oauth.delete(`Grant#${id}`)
        for (const [k, e] of state.oauth) if (typeof e.payload["grantId"] === "string" && revoked.includes(e.payload["grantId"])) state.oauth.delete(k)
        state.oauth.delete(`${also.model}#${also.id}`)
        if (activity !== undefined && !state.activityRequestIds.has(`${activity.channel}#${activity.request_id}`)) {
          state.activityRequestIds.add(`${activity.channel}#${activity.request_id}`)
          state.activity.push(activity)
        }
        return true
      }),
    listByAccount: (model, accountId) =>
      Effect.sync(() => {
        const out: Array<{ id: string; payload: StoredPayload }> = []
        for (const [k, e] of state.oauth) {
          if (k.startsWith(`${model}#`) && e.payload["accountId"] === accountId) {
            const id = k.slice(model.length + 1)
            if (live(model, id)) out.push({ id, payload: e.payload })
          }
        }
        return out
      }),
  })
}

/** Media kept in memory. */
export const memoryMediaStore = (state: MemoryState) =>
  Layer.succeed(MediaStore, {
    put: (bytes, contentType, extension) =>
      Effect.sync(() => {
        const key = `${crypto.randomUUID()}.${extension}`
        state.media.set(key, { bytes, contentType })
        return key
      }),
    get: (key) => Effect.sync(() => Option.fromUndefinedOr(state.media.get(key))),
    remove: (key) =>
      Effect.sync(() => {
        state.media.delete(key)
      }),
  })

/** The import unit of work in memory: all or nothing, existing ids left as they are. */
export const memoryDataImporter = (state: MemoryState) => {
  // one import at a time: its checks and its writes as one step (the state is this process's)
  const importing = Semaphore.makeUnsafe(1)
  return Layer.succeed(DataImporter, {
    exclusive: (effect) => importing.withPermit(effect),
    apply: (plan) =>
      Effect.sync(() => {
        let skipped = 0
        const created = { accounts: 0, apiKeys: 0, sites: 0, articles: 0, backlinks: 0 }
        for (const a of plan.accounts) {
          if (state.accounts.has(a.id) || [...state.accounts.values()].some((x) => x.email === a.email)) skipped++
          else (state.accounts.set(a.id, a), created.accounts++)
        }
        for (const k of plan.apiKeys) {
          if (state.apiKeys.has(k.id) || [...state.apiKeys.values()].some((x) => x.key_hash === k.key_hash)) skipped++
          else (state.apiKeys.set(k.id, k), created.apiKeys++)
        }
        for (const s of plan.sites) {
          if (state.sites.has(s.id)) skipped++
          else (state.sites.set(s.id, s), created.sites++)
        }
        for (const { article, firstRevision } of plan.articles) {
          if (state.articles.has(article.id)) skipped++
          else {
            state.articles.set(article.id, article)
            state.revisions.set(`${article.id}#1`, firstRevision)
            created.articles++
          }
        }
        for (const b of plan.backlinks) {
          if (state.backlinks.has(b.id)) skipped++
          else (state.backlinks.set(b.id, b), created.backlinks++)
        }
        const summary: ImportSummary = { created, skipped }
        return summary
      }),
    owners: (kind, ids) =>
      Effect.sync(() => {
        const rows: ReadonlyMap<string, { readonly account_id: string }> = state[kind]
        return ids.flatMap((id) => {
          const row = rows.get(id)
          return row === undefined ? [] : [{ id, accountId: row.account_id }]
        })
      }),
  })
}

/** A clock fixed at a settable instant, for tests. */
export const fixedClock = (initial: number) => {
  let t = initial
  return {
    layer: Layer.succeed(Clock, { now: Effect.sync(() => t) }),
    now: () => t,
    set: (ms: number) => void (t = ms),
    advance: (ms: number) => void (t += ms),
  }
}
