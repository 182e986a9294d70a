import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { StartedServer } from "../../apps/server/server.ts"
import { middayToday, testClock } from "../support/clock.ts"
import { ALICE, connect, ScriptedOAuthProvider, startSeeded } from "./support.ts"

let server: StartedServer
let client: Client
// The server's clock stands still until the test moves it: the one-minute window cannot end mid-test.
const clock = testClock(middayToday())

beforeAll(async () => {
  server = await startSeeded({ RATE_LIMIT_PER_MINUTE: "4" }, { now: clock.now })
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
    const rest = (path = "/sites") => fetch(`${server.url}/api/v1${path}`, { headers: { authorization: `Bearer ${ALICE.apiKey}` } })
    expect((await rest()).status).toBe(200)
    expect((await rest()).status).toBe(200)
    const ok = (await client.callTool({ name: "list_sites", arguments: {} })) as { isError?: boolean }
    expect(ok.isError ?? false).toBe(false)
    expect(((await client.callTool({ name: "get_article", arguments: { article_id: "art_a1_1" } })) as { isError?: boolean }).isError ?? false).toBe(false)
    const refused = (await client.callTool({ name: "list_backlinks", arguments: { site_id: "site_a1" } })) as { isError?: boolean; content: Array<{ text: string }> }
    expect(refused.isError).toBe(true)
    const problem = JSON.parse(refused.content[0]?.text ?? "{}") as { code: string; retry_after: number }
    expect(problem.code).toBe("rate_limited")
    // 30 s into the minute: the window ends in 30 s.
    expect(problem.retry_after).toBe(30)
    expect((await rest()).status).toBe(429)

    // In the next minute the budget is back, and the refused tool call is in the log with its code.
    clock.advance(60_000)
    const log = await rest("/activity?channel=mcp&per_page=100")
    expect(log.status).toBe(200)
    const entries = ((await log.json()) as { data: Array<{ action: string; status: string; error_code: string | null; site_id: string | null }> }).data
    expect(entries.filter((e) => e.action === "list_backlinks")).toEqual([
      expect.objectContaining({ status: "error", error_code: "rate_limited", site_id: "site_a1" }),
    ])
    expect(entries.filter((e) => e.error_code === null).map((e) => e.action).sort()).toEqual(["get_article", "list_sites"])
  })
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
