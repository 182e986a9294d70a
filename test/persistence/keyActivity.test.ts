/**
 * The Connect page's key changes and their activity entries: a key created or revoked is never
 * committed without its entry. The process is "killed" between the change and any later append
 * (an ActivityLog whose record dies, as a SIGKILL after the commit would leave it), and the
 * database is read directly, without the journal: every change that committed has its entry.
 */
import { ActivityLog, createApiKey, DataImporter, type LoggedCaller, namedAction, recordActivity, revokeApiKey } from "@content-site/core"
import { openDatabase, type OrmDatabase } from "@content-site/orm"
import { nodePlatform } from "@content-site/platform"
import { Effect, Layer, ManagedRuntime } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase } from "../support/databases.ts"
import { worldPlan } from "./fixtures/world.ts"

const ACCOUNT = "acc_keylog"
type Services = Layer.Success<OrmDatabase["layer"]> | Layer.Success<ReturnType<typeof nodePlatform>>

describe("activity entries of key changes made on the web pages", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>
  let db: OrmDatabase
  let client: pg.Client
  /** The database's services, but a process that dies before anything is appended to the activity journal. */
  let dying: ManagedRuntime.ManagedRuntime<Services, never>

  beforeAll(async () => {
    database = await createTestDatabase()
    db = await openDatabase({ databaseUrl: database.url })
    const killedBeforeTheAppend = Layer.succeed(ActivityLog, {
      record: () => Effect.die(new Error("killed between the commit and the journal's append")),
      folds: () => false,
      list: () => Effect.die(new Error("not read here")),
    })
    dying = ManagedRuntime.make(Layer.mergeAll(db.layer, nodePlatform(), killedBeforeTheAppend))
    await dying.runPromise(DataImporter.use((i) => i.apply(worldPlan(ACCOUNT, 1))))
    client = new pg.Client({ connectionString: database.url })
    await client.connect()
  })
  afterAll(async () => {
    await client?.end()
    await dying?.dispose()
    await db?.close()
    await database?.drop()
  })

  const callerOf = (requestId: string, action: string): LoggedCaller => ({
    accountId: ACCOUNT,
    actor: { type: "user", id: ACCOUNT, name: "Key owner" },
    channel: "web",
    requestId,
    action,
    startedAt: Date.now(),
  })
  const entriesOf = async (requestId: string) =>
    (await client.query<{ action: string; status: string; error_code: string | null; channel: string }>(
      "select action, status, error_code, channel from activity where request_id = $1",
      [requestId],
    )).rows

  /** What the page does: the change (its entry with it), then the entry at the request's end, which the kill prevents. */
  const asThePage = async <A, E>(caller: LoggedCaller, change: Effect.Effect<A, E, Services>) => {
    const result = await dying.runPromise(change)
    await dying.runPromise(recordActivity(caller, { ok: true, httpStatus: 303 })).catch(() => undefined)
    return result
  }

  it("should commit a key created with its entry, so that a kill after the commit loses no entry", async () => {
    const caller = callerOf("req_keylog_create", namedAction("POST /connect/keys", "Reporting script"))
    const created = await asThePage(caller, createApiKey(ACCOUNT, { name: "Reporting script", scope: "read-only" }, { caller, httpStatus: 303 }))
    expect((await client.query("select 1 from api_keys where id = $1", [created.view.id])).rowCount).toBe(1)
    expect(await entriesOf("req_keylog_create")).toEqual([{ action: "POST /connect/keys “Reporting script”", status: "303", error_code: null, channel: "web" }])
  })

  it("should commit a key revoked with its entry, and write none for a key revoked already", async () => {
    const { view } = await dying.runPromise(createApiKey(ACCOUNT, { name: "Old script", scope: "write" }))
    const caller = callerOf("req_keylog_revoke", namedAction("POST /connect/keys/{id}/revoke", "Old script"))
    const revoked = await asThePage(caller, revokeApiKey(ACCOUNT, view.id, { caller, httpStatus: 303 }))
    expect(revoked).toMatchObject({ already: false })
    expect((await client.query("select revoked_at from api_keys where id = $1", [view.id])).rows[0]?.revoked_at).not.toBeNull()
    expect(await entriesOf("req_keylog_revoke")).toEqual([{ action: "POST /connect/keys/{id}/revoke “Old script”", status: "303", error_code: null, channel: "web" }])
    // the form sent again: nothing revoked now, and no entry of its own
    const twice = callerOf("req_keylog_revoke_again", caller.action)
    expect(await dying.runPromise(revokeApiKey(ACCOUNT, view.id, { caller: twice, httpStatus: 303 }))).toMatchObject({ already: true })
    expect(await entriesOf("req_keylog_revoke_again")).toEqual([])
  })
})
