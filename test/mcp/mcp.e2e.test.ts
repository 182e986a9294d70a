import { OAuthStore } from "@content-site/core"
import { listConnectedClients, revokeConnectedClient } from "@content-site/mcp"
import type { StartedServer } from "../../apps/server/server.ts"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { Option } from "effect"
import { importJWK, type JWK, SignJWT } from "jose"
import pg from "pg"
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../support/eventually.ts"
import { EXPECTED_SUMMARY, PERIOD } from "../support/periodFixture.ts"
import { ALICE, BOB, Browser, connect, connectOrFail, formOf, ScriptedOAuthProvider, type SeededServer, startSeeded } from "./support.ts"

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

type ToolResult = { isError?: boolean; structuredContent?: Record<string, unknown>; content: Array<{ type: string; text?: string }> }

let server: StartedServer
let mcpUrl: string
let client: Client
let provider: ScriptedOAuthProvider
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }))
const validators = new Map<string, (data: unknown) => boolean>()

const rest = async (path: string, init: { method?: string; body?: unknown } = {}) => {
  const response = await fetch(`${server.url}/api/v1${path}`, {
    method: init.method ?? "GET",
    headers: { authorization: `Bearer ${ALICE.apiKey}`, ...(init.body !== undefined ? { "content-type": "application/json" } : {}) },
    body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
  })
  return { status: response.status, json: (await response.json()) as Record<string, unknown> }
}

const call = async (name: string, args: Record<string, unknown>, via: Client = client): Promise<ToolResult> =>
  (await via.callTool({ name, arguments: args })) as ToolResult

const problemOf = (result: ToolResult) => {
  expect(result.isError).toBe(true)
  expect(result.structuredContent).toBeUndefined()
  expect(result.content).toHaveLength(1)
  return JSON.parse(result.content[0]?.text ?? "") as Record<string, unknown>
}

const okContent = (name: string, result: ToolResult) => {
  expect(result.isError ?? false).toBe(false)
  const validate = validators.get(name)
  expect(validate?.(result.structuredContent), JSON.stringify(ajv.errors)).toBe(true)
  expect(result.content[0]?.type).toBe("text")
  return result.structuredContent
}

const signingKey = async (): Promise<JWK> => {
  const stored = await server.runtime.runPromise(OAuthStore.use((s) => s.find("Jwks", "signing")))
  const keys = (Option.getOrThrow(stored) as { keys: Array<JWK> }).keys
  return keys[0] as JWK
}

const decodeJwt = (token: string) => JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString()) as Record<string, unknown>

const rawToolCall = (token: string, extraHeaders: Record<string, string> = {}) =>
  fetch(mcpUrl, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...extraHeaders,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_sites", arguments: {} } }),
  })

beforeAll(async () => {
  // Many calls within a minute: the request limit is not what these tests are about (limits.test.ts).
  server = await startSeeded({ IMAGE_FETCH_ALLOW_PRIVATE: "false", RATE_LIMIT_PER_MINUTE: "100000", MCP_ALLOWED_HOSTS: " Alias.Example:8080 ,, 10.0.0.5" })
  mcpUrl = `${server.url}/mcp`
  provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" })
  client = await connectOrFail(mcpUrl, provider)
  const { tools } = await client.listTools()
  for (const tool of tools) validators.set(tool.name, ajv.compile(tool.outputSchema as object) as (d: unknown) => boolean)
}, 60_000)

afterAll(async () => {
  await client?.close()
  await server?.close()
})

