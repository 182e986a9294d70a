import { importData } from "@content-site/core"
import { revokeConnectedClient } from "@content-site/mcp"
import { request } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type StartedServer, startServer } from "../../apps/server/server.ts"
import { createTestDatabase } from "../support/databases.ts"
import { ALICE, connect, ScriptedOAuthProvider, seedFile } from "./support.ts"

let first: StartedServer
let second: StartedServer
let database: { url: string; drop: () => Promise<void> }

/** A tools/call sent to one instance as a load balancer would: the public Host, the instance's socket. */
const toolCallAt = (instance: StartedServer, publicUrl: string, token: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const target = new URL(instance.url)
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: "/mcp",
        method: "POST",
        headers: {
          host: new URL(publicUrl).host,
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
      },
      (res) => {
        let body = ""
        res.on("data", (chunk: Buffer) => (body += chunk.toString()))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
      },
    )
    req.on("error", reject)
    req.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_article", arguments: { article_id: "art_a1_1" } } }))
  })

beforeAll(async () => {
  database = await createTestDatabase()
  const env = { HOST: "127.0.0.1", PORT: "0", SEED_DEMO: "false", DATABASE_URL: database.url }
  first = await startServer({ quiet: true, env })
  const exit = await first.runtime.runPromiseExit(importData(seedFile()))
  if (exit._tag !== "Success") throw new Error("seeding failed")
  // The second instance serves the same public URL from the same database.
  second = await startServer({ quiet: true, env: { ...env, PUBLIC_URL: first.url } })
}, 120_000)

afterAll(async () => {
  await second?.close()
  await first?.close()
  await database?.drop()
})

describe("two instances on one PostgreSQL database", () => {
  it("should accept at one instance a token issued by the other and honour a revocation made at either", async () => {
    const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Two Instance Agent")
    const client = await connect(`${first.url}/mcp`, provider)
    await client?.close()
    const token = provider.savedTokens?.access_token ?? ""
    const served = await toolCallAt(second, first.url, token)
    expect(served.status).toBe(200)
    expect(JSON.parse(served.body).result.structuredContent.id).toBe("art_a1_1")
    const deps = { runtime: second.runtime, publicUrl: first.url, env: {} }
    expect(await revokeConnectedClient(deps, "acc_alice", provider.client?.client_id ?? "")).toBe(true)
    expect((await toolCallAt(first, first.url, token)).status).toBe(401)
  }, 60_000)
})
