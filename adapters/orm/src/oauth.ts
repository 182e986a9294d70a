/** OAuthStore on MikroORM: payloads of the OAuth server's models and web sessions, with expiry. */
import { OAuthStore, type StoredPayload } from "@content-site/core"
import { Effect, Layer, Option } from "effect"
import { OAuthPayloadEntity } from "./entities.ts"
import { attempt } from "./failures.ts"
import type { Em, Orm } from "./orm.ts"
import { nativeSql } from "./sql.ts"

const str = (v: unknown): string | null => (typeof v === "string" ? v : null)

export const ormOAuthStore = (orm: Orm, now: () => number = Date.now) => {
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
  return Layer.succeed(OAuthStore, {
    upsert: (model, id, payload, expiresInSeconds) =>
      attempt(async () => {
        const em = fork()
        await em
          .createQueryBuilder(OAuthPayloadEntity)
          .insert({
            model,
            id,
            payload: { ...payload },
            uid: str(payload["uid"]),
            userCode: str(payload["userCode"]),
            grantId: str(payload["grantId"]),
            accountId: str(payload["accountId"]),
            expiresAt: expiresInSeconds === undefined ? null : new Date(now() + expiresInSeconds * 1000),
            consumedAt: null,
          })
          .onConflict(["model", "id"])
          .merge()
          .execute()
        // expired rows are swept now and then, so the table does not grow without bound
        if (++writes % 200 === 0) await em.nativeDelete(OAuthPayloadEntity, { expiresAt: { $lte: new Date(now()) } })
      }),
    find: (model, id) => findBy(model, "id", id),
    findByUid: (model, uid) => findBy(model, "uid", uid),
    findByUserCode: (model, userCode) => findBy(model, "user_code", userCode),
    consume: (model, id) =>
      attempt(() => fork().nativeUpdate(OAuthPayloadEntity, { model, id, ...live() }, { consumedAt: new Date(now()) })).pipe(Effect.asVoid),
    destroy: (model, id) => attempt(() => fork().nativeDelete(OAuthPayloadEntity, { model, id })).pipe(Effect.asVoid),
    revokeByGrantId: (grantId) => attempt(() => fork().nativeDelete(OAuthPayloadEntity, { grantId })).pipe(Effect.asVoid),
    listByAccount: (model, accountId) =>
      attempt(async () => {
        const rows = await fork().find(OAuthPayloadEntity, { model, accountId, ...live() }, { orderBy: { id: "asc" } })
        return rows.map((r) => ({ id: r.id, payload: r.payload }))
      }),
  })
}
