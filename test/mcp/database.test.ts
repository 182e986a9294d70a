import { listConnectedClients, revokeConnectedClient } from "@content-site/mcp"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { importData } from "@content-site/core"
import { type StartedServer, startServer } from "../../apps/server/server.ts"
import { ALICE, connect, ScriptedOAuthProvider, seedFile } from "./support.ts"

let server: StartedServer
let dataDir: string

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "mcp-db-"))
  server = await startServer({ quiet: true, env: { HOST: "127.0.0.1", PORT: "0", SEED_DEMO: "false", DATA_DIR: dataDir } })
  const exit = await server.runtime.runPromiseExit(importData(seedFile()))
  if (exit._tag !== "Success") throw new Error("seeding failed")
}, 120_000)

afterAll(async () => {
  await server?.close()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

describe("the MCP connector on the embedded database", () => {
  it("should run the OAuth flow, call a tool, refresh, and revoke with the state in the database", async () => {
    const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Database Agent")
    const client = await connect(`${server.url}/mcp`, provider)
    expect(client).toBeDefined()
    const result = (await client?.callTool({ name: "get_article", arguments: { article_id: "art_a1_1" } })) as unknown as {
      structuredContent: { id: string }
    }
    expect(result.structuredContent.id).toBe("art_a1_1")
    await client?.close()
    const clientId = provider.client?.client_id ?? ""
    const refreshed = await fetch(`${server.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: provider.savedTokens?.refresh_token ?? "", client_id: clientId }),
    })
    expect(refreshed.status).toBe(200)
    const { access_token } = (await refreshed.json()) as { access_token: string }
    const deps = { runtime: server.runtime, publicUrl: server.url, env: {} }
    expect((await listConnectedClients(deps, "acc_alice")).map((c) => c.name)).toContain("Database Agent")
    expect(await revokeConnectedClient(deps, "acc_alice", clientId)).toBe(true)
    const after = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${access_token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    })
    expect(after.status).toBe(401)
  }, 60_000)
})