describe("discovery", () => {
  it("should answer /mcp without a token with 401 and the protected resource metadata URL", async () => {
    const response = await fetch(mcpUrl, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
    expect(response.status).toBe(401)
    expect(response.headers.get("www-authenticate")).toContain(
      `Bearer resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp"`,
    )
    expect(((await response.json()) as { code: string }).code).toBe("unauthenticated")

    // Logged like every connector call, with no account and no actor (in no account's view).
    const wrongToken = await fetch(mcpUrl, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer not-a-token" }, body: "{}" })
    expect(wrongToken.status).toBe(401)
    const ids = [response.headers.get("x-request-id")!, wrongToken.headers.get("x-request-id")!]
    const db = new pg.Client({ connectionString: (server as SeededServer).databaseUrl })
    await db.connect()
    try {
      const rows = await eventually(
        async () =>
          (await db.query("select request_id, account_id, actor, channel, action, status, error_code from activity where request_id = any($1)", [ids])).rows as Array<
            Record<string, unknown>
          >,
        (r) => r.length === 2,
        10_000,
      )
      expect(rows.map((r) => [r["request_id"], r["account_id"], r["actor"], r["channel"], r["action"], r["status"], r["error_code"]]).sort()).toEqual(
        ids.map((id) => [id, null, null, "mcp", "POST /mcp", "error", "unauthenticated"]).sort(),
      )
    } finally {
      await db.end()
    }
  })

  it("should serve RFC 9728 protected resource metadata naming the authorization server", async () => {
    const response = await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`)
    expect(response.status).toBe(200)
    const body = (await response.json()) as Record<string, unknown>
    expect(body["resource"]).toBe(mcpUrl)
    expect(body["authorization_servers"]).toEqual([server.url])
  })

  it("should serve RFC 8414 metadata with registration, PKCE S256 only and the code flow", async () => {
    const response = await fetch(`${server.url}/.well-known/oauth-authorization-server`)
    expect(response.status).toBe(200)
    const body = (await response.json()) as Record<string, unknown>
    expect(body["issuer"]).toBe(server.url)
    expect(body["registration_endpoint"]).toBe(`${server.url}/oauth/register`)
    expect(body["authorization_endpoint"]).toBe(`${server.url}/oauth/authorize`)
    expect(body["token_endpoint"]).toBe(`${server.url}/oauth/token`)
    expect(body["code_challenge_methods_supported"]).toEqual(["S256"])
    expect(body["response_types_supported"]).toEqual(["code"])
    expect(body["grant_types_supported"]).toEqual(expect.arrayContaining(["authorization_code", "refresh_token"]))
  })
})

describe("the OAuth flow", () => {
  it("should introduce itself to the client: its name, title, what it is for and where it is managed", () => {
    const info = client.getServerVersion()
    expect(info?.name).toBe("content-site")
    expect(info?.title).toBe("Content-Site")
    expect(info?.description).toMatch(/articles/)
    expect(info?.websiteUrl).toBe(`${server.url}/connect`)
  })

  it("should issue a short-lived JWT access token bound to {mcp_url} and the account, with a refresh token", () => {
    const tokens = provider.savedTokens
    expect(tokens?.refresh_token).toBeTruthy()
    expect(tokens?.expires_in).toBeLessThanOrEqual(15 * 60)
    const claims = decodeJwt(tokens?.access_token ?? "")
    expect(claims["aud"]).toBe(mcpUrl)
    expect(claims["sub"]).toBe("acc_alice")
    expect(claims["iss"]).toBe(server.url)
  })

  it("should rotate refresh tokens and refuse a used one", async () => {
    const flow = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Rotation Agent")
    const rotating = await connect(mcpUrl, flow)
    await rotating?.close()
    const clientId = flow.client?.client_id ?? ""
    const first = flow.savedTokens?.refresh_token ?? ""
    const refresh = (token: string) =>
      fetch(`${server.url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: token, client_id: clientId, resource: mcpUrl }),
      })
    const renewed = await refresh(first)
    expect(renewed.status).toBe(200)
    const body = (await renewed.json()) as { access_token: string; refresh_token: string }
    expect(body.refresh_token).not.toBe(first)
    expect(decodeJwt(body.access_token)["aud"]).toBe(mcpUrl)
    const reused = await refresh(first)
    expect(reused.status).toBe(400)
    expect(((await reused.json()) as { error: string }).error).toBe("invalid_grant")
  })

  it("should send the person back with access_denied when they click Deny", async () => {
    const denying = new ScriptedOAuthProvider({ ...ALICE, decision: "deny" }, "Denied Agent")
    const result = await connect(mcpUrl, denying)
    expect(result).toBeUndefined()
    expect(denying.authorizationError).toBe("access_denied")
    expect(denying.authorizationCode).toBeUndefined()
  })

  it("should keep the person on the sign-in page with a wrong password and issue nothing", async () => {
    const wrong = new ScriptedOAuthProvider({ email: ALICE.email, password: "not-the-password", decision: "allow" }, "Wrong Password Agent")
    const result = await connect(mcpUrl, wrong)
    expect(result).toBeUndefined()
    expect(wrong.signInStatus).toBe(401)
    expect(wrong.lastPage).toContain("Wrong email or password.")
    expect(wrong.authorizationCode).toBeUndefined()
  })

  it("should show plain forms with email, password, a CSRF token and Allow/Deny buttons naming client, host and account", async () => {
    const browser = new Browser()
    const register = await fetch(`${server.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Page Agent", redirect_uris: ["http://127.0.0.1:7/cb"], token_endpoint_auth_method: "none" }),
    })
    expect(register.status).toBe(201)
    const { client_id } = (await register.json()) as { client_id: string }
    const authorize = new URL(`${server.url}/oauth/authorize`)
    authorize.search = new URLSearchParams({
      client_id,
      response_type: "code",
      redirect_uri: "http://127.0.0.1:7/cb",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
      scope: "mcp",
      resource: mcpUrl,
      state: "xyz",
    }).toString()
    const start = await browser.request(authorize.toString())
    expect(start.status).toBe(303)
    const pageUrl = new URL(start.headers.get("location") ?? "", server.url).toString()
    const signIn = await browser.request(pageUrl)
    const html = await signIn.text()
    expect(signIn.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
    expect(html).toContain('<form method="post"')
    expect(html).toContain('name="email"')
    expect(html).toContain('name="password"')
    expect(html).toContain("Page Agent")
    expect(html).not.toContain("<script")
    const login = formOf(html, "/login")
    expect(login.fields["csrf"]).toBeTruthy()
    const forged = await browser.request(new URL(login.action, server.url).toString(), {
      form: { csrf: "forged", email: ALICE.email, password: ALICE.password },
    })
    expect(forged.status).toBe(403)
    const signedIn = await browser.request(new URL(login.action, server.url).toString(), {
      form: { ...login.fields, email: ALICE.email, password: ALICE.password },
    })
    expect(signedIn.status).toBe(303)
    let next = new URL(signedIn.headers.get("location") ?? "", server.url).toString()
    const resumed = await browser.request(next)
    next = new URL(resumed.headers.get("location") ?? "", server.url).toString()
    const consent = await (await browser.request(next)).text()
    expect(consent).toContain("Page Agent")
    expect(consent).toContain("127.0.0.1:7")
    expect(consent).toContain(ALICE.email)
    expect(consent).toMatch(/<button[^>]*>Allow<\/button>/)
    expect(consent).toMatch(/<button[^>]*>Deny<\/button>/)
    expect(formOf(consent, "/confirm").fields["csrf"]).toBeTruthy()
  })

  it("should offer 'Continue as' to a person already signed in to the web pages", async () => {
    const browser = new Browser()
    const home = await (await browser.request(`${server.url}/`)).text()
    const csrf = /name="_csrf" value="([^"]+)"/.exec(home)?.[1] ?? ""
    const signedIn = await browser.request(`${server.url}/`, { form: { _csrf: csrf, next: "/sites", email: ALICE.email, password: ALICE.password } })
    expect(signedIn.status).toBe(303)
    const flow = new ScriptedOAuthProvider({ email: "", password: "", decision: "allow" }, "Session Agent")
    const original = flow.browser.request.bind(flow.browser)
    flow.browser.cookies.clear()
    for (const [k, v] of browser.cookies) flow.browser.cookies.set(k, v)
    let offered = false
    flow.browser.request = async (url, init = {}) => {
      const form = init.form
      // Instead of typing a password, the person clicks "Continue as ...".
      if (form !== undefined && url.endsWith("/login")) return original(url, { form: { csrf: form["csrf"] ?? "", continue: "session" } })
      const response = await original(url, init)
      const html = await response.clone().text()
      if (html.includes(`Continue as ${ALICE.email}`)) offered = true
      return response
    }
    const connected = await connect(mcpUrl, flow)
    expect(offered).toBe(true)
    expect(connected).toBeDefined()
    await connected?.close()
    expect(decodeJwt(flow.savedTokens?.access_token ?? "")["sub"]).toBe("acc_alice")
  })

  it("should refuse a resource other than {mcp_url} with invalid_target", async () => {
    const register = await fetch(`${server.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Other Resource", redirect_uris: ["http://127.0.0.1:7/cb"], token_endpoint_auth_method: "none" }),
    })
    const { client_id } = (await register.json()) as { client_id: string }
    const authorize = new URL(`${server.url}/oauth/authorize`)
    authorize.search = new URLSearchParams({
      client_id,
      response_type: "code",
      redirect_uri: "http://127.0.0.1:7/cb",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
      scope: "mcp",
      resource: `${server.url}/api/v1`,
    }).toString()
    const response = await fetch(authorize, { redirect: "manual" })
    expect(new URL(response.headers.get("location") ?? "").searchParams.get("error")).toBe("invalid_target")
  })

  it("should escape a registered client name on the sign-in page", async () => {
    const hostile = `<img src=x onerror="alert(1)">Evil`
    const flow = new ScriptedOAuthProvider({ email: ALICE.email, password: "wrong-on-purpose", decision: "deny" }, hostile)
    await connect(mcpUrl, flow)
    expect(flow.lastPage).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;Evil")
    expect(flow.lastPage).not.toContain("<img")
  })

  it("should answer an unknown client with an HTML error page carrying the security headers", async () => {
    const response = await fetch(`${server.url}/oauth/authorize?client_id=bogus&response_type=code`, { redirect: "manual" })
    expect(response.status).toBe(400)
    expect(response.headers.get("x-content-type-options")).toBe("nosniff")
    expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
    expect(await response.text()).not.toContain("<script")
  })

  it("should refuse an authorization request without PKCE", async () => {
    const register = await fetch(`${server.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "No PKCE", redirect_uris: ["http://127.0.0.1:7/cb"], token_endpoint_auth_method: "none" }),
    })
    const { client_id } = (await register.json()) as { client_id: string }
    const authorize = new URL(`${server.url}/oauth/authorize`)
    authorize.search = new URLSearchParams({ client_id, response_type: "code", redirect_uri: "http://127.0.0.1:7/cb", scope: "mcp" }).toString()
    const response = await fetch(authorize, { redirect: "manual" })
    expect(new URL(response.headers.get("location") ?? "").searchParams.get("error")).toBe("invalid_request")
  })
})

describe("the resource server", () => {
  it("should refuse an API key at /mcp", async () => {
    const response = await rawToolCall(ALICE.apiKey)
    expect(response.status).toBe(401)
    expect(response.headers.get("www-authenticate")).toContain('error="invalid_token"')
    expect(response.headers.get("www-authenticate")).toContain("resource_metadata=")
  })

  it("should refuse an OAuth access token at the REST API", async () => {
    const response = await fetch(`${server.url}/api/v1/sites`, { headers: { authorization: `Bearer ${provider.savedTokens?.access_token}` } })
    expect(response.status).toBe(401)
    expect(((await response.json()) as { code: string }).code).toBe("unauthenticated")
  })

  it("should answer malformed JSON with a JSON-RPC parse error and GET with 405", async () => {
    const token = provider.savedTokens?.access_token ?? ""
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" }
    const broken = await fetch(mcpUrl, { method: "POST", headers, body: "{" })
    expect(broken.status).toBe(400)
    expect(((await broken.json()) as { error: { code: number } }).error.code).toBe(-32700)
    const get = await fetch(mcpUrl, { headers })
    expect(get.status).toBe(405)
    expect(get.headers.get("allow")).toBe("POST")
  })

  it("should answer the Streamable HTTP checks of a stateless POST like the SDK's transport", async () => {
    const token = provider.savedTokens?.access_token ?? ""
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" }
    const list = { jsonrpc: "2.0", id: 7, method: "tools/list" }
    const post = (body: unknown, extra: Record<string, string> = {}) =>
      fetch(mcpUrl, { method: "POST", headers: { ...headers, ...extra }, body: typeof body === "string" ? body : JSON.stringify(body) })
    const errorOf = async (response: Response) => ((await response.json()) as { error: { code: number; message: string }; id: null })
    const notAcceptable = await post(list, { accept: "application/json" })
    expect(notAcceptable.status).toBe(406)
    expect((await errorOf(notAcceptable)).error.message).toContain("Not Acceptable")
    const wrongType = await post(list, { "content-type": "text/plain; a=application/json" })
    expect(wrongType.status).toBe(415)
    // JSON that parses but is no JSON-RPC message is JSON-RPC's Invalid Request; -32700 is for JSON that does not parse
    for (const notMessage of [{ hello: "world" }, { jsonrpc: "1.0", id: 1, method: "ping" }, [list, 5], 5]) {
      const notRpc = await post(notMessage)
      expect(notRpc.status).toBe(400)
      expect((await errorOf(notRpc)).error.code, JSON.stringify(notMessage)).toBe(-32600)
    }
    // an empty array is neither a message nor a batch of one or more (JSON-RPC 2.0: Invalid Request)
    const emptyBatch = await post([])
    expect(emptyBatch.status).toBe(400)
    expect((await errorOf(emptyBatch)).error.code).toBe(-32600)
    const tooMany = await post(Array.from({ length: 101 }, (_, i) => ({ ...list, id: i })))
    expect(tooMany.status).toBe(400)
    expect((await errorOf(tooMany)).error.code).toBe(-32600)
    const badVersion = await post(list, { "mcp-protocol-version": "1999-01-01" })
    expect(badVersion.status).toBe(400)
    expect((await errorOf(badVersion)).error.message).toContain("Unsupported protocol version")
    const twoInits = await post([
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "a", version: "1" } } },
      list,
    ])
    expect(twoInits.status).toBe(400)
    expect((await errorOf(twoInits)).error.code).toBe(-32600)
    // The newest revision the SDK speaks is answered as asked; an older one a client still sends, too;
    // one the server does not know gets the newest.
    for (const [asked, answered] of [["2025-11-25", "2025-11-25"], ["2025-06-18", "2025-06-18"], ["2025-03-26", "2025-03-26"], ["2031-01-01", "2025-11-25"]] as const) {
      const init = await post({ jsonrpc: "2.0", id: 9, method: "initialize", params: { protocolVersion: asked, capabilities: {}, clientInfo: { name: "v", version: "1" } } })
      expect(init.status).toBe(200)
      expect(((await init.json()) as { result: { protocolVersion: string } }).result.protocolVersion, asked).toBe(answered)
    }
    const notification = await post({ jsonrpc: "2.0", method: "notifications/initialized" })
    expect(notification.status).toBe(202)
    expect(await notification.text()).toBe("")
    // a batch: each answer under its own id, in order
    const batch = await post([list, { ...list, id: "second" }])
    expect(batch.status).toBe(200)
    const answers = (await batch.json()) as Array<{ id: unknown; result: { tools: Array<unknown> } }>
    expect(answers.map((a) => a.id)).toEqual([7, "second"])
    expect(answers[0]?.result.tools.length).toBeGreaterThan(5)
  })

  it("should refuse a cursor of a list that comes whole (tools, prompts, resource templates) with invalid params, as resources/list does", async () => {
    const token = provider.savedTokens?.access_token ?? ""
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" }
    for (const method of ["tools/list", "prompts/list", "resources/templates/list", "resources/list"]) {
      const response = await fetch(mcpUrl, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 3, method, params: { cursor: "not-given" } }) })
      expect(response.status).toBe(200)
      const answer = (await response.json()) as { id: number; error?: { code: number; data: { code: string; errors: Array<{ path: string }> } } }
      expect(answer.error?.code, method).toBe(-32602)
      expect(answer.error?.data.code).toBe("invalid_request")
      expect(answer.error?.data.errors.map((e) => e.path)).toEqual(["cursor"])
    }
  })

  it("should refuse an expired token", async () => {
    const claims = decodeJwt(provider.savedTokens?.access_token ?? "")
    const key = await importJWK(await signingKey(), "ES256")
    const now = Math.floor(Date.now() / 1000)
    const expired = await new SignJWT({ ...claims, iat: now - 3600, exp: now - 60 })
      .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid: (await signingKey()).kid ?? "" })
      .sign(key)
    const response = await rawToolCall(expired)
    expect(response.status).toBe(401)
    expect(response.headers.get("www-authenticate")).toContain('error="invalid_token"')
  })

  it("should refuse a token for another audience", async () => {
    const claims = decodeJwt(provider.savedTokens?.access_token ?? "")
    const jwk = await signingKey()
    const wrong = await new SignJWT({ ...claims, aud: `${server.url}/api/v1` })
      .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid: jwk.kid ?? "" })
      .sign(await importJWK(jwk, "ES256"))
    const response = await rawToolCall(wrong)
    expect(response.status).toBe(401)
  })

  it("should accept the real token on a raw request and refuse a foreign Host or Origin with 403", async () => {
    const token = provider.savedTokens?.access_token ?? ""
    expect((await rawToolCall(token)).status).toBe(200)
    expect((await rawToolCall(token, { origin: "http://evil.example" })).status).toBe(403)
    // fetch cannot override Host; a raw request can.
    const withHost = (host: string) =>
      new Promise<number>((resolve, reject) => {
        import("node:http").then(({ request }) => {
          const url = new URL(mcpUrl)
          const req = request(
            { host: url.hostname, port: url.port, path: "/mcp", method: "POST", headers: { host, authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" } },
            (res) => {
              res.resume()
              resolve(res.statusCode ?? 0)
            },
          )
          req.on("error", reject)
          req.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_sites", arguments: {} } }))
        }, reject)
      })
    expect(await withHost("evil.example")).toBe(403)
    // MCP_ALLOWED_HOSTS' names, and PUBLIC_URL's, in any case (a host name's case means nothing)
    expect(await withHost("alias.example:8080")).toBe(200)
    expect(await withHost("ALIAS.EXAMPLE:8080")).toBe(200)
    expect(await withHost("10.0.0.5")).toBe(200)
    expect(await withHost(new URL(mcpUrl).host.toUpperCase())).toBe(200)
    expect(await withHost("alias.example:8081")).toBe(403)
  })
})

/** The tools the contract names: the seven of the seed and the agent-grade editing ones. */
const READ_TOOLS = ["list_sites", "list_articles", "get_article", "list_backlinks", "get_stats"]
const CONTRACT_TOOLS = [...READ_TOOLS, "update_article", "replace_featured_image"]

describe("the tools", () => {
  it("should list the contract's tools with titles, descriptions, schemas and the contract's annotations", async () => {
    const { tools } = await client.listTools()
    const names = tools.map((t) => t.name)
    // Every tool the contract names is there (a documented addition is no failure), each once.
    expect(names).toEqual(expect.arrayContaining(CONTRACT_TOOLS))
    expect(new Set(names).size).toBe(names.length)
    for (const tool of tools) {
      expect(tool.title).toBeTruthy()
      expect(tool.description?.length).toBeGreaterThan(80)
      expect(tool.inputSchema.type).toBe("object")
      expect(tool.outputSchema?.type).toBe("object")
    }
    const annotations = Object.fromEntries(tools.map((t) => [t.name, t.annotations]))
    for (const read of READ_TOOLS) {
      expect(annotations[read]).toMatchObject({ readOnlyHint: true, openWorldHint: false })
    }
    expect(annotations["update_article"]).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false })
    expect(annotations["replace_featured_image"]).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: true,
    })
  })

  it("should return for every read tool the REST JSON of the same call, valid against the output schema", async () => {
    const pairs: Array<[string, Record<string, unknown>, string]> = [
      ["list_sites", {}, "/sites"],
      ["list_sites", { page: 2, per_page: 1 }, "/sites?page=2&per_page=1"],
      ["list_articles", { site_id: "site_a1", per_page: 2 }, "/sites/site_a1/articles?per_page=2"],
      ["list_articles", { site_id: "site_a1", status: "draft" }, "/sites/site_a1/articles?status=draft"],
      ["get_article", { article_id: "art_a1_1" }, "/articles/art_a1_1"],
      ["list_backlinks", { site_id: "site_a1", per_page: 3, page: 1 }, "/sites/site_a1/backlinks?per_page=3&page=1"],
      ["get_stats", { site_id: "site_a1", period: "last_30_days" }, "/sites/site_a1/stats?period=last_30_days"],
    ]
    for (const [name, args, path] of pairs) {
      const viaMcp = okContent(name, await call(name, args))
      const viaRest = await rest(path)
      expect(viaRest.status).toBe(200)
      expect(viaMcp, name).toEqual(viaRest.json)
    }
  })

  it("should answer another account's ids with not_found, like REST", async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ["get_article", { article_id: "art_b1_1" }, "/articles/art_b1_1"],
      ["list_articles", { site_id: "site_b1" }, "/sites/site_b1/articles"],
      ["list_backlinks", { site_id: "site_b1" }, "/sites/site_b1/backlinks"],
      ["get_stats", { site_id: "site_b1" }, "/sites/site_b1/stats"],
    ]
    for (const [name, args, path] of cases) {
      const problem = problemOf(await call(name, args))
      const viaRest = await rest(path)
      expect(problem["code"]).toBe("not_found")
      expect(problem["detail"]).toBe(viaRest.json["detail"])
    }
    const write = problemOf(await call("update_article", { article_id: "art_b1_1", title: "Mine now" }))
    expect(write["code"]).toBe("not_found")
    const sites = okContent("list_sites", await call("list_sites", {})) as { data: Array<{ id: string }> }
    expect(sites.data.map((s) => s.id)).not.toContain("site_b1")
  })

  it("should show a connection of another account only that account's sites and refuse Alice's ids", async () => {
    const bob = await connect(mcpUrl, new ScriptedOAuthProvider({ ...BOB, decision: "allow" }, "Bob's Agent"))
    if (bob === undefined) throw new Error("Bob could not connect")
    try {
      const sites = okContent("list_sites", await call("list_sites", {}, bob)) as { data: Array<{ id: string }> }
      expect(sites.data.map((s) => s.id)).toEqual(["site_b1"])
      expect((okContent("get_article", await call("get_article", { article_id: "art_b1_1" }, bob)) as { title: string }).title).toBe("Bob article")
      expect(problemOf(await call("get_article", { article_id: "art_a1_1" }, bob))["code"]).toBe("not_found")
      expect(problemOf(await call("list_articles", { site_id: "site_a1" }, bob))["code"]).toBe("not_found")
      const before = (await rest("/articles/art_a1_5")).json
      expect(problemOf(await call("update_article", { article_id: "art_a1_5", title: "Bob was here" }, bob))["code"]).toBe("not_found")
      expect((await rest("/articles/art_a1_5")).json).toEqual(before)
    } finally {
      await bob.close()
    }
  })

  it("should summarise a month with get_stats exactly as REST does: counts and word count", async () => {
    const viaMcp = okContent("get_stats", await call("get_stats", { site_id: "site_a3", period: PERIOD.key })) as Record<string, any>
    const viaRest = await rest(`/sites/site_a3/stats?period=${PERIOD.key}`)
    expect(viaMcp).toEqual(viaRest.json)
    expect(viaMcp["period"]).toEqual(PERIOD)
    expect(viaMcp["articles"]["count"]).toBe(EXPECTED_SUMMARY.articles.count)
    expect(viaMcp["articles"]["word count"]).toBe(EXPECTED_SUMMARY.articles["word count"])
    expect(viaMcp["articles"]["items"].map((a: { id: string }) => a.id)).toEqual(EXPECTED_SUMMARY.articles.ids)
    expect(viaMcp["backlinks"]).toMatchObject({
      count: EXPECTED_SUMMARY.backlinks.count,
      industry: EXPECTED_SUMMARY.backlinks.industry,
      local: EXPECTED_SUMMARY.backlinks.local,
    })
    expect(viaMcp["backlinks"]["items"].map((b: { id: string }) => b.id)).toEqual(EXPECTED_SUMMARY.backlinks.ids)
  })

  it("should answer invalid arguments with an invalid_request tool error", async () => {
    const tooMany = problemOf(await call("list_articles", { site_id: "site_a1", per_page: 500 }))
    expect(tooMany["code"]).toBe("invalid_request")
    expect(tooMany["errors"]).toBeDefined()
    const unknownKey = problemOf(await call("update_article", { article_id: "art_a1_1", title: "x", status: "published" }))
    expect(unknownKey["code"]).toBe("invalid_request")
    expect(String(unknownKey["detail"])).toContain("status")
    const nothing = problemOf(await call("update_article", { article_id: "art_a1_1" }))
    expect(nothing["code"]).toBe("invalid_request")
  })

  it("should answer an unknown tool with a JSON-RPC error", async () => {
    const refused = await client.callTool({ name: "delete_everything", arguments: {} }).then(() => undefined, (e: { code: number; message: string }) => e)
    expect(refused).toMatchObject({ code: -32602 })
    // the SDK client puts "MCP error -32602:" before the server's message once; the server's own message has no prefix
    expect(refused!.message).toBe("MCP error -32602: Unknown tool: delete_everything")
    // logged as every refused tool call is: by its name when it is a tool name by MCP's rule, else as `tools/call`
    const garbled = await client.callTool({ name: "drop all;\u202e\n", arguments: {} }).then(() => undefined, (e: { code: number }) => e)
    expect(garbled).toMatchObject({ code: -32602 })
    const activity = await rest("/activity?channel=mcp&per_page=5")
    type Entry = { action: string; status: string; error_code: string | null; channel: string }
    const [last, before] = activity.json["data"] as Array<Entry>
    expect(before).toMatchObject({ action: "delete_everything", status: "error", error_code: "invalid_request", channel: "mcp" })
    expect(last).toMatchObject({ action: "tools/call", status: "error", error_code: "invalid_request", channel: "mcp" })
  })

  it("should echo at most the first 100 characters of an unknown tool's name, however long the name sent", async () => {
    // a megabyte of name was sent back whole in the error's message (an unknown prompt's name is cut to 100)
    const name = `${"n".repeat(99)}\u{1F600}${"x".repeat(1_000_000)}`
    const refused = await client.callTool({ name, arguments: {} }).then(() => undefined, (e: { code: number; message: string }) => e)
    expect(refused).toMatchObject({ code: -32602 })
    // the emoji's pair would straddle the cut: it is left out whole, never halved
    expect(refused!.message).toBe(`MCP error -32602: Unknown tool: ${"n".repeat(99)}…`)
  })

  it("should run update_article as a dry run equal to REST's dry run, writing nothing", async () => {
    const before = await rest("/articles/art_a1_2")
    const edit = { title: "Alpha article two, retitled", body: `${String(before.json["body"])}<p>More<script>alert(1)</script></p>` }
    const viaMcp = okContent("update_article", await call("update_article", { article_id: "art_a1_2", ...edit, dry_run: true }))
    const viaRest = await rest("/articles/art_a1_2?dry_run=true", { method: "PUT", body: edit })
    expect(viaMcp).toEqual(viaRest.json)
    expect((viaMcp as { revision: unknown }).revision).toBeNull()
    expect((viaMcp as { sanitized: { changed: boolean } }).sanitized.changed).toBe(true)
    expect((await rest("/articles/art_a1_2")).json).toEqual(before.json)
  })

  it("should not tell an update_article sent again on its base that it is identical to the article: the article holds it already", async () => {
    const before = await rest("/articles/art_a1_4")
    const base = before.json["revision"] as number
    const edit = { article_id: "art_a1_4", body: `${String(before.json["body"])}<p>Sent twice.</p>`, base_revision: base }
    const first = await call("update_article", edit)
    expect((okContent("update_article", first) as { revision: { number: number } }).revision.number).toBe(base + 1)
    // another writer's title since, then the same edit again: found saved, nothing made
    expect((await rest("/articles/art_a1_4", { method: "PUT", body: { title: "Retitled between the two" } })).status).toBe(200)
    const again = await call("update_article", edit)
    expect((okContent("update_article", again) as { revision: unknown }).revision).toBeNull()
    expect(again.content[0]?.text).toContain("Nothing changed: the article holds this edit already, so no new revision was made.")
    expect(again.content[0]?.text).not.toContain("identical")
  })

  it("should save update_article as an mcp revision, honour if_revision and refuse protected-link changes like REST", async () => {
    const before = await rest("/articles/art_a1_3")
    const revision = before.json["revision"] as number
    const saved = okContent(
      "update_article",
      await call("update_article", { article_id: "art_a1_3", title: "Retitled by an agent", reason: "clearer", if_revision: revision }),
    ) as { article: Record<string, unknown>; revision: { origin: string; number: number; actor: { type: string; name: string } } }
    expect(saved.revision.origin).toBe("mcp")
    expect(saved.revision.number).toBe(revision + 1)
    expect(saved.revision.actor).toMatchObject({ type: "oauth_client", name: "Test Agent" })
    expect(saved.article).toEqual((await rest("/articles/art_a1_3")).json)
    const revisions = await rest("/articles/art_a1_3/revisions")
    expect((revisions.json["data"] as Array<{ origin: string }>)[0]?.origin).toBe("mcp")

    const stale = problemOf(await call("update_article", { article_id: "art_a1_3", title: "Again", if_revision: revision }))
    expect(stale["code"]).toBe("precondition_failed")

    const stripped = { body: "<p>All links gone.</p>" }
    const refused = problemOf(await call("update_article", { article_id: "art_a1_3", ...stripped }))
    const viaRest = await rest("/articles/art_a1_3", { method: "PUT", body: stripped })
    expect(viaRest.status).toBe(422)
    expect(refused["code"]).toBe("protected_link_changed")
    expect(refused["detail"]).toBe(viaRest.json["detail"])
    expect(refused["blocks"]).toEqual(viaRest.json["blocks"])
  })

  it("should replace the featured image from base64 bytes as an mcp revision", async () => {
    const png = await sharp({ create: { width: 8, height: 6, channels: 3, background: "#3366cc" } }).png().toBuffer()
    const result = okContent(
      "replace_featured_image",
      await call("replace_featured_image", { article_id: "art_a1_4", image_base64: png.toString("base64"), mime_type: "image/png", alt: "Blue" }),
    ) as { article: { "featured image": { url: string; alt: string } }; revision: { origin: string } }
    expect(result.revision.origin).toBe("mcp")
    expect(result.article["featured image"].alt).toBe("Blue")
    expect(result.article["featured image"].url.startsWith(`${server.url}/media/`)).toBe(true)
    expect(result.article).toEqual((await rest("/articles/art_a1_4")).json)
    const notAnImage = problemOf(
      await call("replace_featured_image", { article_id: "art_a1_4", image_base64: Buffer.from("<svg/>").toString("base64"), mime_type: "image/png" }),
    )
    expect(notAnImage["code"]).toBe("unsupported_image")
    // an image over 10 MiB is payload_too_large however far over, as for a REST upload (not a bad argument)
    for (const extra of [1, 100, 1024 * 1024]) {
      const tooLarge = problemOf(
        await call("replace_featured_image", { article_id: "art_a1_4", image_base64: Buffer.alloc(10 * 1024 * 1024 + extra, 0xff).toString("base64"), mime_type: "image/png" }),
      )
      expect(tooLarge["code"], String(extra)).toBe("payload_too_large")
    }
    const privateUrl = problemOf(await call("replace_featured_image", { article_id: "art_a1_4", url: "https://127.0.0.1/x.png" }))
    expect(privateUrl["code"]).toBe("unsafe_url")
  })

  it("should log every tool call, refused ones included, in the activity log with channel mcp", async () => {
    // Its own connection, so that the entries it looks for are the calls it makes here.
    const logging = await connect(mcpUrl, new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Logging Agent"))
    if (logging === undefined) throw new Error("could not connect")
    const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: "#00aa00" } }).png().toBuffer()
    const calls: Array<[string, Record<string, unknown>, boolean]> = [
      ["list_sites", {}, true],
      ["list_articles", { site_id: "site_a1" }, true],
      ["get_article", { article_id: "art_a1_5" }, true],
      ["list_backlinks", { site_id: "site_a1" }, true],
      ["get_stats", { site_id: "site_a1" }, true],
      ["update_article", { article_id: "art_a1_5", title: "Logged edit" }, true],
      ["replace_featured_image", { article_id: "art_a1_5", image_base64: png.toString("base64"), mime_type: "image/png" }, true],
      ["get_article", { article_id: "art_b1_1" }, false],
      ["update_article", { article_id: "art_a1_5", body: "<p>no links</p>" }, false],
    ]
    try {
      for (const [name, args, succeeds] of calls) expect((await call(name, args, logging)).isError ?? false, name).toBe(!succeeds)
    } finally {
      await logging.close()
    }
    const activity = await rest("/activity?channel=mcp&per_page=100")
    type Entry = { action: string; channel: string; status: string; error_code: string | null; actor: { type: string; name: string }; article_id: string | null; site_id: string | null }
    const mine = (activity.json["data"] as Array<Entry>).filter((e) => e.actor.name === "Logging Agent").reverse()
    expect(mine.map((e) => e.action)).toEqual(calls.map(([name]) => name))
    expect(mine.every((e) => e.channel === "mcp" && e.actor.type === "oauth_client")).toBe(true)
    expect(mine.map((e) => e.status)).toEqual(calls.map(([, , ok]) => (ok ? "ok" : "error")))
    expect(mine.map((e) => e.error_code)).toEqual([null, null, null, null, null, null, null, "not_found", "protected_link_changed"])
    // An entry about an article of the caller carries the article's site, refused calls included.
    expect(mine[8]).toMatchObject({ article_id: "art_a1_5", site_id: "site_a1" })
  })
})

describe("finding articles: search, research connector, resources, completions, prompts", () => {
  type Link = { type: string; uri?: string; name?: string; title?: string; mimeType?: string; text?: string }
  it("should answer search_articles with the REST search's JSON, a text and one resource_link per article", async () => {
    const result = await call("search_articles", { q: "gardens", site_id: "site_a1", per_page: 3 })
    const viaMcp = okContent("search_articles", result) as { data: Array<{ id: string; title: string; snippet: string }> }
    const viaRest = await rest("/search?q=gardens&site_id=site_a1&per_page=3")
    expect(viaMcp).toEqual(viaRest.json)
    expect(viaMcp.data).toHaveLength(3)
    expect(viaMcp.data[0]!.snippet).toContain("<mark>gardens</mark>")
    expect((result.content as Array<Link>).slice(1)).toEqual(
      viaMcp.data.map((a) => ({ type: "resource_link", uri: `content-site://articles/${a.id}`, name: a.id, title: a.title, mimeType: "text/html" })),
    )
    const listed = await call("list_articles", { site_id: "site_a1", per_page: 2 })
    expect((listed.content as Array<Link>).filter((c) => c.type === "resource_link").map((c) => c.uri)).toEqual(
      ((listed.structuredContent as { data: Array<{ id: string }> }).data).map((a) => `content-site://articles/${a.id}`),
    )
    expect(problemOf(await call("search_articles", { q: "" }))["code"]).toBe("invalid_request")
    expect(problemOf(await call("search_articles", { q: "gardens", site_id: "site_b1" }))["code"]).toBe("not_found")
  })

  it("should send resource links only to clients of the revision that has them (2025-06-18 on), tool results and prompts alike", async () => {
    const token = provider.savedTokens?.access_token ?? ""
    const post = async (version: string | undefined, method: string, params: Record<string, unknown>) => {
      const res = await fetch(mcpUrl, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(version === undefined ? {} : { "mcp-protocol-version": version }),
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      })
      expect(res.status).toBe(200)
      return ((await res.json()) as { result: { content?: Array<Link>; messages?: Array<{ content: Link }> } }).result
    }
    const listArgs = { name: "list_articles", arguments: { site_id: "site_a1", per_page: 2 } }
    const promptArgs = { name: "refresh_article", arguments: { article_id: "art_a1_1" } }
    for (const [version, links] of [["2025-06-18", true], ["2025-11-25", true], ["2025-03-26", false], ["2024-11-05", false], [undefined, false]] as const) {
      const listed = await post(version, "tools/call", listArgs)
      expect([version, listed.content!.filter((c) => c.type === "resource_link").length]).toEqual([version, links ? 2 : 0])
      expect(listed.content![0]!.type).toBe("text")
      const prompt = await post(version, "prompts/get", promptArgs)
      expect([version, prompt.messages!.map((m) => m.content.type)]).toEqual([version, links ? ["text", "resource_link"] : ["text"]])
    }
  })

  it("should offer search and fetch exactly as research connectors define them", async () => {
    const { tools } = await client.listTools()
    const search = tools.find((t) => t.name === "search")!
    const fetchTool = tools.find((t) => t.name === "fetch")!
    expect(Object.keys(search.inputSchema.properties ?? {})).toEqual(["query"])
    expect(search.inputSchema.required).toEqual(["query"])
    expect(Object.keys(fetchTool.inputSchema.properties ?? {})).toEqual(["id"])
    expect(fetchTool.inputSchema.required).toEqual(["id"])
    expect(search.annotations).toMatchObject({ readOnlyHint: true })

    const found = (await call("search", { query: "gardens" })) as ToolResult
    // one text item holding the JSON, and the same object as structuredContent
    expect(found.content).toHaveLength(1)
    expect(found.content[0]!.type).toBe("text")
    const results = JSON.parse(found.content[0]!.text!) as { results: Array<Record<string, unknown>> }
    expect(okContent("search", found)).toEqual(results)
    expect(results.results.length).toBeGreaterThan(0)
    for (const r of results.results) expect(Object.keys(r).sort()).toEqual(["id", "title", "url"])
    expect(results.results.map((r) => r["id"])).not.toContain("art_b1_1")
    // asked as a question, as chat assistants ask: the same articles, found by the question's own word
    const asked = okContent("search", (await call("search", { query: "Which articles talk about gardens?" })) as ToolResult) as typeof results
    expect(asked.results.map((r) => r["id"]).sort()).toEqual(results.results.map((r) => r["id"]).sort())

    const first = results.results[0]!
    const fetched = (await call("fetch", { id: first["id"] as string })) as ToolResult
    expect(fetched.content).toHaveLength(1)
    const doc = JSON.parse(fetched.content[0]!.text!) as Record<string, unknown> & { metadata: Record<string, unknown> }
    expect(okContent("fetch", fetched)).toEqual(doc)
    const article = (await rest(`/articles/${first["id"]}`)).json
    expect(doc).toMatchObject({ id: article["id"], title: article["title"], url: article["url"] })
    expect(doc["text"]).toContain("Some words about gardens")
    expect(doc["text"]).not.toMatch(/<[a-z]/)
    expect(doc.metadata).toEqual({
      site_id: article["site_id"],
      status: article["status"],
      published_at: article["published_at"],
      updated_at: article["updated_at"],
      "target keyword": article["target keyword"],
      "word count": article["word count"],
      revision: article["revision"],
    })
    expect(problemOf(await call("fetch", { id: "art_b1_1" }))["code"]).toBe("not_found")
    expect(problemOf(await call("search", { query: "x".repeat(201) }))["code"]).toBe("invalid_request")
    // a refused fetch is logged with the article it names (its argument is `id`, not `article_id`)
    const refused = await call("fetch", { id: first["id"] as string, unknown_argument: true })
    expect(problemOf(refused)["code"]).toBe("invalid_request")
    const entry = ((await rest("/activity?channel=mcp&per_page=100")).json["data"] as Array<Record<string, unknown>>).find((e) => e["action"] === "fetch" && e["error_code"] === "invalid_request")
    expect(entry).toMatchObject({ article_id: first["id"], site_id: article["site_id"] })
  })

  it("should serve articles as resources: the template, a cursor through the account's articles, the HTML with the fields in _meta.article", async () => {
    const { resourceTemplates } = await client.listResourceTemplates()
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["content-site://articles/{article_id}"])
    const uris: Array<string> = []
    let cursor: string | undefined
    let pages = 0
    // the account has three sites: a page ends with each site at the latest
    do {
      const page = await client.listResources(cursor === undefined ? {} : { cursor })
      uris.push(...page.resources.map((r) => r.uri))
      cursor = page.nextCursor
      pages++
    } while (cursor !== undefined && pages < 20)
    expect(pages).toBeGreaterThan(1)
    expect(cursor).toBeUndefined()
    const restIds: Array<string> = []
    for (const site of ["site_a1", "site_a2", "site_a3"]) {
      restIds.push(...((await rest(`/sites/${site}/articles?per_page=100`)).json["data"] as Array<{ id: string }>).map((a) => a.id))
    }
    expect(new Set(uris)).toEqual(new Set(restIds.map((id) => `content-site://articles/${id}`)))
    expect(uris).toHaveLength(restIds.length)
    await expect(client.listResources({ cursor: "not-a-cursor" })).rejects.toThrow(/invalid_request/)
    // only a cursor this server could have written: none inside a page or with leading zeros
    for (const cursor of ["0.17", "0.050", "00.0", "1.49", "0.-50", " 0.50", "0.50 "]) {
      await expect(client.listResources({ cursor }), cursor).rejects.toMatchObject({ code: -32602, data: { code: "invalid_request" } })
    }
    // one past the end (the account's sites or articles gone since it was given) is an empty last page
    expect(await client.listResources({ cursor: "999.0" })).toEqual({ resources: [] })
    expect((await client.listResources({ cursor: "0.0" })).resources.length).toBeGreaterThan(0)

    const read = await client.readResource({ uri: "content-site://articles/art_a1_1" })
    const article = (await rest("/articles/art_a1_1")).json
    const { body, ...fields } = article
    expect(read.contents).toEqual([{ uri: "content-site://articles/art_a1_1", mimeType: "text/html", text: body, _meta: { article: fields } }])
    // every key of _meta is a name MCP allows (no spaces: the fields' own names have them)
    for (const key of Object.keys(read.contents[0]!._meta ?? {})) expect(key).toMatch(/^(?:[a-z0-9A-Z](?:[a-z0-9A-Z._-]*[a-z0-9A-Z])?)$/)
    await expect(client.readResource({ uri: "content-site://articles/art_b1_1" })).rejects.toMatchObject({ code: -32002 })
    await expect(client.readResource({ uri: "https://example.com/x" })).rejects.toMatchObject({ code: -32002 })
  })

  it("should complete article and site ids from ids and title prefixes, only the account's own", async () => {
    const template = { type: "ref/resource" as const, uri: "content-site://articles/{article_id}" }
    const byId = await client.complete({ ref: template, argument: { name: "article_id", value: "art_" } })
    expect(byId.completion.values).toEqual(expect.arrayContaining(["art_a1_1", "art_a1_4"]))
    expect(byId.completion.values).not.toContain("art_b1_1")
    const title = (await rest("/articles/art_a1_2")).json["title"] as string
    const byTitle = await client.complete({ ref: template, argument: { name: "article_id", value: title.toUpperCase() } })
    expect(byTitle.completion.values).toContain("art_a1_2")
    expect(byTitle.completion.values.every((id) => id.startsWith("art_a"))).toBe(true)
    const prompt = { type: "ref/prompt" as const, name: "monthly_report" }
    expect((await client.complete({ ref: prompt, argument: { name: "site_id", value: "alpha g" } })).completion.values).toEqual(["site_a1"])
    expect((await client.complete({ ref: prompt, argument: { name: "site_id", value: "site_b" } })).completion.values).toEqual([])
    expect((await client.complete({ ref: prompt, argument: { name: "period", value: "last" } })).completion.values).toEqual(["last_month", "last_30_days"])
    // a value no stored text starts with completes to nothing (a NUL was a JSON-RPC internal error)
    for (const value of ["art_\u0000", "\u0000", "art_\uD800"]) {
      expect([value, await client.complete({ ref: template, argument: { name: "article_id", value } })]).toEqual([value, { completion: { values: [], hasMore: false } }])
      expect([value, (await client.complete({ ref: prompt, argument: { name: "site_id", value } })).completion.values]).toEqual([value, []])
    }
  })

  it("should give the prompts, blind to other accounts, and log every such call", async () => {
    const logging = await connect(mcpUrl, new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Prompt Agent"))
    if (logging === undefined) throw new Error("could not connect")
    try {
      const { prompts } = await logging.listPrompts()
      expect(prompts.map((p) => p.name).sort()).toEqual(["monthly_report", "refresh_article"])
      const report = await logging.getPrompt({ name: "monthly_report", arguments: { site_id: "site_a1", period: "last_month" } })
      const reportText = (report.messages[0]!.content as { text: string }).text
      expect(reportText).toContain('get_stats with site_id "site_a1" and period "last_month"')
      const refresh = await logging.getPrompt({ name: "refresh_article", arguments: { article_id: "art_a1_1", focus: "update the figures" } })
      const refreshText = (refresh.messages[0]!.content as { text: string }).text
      expect(refreshText).toContain("edit_article")
      expect(refreshText).toContain("protected link")
      expect(refreshText).toContain("update the figures")
      expect(refresh.messages[1]!.content).toMatchObject({ type: "resource_link", uri: "content-site://articles/art_a1_1" })
      await expect(logging.getPrompt({ name: "monthly_report", arguments: { site_id: "site_b1" } })).rejects.toThrow(/not_found/)
      await expect(logging.getPrompt({ name: "monthly_report", arguments: { site_id: "site_a1", period: "someday" } })).rejects.toThrow(/invalid_request/)
      await logging.readResource({ uri: "content-site://articles/art_a1_2" })
      await logging.complete({ ref: { type: "ref/prompt", name: "refresh_article" }, argument: { name: "article_id", value: "art" } })
      // a URI that names no article, and an argument nothing completes: calls all the same
      await expect(logging.readResource({ uri: "content-site://sites/site_a1" })).rejects.toMatchObject({ code: -32002, data: { code: "not_found" } })
      expect(await logging.complete({ ref: { type: "ref/prompt", name: "no_such_prompt" }, argument: { name: "x", value: "a" } })).toMatchObject({ completion: { values: [], hasMore: false } })
      // a malformed id argument (a NUL the database cannot store) is refused and logged, without the id
      await expect(logging.getPrompt({ name: "refresh_article", arguments: { article_id: "art_\u0000" } })).rejects.toThrow(/invalid_request|not_found/)
      // a focus is text like any other: no NUL, and 500 characters counted as code points
      await expect(logging.getPrompt({ name: "refresh_article", arguments: { article_id: "art_a1_1", focus: "the\u0000figures" } })).rejects.toThrow(/invalid_request.*focus/s)
      expect((await logging.getPrompt({ name: "refresh_article", arguments: { article_id: "art_a1_1", focus: "\u{1F600}".repeat(500) } })).messages).toHaveLength(2)
      expect(await logging.callTool({ name: "get_article", arguments: { article_id: "art_\u0000" } })).toMatchObject({ isError: true })
    } finally {
      await logging.close()
    }
    const activity = await rest("/activity?channel=mcp&per_page=100")
    type Entry = { action: string; status: string; error_code: string | null; actor: { name: string }; article_id: string | null; site_id: string | null }
    const mine = (activity.json["data"] as Array<Entry>).filter((e) => e.actor.name === "Prompt Agent")
    // (as a set: calls made within one millisecond are listed in no set order)
    const byText = (a: readonly [string, string | null], b: readonly [string, string | null]) => `${a[0]} ${a[1]}`.localeCompare(`${b[0]} ${b[1]}`)
    expect(mine.map((e) => [e.action, e.error_code] as const).sort(byText)).toEqual(
      ([
        ["prompts/get monthly_report", null],
        ["prompts/get refresh_article", null],
        ["prompts/get monthly_report", "not_found"],
        ["prompts/get monthly_report", "invalid_request"],
        ["resources/read", null],
        ["completion/complete", null],
        ["resources/read", "not_found"],
        ["completion/complete", null],
        ["prompts/get refresh_article", "invalid_request"],
        ["prompts/get refresh_article", "invalid_request"],
        ["prompts/get refresh_article", null],
        ["get_article", "invalid_request"],
      ] as const).slice().sort(byText),
    )
    // the malformed ids are named nowhere; the refused focus's article is (as a set, as above)
    expect(mine.filter((e) => e.error_code === "invalid_request" && e.action !== "prompts/get monthly_report").map((e) => JSON.stringify([e.article_id, e.site_id])).sort()).toEqual(
      [[null, null], [null, null], ["art_a1_1", "site_a1"]].map((ids) => JSON.stringify(ids)).sort(),
    )
    expect(mine.find((e) => e.action === "resources/read" && e.error_code === null)).toMatchObject({ article_id: "art_a1_2", site_id: "site_a1" })
  })
})

