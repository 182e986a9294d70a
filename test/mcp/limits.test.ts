import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { StartedServer } from "../../apps/server/server.ts"
import { ALICE, connect, ScriptedOAuthProvider, startSeeded } from "./support.ts"

let server: StartedServer
let client: Client

beforeAll(async () => {
  server = await startSeeded({ RATE_LIMIT_PER_MINUTE: "4" })
  const connected = await connect(`${server.url}/mcp`, new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Limits Agent"))
  if (connected === undefined) throw new Error("could not connect")
  client = connected
}, 60_000)

afterAll(async () => {
  await client?.close()
  await server?.close()
})

describe("limits shared with REST", () => {
  it("should count MCP tool calls and REST requests against one per-minute budget", async () => {
    // The counters use fixed one-minute windows: start well inside one.
    const intoMinute = Date.now() % 60_000
    if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute))
    const rest = () => fetch(`${server.url}/api/v1/sites`, { headers: { authorization: `Bearer ${ALICE.apiKey}` } })
    expect((await rest()).status).toBe(200)
    expect((await rest()).status).toBe(200)
    const ok = (await client.callTool({ name: "list_sites", arguments: {} })) as { isError?: boolean }
    expect(ok.isError ?? false).toBe(false)
    expect(((await client.callTool({ name: "get_article", arguments: { article_id: "art_a1_1" } })) as { isError?: boolean }).isError ?? false).toBe(false)
    const refused = (await client.callTool({ name: "list_sites", arguments: {} })) as { isError?: boolean; content: Array<{ text: string }> }
    expect(refused.isError).toBe(true)
    const problem = JSON.parse(refused.content[0]?.text ?? "{}") as { code: string; retry_after: number }
    expect(problem.code).toBe("rate_limited")
    expect(problem.retry_after).toBeGreaterThan(0)
    expect((await rest()).status).toBe(429)
  }, 70_000)
})

describe("client registration", () => {
  let limited: StartedServer
  beforeAll(async () => {
    limited = await startSeeded({ OAUTH_REGISTRATION_LIMIT_PER_HOUR: "2" })
  }, 60_000)
  afterAll(async () => {
    await limited?.close()
  })
  const register = (name: string) =>
    fetch(`${limited.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: name, redirect_uris: ["http://127.0.0.1:9/cb"], token_endpoint_auth_method: "none" }),
    })

  it("should refuse registrations past the hourly budget of a client address with 429 rate_limited", async () => {
    expect((await register("one")).status).toBe(201)
    expect((await register("two")).status).toBe(201)
    const refused = await register("three")
    expect(refused.status).toBe(429)
    expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/)
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(((await refused.json()) as { code: string }).code).toBe("rate_limited")
    // the rest of the authorization server is not affected
    expect((await fetch(`${limited.url}/.well-known/oauth-authorization-server`)).status).toBe(200)
  })
})
