/** OAuthStore on MikroORM: payloads of the OAuth server's models and web sessions, with expiry. */
import { OAuthStore, type StoredPayload } from "@content-site/core"
import { Effect, Layer, Option } from "effect"
import { OAuthPayloadEntity } from "./entities.ts"
import { attempt } from "./failures.ts"
import type { Em, Orm } from "./orm.ts"
import { batchedLookup } from "./batch.ts"
import type { EventBus } from "./bus.ts"
import { keptCache } from "./keptCache.ts"
import { nativeSql } from "./sql.ts"
import { activityRow } from "./mapping.ts"
import { insertActivity } from "./repositories.ts"

const str = (v: unknown): string | null => (typeof v === "string" ? v : null)

export const ormOAuthStore = (orm: Orm, bus: EventBus, now: () => number = Date.now) => {
  const fork = () => orm.em.fork() as Em
  const live = () => ({ $or: [{ expiresAt: null }, { expiresAt: { $gt: new Date(now()) } }] })
  const withConsumed = (row: { payload: Record<string, unknown>; consumedAt?: Date | null }): StoredPayload =>
    row.consumedAt ? { ...row.payload, consumed: Math.floor(row.consumedAt.getTime() / 1000) } : row.payload
  let writes = 0
  const sql = nativeSql(orm)
  /** The live payload matched by `model` and one more column (hand-written SQL, no fork). */
  const findBy = (model: string, column: "id" | "uid" | "user_code", value: string) =>
    attempt(async () => {
      const rows = await sql<{ payload: Record<string, unknown>; consumed_at: string | Date | null }>(
        `select payload, consumed_at from oauth_payloads
         where model = $1 and ${column} = $2 and (expires_at is null or expires_at > $3) limit 1`,
        [model, value, new Date(now()).toISOString()],
      )
      const row = rows[0]
      if (row === undefined) return Option.none<StoredPayload>()
      return Option.some(withConsumed({ payload: row.payload, consumedAt: row.consumed_at === null ? null : new Date(row.consumed_at) }))
    })
  type Found = { id: string; payload: Record<string, unknown>; consumed_at: string | Date | null; expires_at: string | Date | null }
  /** Finds by id, per model: the token checks of calls handled side by side share one statement. */
  const byId = new Map<string, (id: string) => Promise<Found | undefined>>()
  const lookupOf = (model: string) => {
    let lookup = byId.get(model)
    if (lookup === undefined) {
      lookup = batchedLookup(
        (ids) =>
          sql<Found>(
            `select id, payload, consumed_at, expires_at from oauth_payloads
             where model = $1 and id = any($2::text[]) and (expires_at is null or expires_at > $3)`,
            [model, ids, new Date(now()).toISOString()],
          ),
        (row) => row.id,
      )
      byId.set(model, lookup)
    }
    return lookup
  }
  /**
   * Grants, checked on every MCP call, are kept in process while the event bus is connected; any
   * change of a grant (upsert, destroy, consume, revocation by grant id) drops it on every instance
   * when its transaction commits.
   */
  const grants = keptCache<{ payload: StoredPayload; expiresAt: number | null }>(bus, "oauth:Grant:")
  const isCached = (model: string) => model === "Grant"
  /** Runs a write and, for a cached model, tells every instance in the same transaction. */
  const write = (model: string, id: string, f: (em: Em) => Promise<unknown>) =>
    attempt(async () => {
      if (!isCached(model)) return void (await f(fork()))
      await fork().transactional(async (tx) => {
        await f(tx)
        await bus.publishIn(tx, grants.event(id))
      })
      grants.forget(id)
    })
  const millis = (v: string | Date | null): number | null => (v === null ? null : v instanceof Date ? v.getTime() : Date.parse(v))
  const find = (model: string, id: string) =>
    Effect.suspend(() => {
      // a kept grant answers without waiting: every MCP call checks its grant
      const cached = isCached(model) ? grants.get(id) : undefined
      if (cached !== undefined && (cached.expiresAt === null || cached.expiresAt > now())) return Effect.succeed(Option.some(cached.payload))
      return findStored(model, id)
    })
  const findStored = (model: string, id: string) =>
    attempt(async () => {
      const ticket = grants.ticket()
      const row = await lookupOf(model)(id)
      if (row === undefined) return Option.none<StoredPayload>()
      const payload = withConsumed({ payload: row.payload, consumedAt: row.consumed_at === null ? null : new Date(row.consumed_at) })
      if (isCached(model)) grants.put(id, { payload, expiresAt: millis(row.expires_at) }, ticket)
      return Option.some(payload)
    })
  // A payload's row as written: the payload, the fields it is looked up by, its expiry.
  const columnsOf = (payload: StoredPayload, expiresInSeconds: number | undefined) => ({
    payload: { ...payload },
    uid: str(payload["uid"]),
    userCode: str(payload["userCode"]),
    grantId: str(payload["grantId"]),
    accountId: str(payload["accountId"]),
    expiresAt: expiresInSeconds === undefined ? null : new Date(now() + expiresInSeconds * 1000),
  })
  return Layer.succeed(OAuthStore, {
    upsert: (model, id, payload, expiresInSeconds) =>
      write(model, id, async (em) => {
        await em
          .createQueryBuilder(OAuthPayloadEntity)
          .insert({ model, id, ...columnsOf(payload, expiresInSeconds), consumedAt: null })
          .onConflict(["model", "id"])
          .merge()
          .execute()
        // expired rows are swept now and then, so the table does not grow without bound
        if (++writes % 200 === 0) await em.nativeDelete(OAuthPayloadEntity, { expiresAt: { $lte: new Date(now()) } })
      }),
    replace: (model, id, payload, expiresInSeconds) => {
      let replaced = false
      const update = write(model, id, async (em) => {
        replaced = (await em.nativeUpdate(OAuthPayloadEntity, { model, id, ...live() }, columnsOf(payload, expiresInSeconds))) > 0
      })
      return Effect.map(update, () => replaced)
    },
    find,
    findByUid: (model, uid) => findBy(model, "uid", uid),
    findByUserCode: (model, userCode) => findBy(model, "user_code", userCode),
    consume: (model, id) => {
      // one statement: of calls consuming the same payload at once, on any instance, one changes the row
      let consumed = false
      const update = write(model, id, async (em) => {
        consumed = (await em.nativeUpdate(OAuthPayloadEntity, { model, id, consumedAt: null, ...live() }, { consumedAt: new Date(now()) })) > 0
      })
      return Effect.map(update, () => consumed)
    },
    destroy: (model, id) => write(model, id, (em) => em.nativeDelete(OAuthPayloadEntity, { model, id })),
    take: (model, id, match) => {
      // one statement: of calls taking the same payload at once, on any instance, one deletes the row and reads it
      let taken = Option.none<StoredPayload>()
      const remove = write(model, id, async (em) => {
        const rows = await em.execute<Array<{ payload: Record<string, unknown>; consumed_at: string | Date | null }>>(
          `delete from oauth_payloads where model = ? and id = ? and (expires_at is null or expires_at > ?) and payload @> ?::jsonb
           returning payload, consumed_at`,
          [model, id, new Date(now()).toISOString(), JSON.stringify(match)],
        )
        const row = rows[0]
        if (row !== undefined) taken = Option.some(withConsumed({ payload: row.payload, consumedAt: row.consumed_at === null ? null : new Date(row.consumed_at) }))
      })
      return Effect.map(remove, () => taken)
    },
    revokeByGrantId: (grantId) => write("Grant", grantId, (em) => em.nativeDelete(OAuthPayloadEntity, { grantId })),
    revokeClient: (accountId, clientId, also, activity) => {
      let revoked: Array<string> = []
      const disconnect = attempt(async () => {
        await fork().transactional(async (tx) => {
          // the grants locked, deleted with what they issued, the usage record and the entry: one transaction
          const rows = await tx.execute<Array<{ id: string }>>(
            `delete from oauth_payloads where model = 'Grant' and account_id = ? and payload->>'clientId' = ? and (expires_at is null or expires_at > ?) returning id`,
            [accountId, clientId, new Date(now()).toISOString()],
          )
          revoked = rows.map((r) => r.id)
          if (revoked.length === 0) return
          await tx.nativeDelete(OAuthPayloadEntity, { grantId: { $in: revoked } })
          await tx.nativeDelete(OAuthPayloadEntity, { model: also.model, id: also.id })
          if (activity !== undefined) await insertActivity(tx, activityRow(activity))
          for (const id of revoked) await bus.publishIn(tx, grants.event(id))
        })
        for (const id of revoked) grants.forget(id)
      })
      return Effect.map(disconnect, () => revoked.length > 0)
    },
    listByAccount: (model, accountId) =>
      attempt(async () => {
        const rows = await fork().find(OAuthPayloadEntity, { model, accountId, ...live() }, { orderBy: { id: "asc" } })
        return rows.map((r) => ({ id: r.id, payload: r.payload }))
      }),
  })
}