describe("connected clients", () => {
  it("should list a connected client and stop its tokens at once when revoked", async () => {
    const flow = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Revoked Agent")
    const connected = await connect(mcpUrl, flow)
    await connected?.close()
    const deps = { runtime: server.runtime, publicUrl: server.url, env: {} }
    const clientId = flow.client?.client_id ?? ""
    const listed = await listConnectedClients(deps, "acc_alice")
    expect(listed.find((c) => c.clientId === clientId)).toMatchObject({ name: "Revoked Agent", redirectHost: "127.0.0.1:1" })
    // the first call notes its use without holding up its answer: it is listed soon after
    await expect.poll(async () => (await listConnectedClients(deps, "acc_alice")).find((c) => c.clientId === clientId)?.lastUsedAt ?? null).not.toBeNull()
    const token = flow.savedTokens?.access_token ?? ""
    expect((await rawToolCall(token)).status).toBe(200)
    expect(await revokeConnectedClient(deps, "acc_bob", clientId)).toBe(false)
    expect(await revokeConnectedClient(deps, "acc_alice", clientId)).toBe(true)
    const after = await rawToolCall(token)
    expect(after.status).toBe(401)
    expect(after.headers.get("www-authenticate")).toContain('error="invalid_token"')
    expect((await listConnectedClients(deps, "acc_alice")).some((c) => c.clientId === clientId)).toBe(false)
    const refreshed = await fetch(`${server.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: flow.savedTokens?.refresh_token ?? "", client_id: clientId }),
    })
    expect(refreshed.status).toBe(400)
  })
})

describe("read-only connections", () => {
  it("should let the owner allow reading only: the token carries mcp:read, reads work, write tools answer insufficient_scope", async () => {
    // Bob's account: Alice's has spent most of this minute's requests on the tests above.
    const flow = new ScriptedOAuthProvider({ ...BOB, decision: "allow", access: "read" }, "Read-only Agent")
    const readOnly = await connect(mcpUrl, flow)
    if (readOnly === undefined) throw new Error(`could not connect: ${flow.lastPage}`)
    // the consent page offered the choice (the SDK asked for both scopes, as the challenge says)
    expect(flow.lastPage).toContain('value="read"')
    const scope = String(decodeJwt(flow.savedTokens?.access_token ?? "")["scope"]).split(" ")
    expect(scope).toContain("mcp:read")
    expect(scope).not.toContain("mcp")
    okContent("list_sites", await call("list_sites", {}, readOnly))
    okContent("get_article", await call("get_article", { article_id: "art_b1_1" }, readOnly))
    // A write tool gets the specification's scope challenge: HTTP 403 naming the scope to ask for.
    const writeWith = (name: string, args: Record<string, unknown>) =>
      fetch(mcpUrl, {
        method: "POST",
        headers: { authorization: `Bearer ${flow.savedTokens?.access_token ?? ""}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name, arguments: args } }),
      })
    for (const [name, args] of [
      ["update_article", { article_id: "art_b1_1", title: "Not allowed" }],
      ["replace_featured_image", { article_id: "art_b1_1", url: "https://images.example.com/x.png" }],
      // the agent-grade write tools too, and a dry run: it is still a call of a write tool
      ["edit_article", { article_id: "art_b1_1", title: "Not allowed" }],
      ["restore_revision", { article_id: "art_b1_1", number: 1 }],
      ["update_article", { article_id: "art_b1_1", title: "Not allowed", dry_run: true }],
    ] as const) {
      const refused = await writeWith(name, args)
      expect(refused.status).toBe(403)
      const challenge = refused.headers.get("www-authenticate") ?? ""
      expect(challenge).toContain('error="insufficient_scope"')
      expect(challenge).toContain('scope="mcp"')
      expect(challenge).toContain(`resource_metadata="${server.url}/.well-known/oauth-protected-resource/mcp"`)
      const problem = (await refused.json()) as Record<string, unknown>
      expect(problem["code"]).toBe("insufficient_scope")
      expect(String(problem["detail"])).toContain("read-only")
    }
    const after = okContent("get_article", await call("get_article", { article_id: "art_b1_1" }, readOnly)) as { title: string }
    expect(after.title).not.toBe("Not allowed")
    const deps = { runtime: server.runtime, publicUrl: server.url, env: {} }
    expect((await listConnectedClients(deps, "acc_bob")).find((c) => c.clientId === flow.client?.client_id)?.access).toBe("read")
    // the first connection, allowed with the page's default, may write
    expect((await listConnectedClients(deps, "acc_alice")).find((c) => c.clientId === provider.client?.client_id)?.access).toBe("write")
    expect(String(decodeJwt(provider.savedTokens?.access_token ?? "")["scope"]).split(" ")).toContain("mcp")
    // a refreshed token stays read-only
    const refreshed = await fetch(`${server.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: flow.savedTokens?.refresh_token ?? "", client_id: flow.client?.client_id ?? "" }),
    })
    expect(refreshed.status).toBe(200)
    const again = (await refreshed.json()) as { access_token: string; scope: string }
    expect(again.scope.split(" ")).not.toContain("mcp")
    expect(String(decodeJwt(again.access_token)["scope"]).split(" ")).toEqual(["mcp:read"])
    await readOnly.close()
  })

  it("should advertise both scopes in the challenge and the protected resource metadata", async () => {
    const response = await fetch(mcpUrl, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
    expect(response.headers.get("www-authenticate")).toContain('scope="mcp mcp:read"')
    const metadata = (await (await fetch(`${server.url}/.well-known/oauth-protected-resource/mcp`)).json()) as { scopes_supported: Array<string> }
    expect(metadata.scopes_supported).toEqual(["mcp", "mcp:read"])
  })
})

