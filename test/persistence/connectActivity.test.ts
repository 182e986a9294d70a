/**
 * The Connect page's changes and their activity entries: a key created or revoked, an agent
 * disconnected, is never committed without its entry. The process is "killed" between the change and any later append
 * (an ActivityLog whose record dies, as a SIGKILL after the commit would leave it), and the
 * database is read directly, without the journal: every change that committed has its entry.
 */
import { ActivityLog, createApiKey, DataImporter, type LoggedCaller, namedAction, OAuthStore, recordActivity, revokeApiKey } from "@content-site/core"
import type { HttpDeps } from "@content-site/http"
import { revokeConnectedClient } from "@content-site/mcp"
import { openDatabase, type OrmDatabase } from "@content-site/orm"
import { nodePlatform } from "@content-site/platform"
import { Effect, Layer, ManagedRuntime } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase } from "../support/databases.ts"
import { worldPlan } from "./fixtures/world.ts"

const ACCOUNT = "acc_keylog"
type Services = Layer.Success<OrmDatabase["layer"]> | Layer.Success<ReturnType<typeof nodePlatform>>

describe("activity entries of the changes made on the Connect page", () => {
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

  /** An agent connected to the account: its grant, an access token the grant issued, its usage record. */
  const connect = (clientId: string) =>
    dying.runPromise(
      OAuthStore.use((store) =>
        Effect.all([
          store.upsert("Grant", `grant_${clientId}`, { accountId: ACCOUNT, clientId, iat: 1_700_000_000, resources: { "http://x/mcp": "mcp" } }, 3600),
          store.upsert("AccessToken", `token_${clientId}`, { accountId: ACCOUNT, clientId, grantId: `grant_${clientId}` }, 3600),
          store.upsert("McpClientUsage", `${ACCOUNT}:${clientId}`, { lastUsedAt: "2026-01-01T00:00:00Z" }, undefined),
        ]),
      ),
    )
  const stored = async (clientId: string) =>
    (await client.query<{ model: string }>("select model from oauth_payloads where id in ($1, $2, $3) order by model", [`grant_${clientId}`, `token_${clientId}`, `${ACCOUNT}:${clientId}`])).rows.map((r) => r.model)

  it("should disconnect an agent with its entry in one transaction, so that a kill after the commit loses no entry", async () => {
    await connect("client_log_1")
    expect(await stored("client_log_1")).toEqual(["AccessToken", "Grant", "McpClientUsage"])
    const caller = callerOf("req_client_revoke", namedAction("POST /connect/clients/{id}/revoke", "Agent one"))
    const deps = { runtime: dying } as unknown as HttpDeps
    expect(await revokeConnectedClient(deps, ACCOUNT, "client_log_1", { caller, httpStatus: 303 })).toBe(true)
    await dying.runPromise(recordActivity(caller, { ok: true, httpStatus: 303 })).catch(() => undefined)
    expect(await stored("client_log_1")).toEqual([])
    expect(await entriesOf("req_client_revoke")).toEqual([{ action: "POST /connect/clients/{id}/revoke “Agent one”", status: "303", error_code: null, channel: "web" }])
    // not connected (any more): nothing revoked, no entry of its own
    const again = callerOf("req_client_revoke_again", caller.action)
    expect(await revokeConnectedClient(deps, ACCOUNT, "client_log_1", { caller: again, httpStatus: 303 })).toBe(false)
    expect(await entriesOf("req_client_revoke_again")).toEqual([])
  })

  it("should leave the agent connected, and listed, when the disconnection fails part-way", async () => {
    await connect("client_log_2")
    // the database refuses the last statement of the disconnection (its entry): nothing of it stays
    await client.query(`create function refuse_entry() returns trigger language plpgsql as $$
      begin if new.request_id = 'req_client_refused' then raise exception 'refused part-way'; end if; return new; end $$`)
    await client.query("create trigger refuse_entry before insert on activity for each row execute function refuse_entry()")
    try {
      const caller = callerOf("req_client_refused", "POST /connect/clients/{id}/revoke")
      await expect(revokeConnectedClient({ runtime: dying } as unknown as HttpDeps, ACCOUNT, "client_log_2", { caller, httpStatus: 303 })).rejects.toBeDefined()
    } finally {
      await client.query("drop trigger refuse_entry on activity")
      await client.query("drop function refuse_entry()")
    }
    expect(await stored("client_log_2")).toEqual(["AccessToken", "Grant", "McpClientUsage"])
    expect(await entriesOf("req_client_refused")).toEqual([])
  })
})
