/**
 * Dynamic client registration (RFC 7591): what a registration may carry. A client's name is
 * shown on pages and copied into activity entries, so it is bounded; a redirect URI is https but
 * for loopback addresses (RFC 8252), so an authorization code never crosses a network in the clear.
 */
import { createHash, randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { StartedServer } from "../../apps/server/server.ts"
import { ALICE, connect, ScriptedOAuthProvider, startSeeded } from "./support.ts"

let server: StartedServer
beforeAll(async () => {
  server = await startSeeded({ OAUTH_REGISTRATION_LIMIT_PER_HOUR: "1000" })
}, 60_000)
afterAll(async () => {
  await server?.close()
})

const register = async (metadata: Record<string, unknown>) => {
  const res = await fetch(`${server.url}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: "Agent", redirect_uris: ["http://127.0.0.1:9/cb"], token_endpoint_auth_method: "none", ...metadata }),
  })
  return { status: res.status, body: (await res.json()) as { error?: string; error_description?: string } }
}

describe("client registration", () => {
  it("should accept a client name of 100 characters and refuse a longer one with invalid_client_metadata", async () => {
    expect((await register({ client_name: "n".repeat(100) })).status).toBe(201)
    // characters, not UTF-16 units: 100 emoji are 100 characters
    expect((await register({ client_name: "🙂".repeat(100) })).status).toBe(201)
    for (const name of ["n".repeat(101), "x".repeat(40_000)]) {
      const refused = await register({ client_name: name })
      expect(refused.status).toBe(400)
      expect(refused.body.error).toBe("invalid_client_metadata")
      expect(refused.body.error_description).toMatch(/at most 100 characters/)
    }
  })

  it("should let a browser-based client register cross-origin: a preflight answered, the registration readable", async () => {
    const origin = "https://inspector.example"
    const preflight = await fetch(`${server.url}/oauth/register`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get("access-control-allow-origin")).toBe("*")
    expect(preflight.headers.get("access-control-allow-methods")).toBe("POST")
    expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("content-type")
    const registered = await fetch(`${server.url}/oauth/register`, {
      method: "POST",
      headers: { origin, "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Browser client", redirect_uris: ["http://127.0.0.1:6274/oauth/callback"], token_endpoint_auth_method: "none" }),
    })
    expect(registered.status).toBe(201)
    expect(registered.headers.get("access-control-allow-origin")).toBe("*")
    // a refusal is readable too (the client can show why)
    const refused = await fetch(`${server.url}/oauth/register`, { method: "POST", headers: { origin, "content-type": "application/json" }, body: JSON.stringify({ redirect_uris: ["ftp://x"] }) })
    expect(refused.status).toBe(400)
    expect(refused.headers.get("access-control-allow-origin")).toBe("*")
  })

  it("should accept https redirect URIs and plain http to loopback only", async () => {
    for (const uri of ["https://agent.test/cb", "http://127.0.0.1:9/cb", "http://[::1]:9/cb", "http://localhost:9/cb"]) {
      expect((await register({ redirect_uris: [uri] })).status, uri).toBe(201)
    }
    for (const uri of ["http://agent.test/cb", "http://10.0.0.1/cb", "http://127.0.0.1.agent.test/cb"]) {
      const refused = await register({ redirect_uris: ["https://agent.test/ok", uri] })
      expect(refused.status, uri).toBe(400)
      expect(refused.body.error).toBe("invalid_redirect_uri")
    }
  })

  it("should show a client's name on the sign-in page without bidi controls", async () => {
    const registered = await fetch(`${server.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Good\u202Eliveagent", redirect_uris: ["http://127.0.0.1:9/cb"], token_endpoint_auth_method: "none" }),
    })
    expect(registered.status).toBe(201)
    const { client_id: clientId } = (await registered.json()) as { client_id: string }
    const challenge = createHash("sha256").update(randomBytes(32).toString("base64url")).digest("base64url")
    const query = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: "http://127.0.0.1:9/cb", scope: "mcp", code_challenge: challenge, code_challenge_method: "S256", state: "s" })
    const authorize = await fetch(`${server.url}/oauth/authorize?${query}`, { redirect: "manual" })
    expect(authorize.status).toBe(303)
    const cookies = authorize.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ")
    const page = await (await fetch(new URL(authorize.headers.get("location")!, server.url), { headers: { cookie: cookies } })).text()
    expect(page).toContain("Goodliveagent")
    expect(page).not.toContain("\u202E")
  })

  it("should let a native client ask for its code on any port of the loopback URI it registered (RFC 8252)", async () => {
    // as Claude Code registers (no port) and asks (the port it was given), then with the
    // registered port moved (as VS Code falls back when its port is taken): connected both times
    for (const [registered, asked] of [
      ["http://127.0.0.1/callback", "http://127.0.0.1:49152/callback"],
      ["http://localhost:33418/", "http://localhost:50001/"],
    ] as const) {
      const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Editor Agent", { asked, registered: [registered] })
      const client = await connect(`${server.url}/mcp`, provider)
      expect(client, `${registered} asked as ${asked}`).toBeDefined()
      expect((await client!.listTools()).tools.length).toBeGreaterThan(0)
      await client!.close()
    }
  })

  it("should refuse a redirect URI that differs from the registered one in more than a loopback port", async () => {
    const { client_id: clientId } = (await (
      await fetch(`${server.url}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ client_name: "Agent", redirect_uris: ["http://127.0.0.1/callback", "https://agent.test/cb"], token_endpoint_auth_method: "none" }),
      })
    ).json()) as { client_id: string }
    const authorize = (redirectUri: string) => {
      const challenge = createHash("sha256").update(randomBytes(32).toString("base64url")).digest("base64url")
      const query = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: redirectUri, scope: "mcp", code_challenge: challenge, code_challenge_method: "S256", state: "s" })
      return fetch(`${server.url}/oauth/authorize?${query}`, { redirect: "manual" })
    }
    // the port alone: on to the sign-in
    expect((await authorize("http://127.0.0.1:40000/callback")).status).toBe(303)
    for (const uri of ["http://localhost:40000/callback", "http://127.0.0.1:40000/other", "https://agent.test:8443/cb", "http://agent.test/cb"]) {
      const refused = await authorize(uri)
      // the provider's error page, never a redirect to the unregistered URI
      expect(refused.status, uri).toBe(400)
      expect(refused.headers.get("location"), uri).toBeNull()
      expect(await refused.text(), uri).toContain("redirect_uri")
    }
  })
})
