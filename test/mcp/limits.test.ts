import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { discoverAuthorizationServerMetadata, parseErrorResponse, registerClient } from "@modelcontextprotocol/sdk/client/auth.js"
import { TooManyRequestsError } from "@modelcontextprotocol/sdk/server/auth/errors.js"
import { request } from "node:http"
import type { StartedServer } from "../../apps/server/server.ts"
import { middayToday, runningClock, testClock } from "../support/clock.ts"
import { eventually } from "../support/eventually.ts"
import { startPostgresProxy, startTcpProxy } from "../support/tcpProxy.ts"
import { ALICE, connect, connectOrFail, ScriptedOAuthProvider, startSeeded } from "./support.ts"

const REDIS_URL = new URL(process.env["TEST_REDIS_URL"] ?? "redis://127.0.0.1:6379")

let server: StartedServer
let client: Client
// The server's clock stands still until the test moves it: the one-minute window cannot end mid-test.
const clock = testClock(middayToday())

beforeAll(async () => {
  server = await startSeeded({ RATE_LIMIT_PER_MINUTE: "4" }, { now: clock.now })
  client = await connectOrFail(`${server.url}/mcp`, new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Limits Agent"))
  // Connecting made requests too (every request counts): the test starts in a fresh minute.
  clock.advance(60_000)
}, 60_000)

afterAll(async () => {
  await client?.close()
  await server?.close()
})

describe("limits shared with REST", () => {
  it("should state the configured limits in the tool descriptions", async () => {
    const listed = await client.listTools()
    clock.advance(60_000) // the listing was a request: the next test starts in a fresh minute
    const listArticles = listed.tools.find((t) => t.name === "list_articles")!
    expect(listArticles.description).toContain("Limits: 4 requests per minute per account")
    expect(listed.tools.map((t) => t.description).join(" ")).not.toMatch(/\b60 requests per minute\b/)
  })

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

describe("RateLimit headers of responses without a tool call", () => {
  let counted: StartedServer
  let post: (body: unknown, init?: { method?: string }) => Promise<Response>
  let headers: Record<string, string>
  const standing = testClock(middayToday())
  beforeAll(async () => {
    counted = await startSeeded({ RATE_LIMIT_PER_MINUTE: "4" }, { now: standing.now })
    const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Headers Agent")
    const connected = await connectOrFail(`${counted.url}/mcp`, provider)
    await connected.close()
    // Connecting made requests too (every request counts): the tests start in a fresh minute.
    standing.advance(60_000)
    headers = {
      authorization: `Bearer ${provider.savedTokens?.access_token ?? ""}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    }
    post = (body, init = {}) =>
      fetch(`${counted.url}/mcp`, { method: init.method ?? "POST", headers, ...(init.method === "GET" ? {} : { body: JSON.stringify(body) }) })
  }, 60_000)
  afterAll(async () => {
    await counted?.close()
  })

  const limitOf = (response: Response) => ({
    limit: response.headers.get("ratelimit-limit"),
    remaining: response.headers.get("ratelimit-remaining"),
    reset: Number(response.headers.get("ratelimit-reset")),
  })
  const list = { jsonrpc: "2.0", id: 1, method: "tools/list" }
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "headers", version: "1" } },
  }
  const toolCall = { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "list_sites", arguments: {} } }

  it("should count initialize, tools/list and notifications like any request, and refuse them over the limit with 429, logged", async () => {
    const before = await post(list)
    expect(before.status).toBe(200)
    // 30 s into the minute: the window ends in 30 s
    expect(limitOf(before)).toEqual({ limit: "4", remaining: "3", reset: 30 })
    // every request counts (the specification: "all requests"), the protocol's own too
    const plumbing = [await post(initialize), await post({ jsonrpc: "2.0", method: "notifications/initialized" }), await post(list)]
    expect(plumbing.map((r) => r.status)).toEqual([200, 202, 200])
    expect(plumbing.map((r) => limitOf(r).remaining)).toEqual(["2", "1", "0"])
    // over the limit the request is refused as a whole: 429 with the problem and Retry-After
    const refused = await post(list)
    expect(refused.status).toBe(429)
    expect(refused.headers.get("content-type")).toMatch(/^application\/problem\+json/)
    expect(refused.headers.get("retry-after")).toBe("30")
    expect(limitOf(refused)).toEqual({ limit: "4", remaining: "0", reset: 30 })
    const problem = (await refused.json()) as { code: string; request_id: string }
    expect(problem.code).toBe("rate_limited")
    expect(problem.request_id).toBe(refused.headers.get("x-request-id"))
    // a tool call shares the budget: a tool error, as every refused tool call is
    const over = (await (await post(toolCall)).json()) as { result: { isError?: boolean; content: Array<{ text: string }> } }
    expect(over.result.isError).toBe(true)
    expect(JSON.parse(over.result.content[0]?.text ?? "{}")).toMatchObject({ code: "rate_limited" })

    // In the next minute the budget is back; the refused request is in the log with its method.
    standing.advance(60_000)
    const call = await post(toolCall)
    expect(((await call.json()) as { result: { isError?: boolean } }).result.isError).toBeUndefined()
    expect(limitOf(call)).toMatchObject({ limit: "4", remaining: "3" })
    const log = await fetch(`${counted.url}/api/v1/activity?channel=mcp&per_page=100`, { headers: { authorization: `Bearer ${ALICE.apiKey}` } })
    expect(log.status).toBe(200)
    const entries = ((await log.json()) as { data: Array<{ action: string; status: string; error_code: string | null; request_id: string }> }).data
    expect(entries.find((e) => e.request_id === problem.request_id)).toMatchObject({ action: "tools/list", status: "error", error_code: "rate_limited" })
  })

  it("should carry them on the endpoint's own refusals of an authenticated request", async () => {
    const get = await post(undefined, { method: "GET" })
    expect(get.status).toBe(405)
    expect(get.headers.get("ratelimit-limit")).toBe("4")
    const broken = await post("{")
    expect(broken.status).toBe(400)
    expect(broken.headers.get("ratelimit-limit")).toBe("4")
    expect(broken.headers.get("ratelimit-remaining")).not.toBeNull()
    expect(broken.headers.get("ratelimit-reset")).not.toBeNull()
  })

  it("should count a request whose calls are refused before they run (an unknown tool, malformed params) once, and refuse it over the limit", async () => {
    standing.advance(60_000) // a fresh minute
    const refusedCalls = [
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "no_such_tool", arguments: {} } },
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: 7 } },
      { jsonrpc: "2.0", id: 3, method: "resources/read", params: {} },
      [
        { jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "no_such_tool" } },
        { jsonrpc: "2.0", id: 5, method: "prompts/get", params: { arguments: {} } },
      ],
    ]
    const answered = []
    for (const body of refusedCalls) answered.push(await post(body))
    expect(answered.map((r) => r.status)).toEqual([200, 200, 200, 200])
    // each one a JSON-RPC error, counted once as any request is
    for (const r of answered) for (const a of [(await r.json()) as unknown].flat()) expect(a).toHaveProperty("error")
    expect(answered.map((r) => limitOf(r).remaining)).toEqual(["3", "2", "1", "0"])
    const over = await post(refusedCalls[0])
    expect(over.status).toBe(429)
    expect(((await over.json()) as { code: string }).code).toBe("rate_limited")
    expect(over.headers.get("retry-after")).toBe("30")

    // The log says what each client got: the answered refusals invalid_request, the one over
    // the limit 429 rate_limited (never the invalid_request its call would have had).
    standing.advance(60_000)
    const log = await fetch(`${counted.url}/api/v1/activity?channel=mcp&per_page=100`, { headers: { authorization: `Bearer ${ALICE.apiKey}` } })
    expect(log.status).toBe(200)
    const entries = ((await log.json()) as { data: Array<{ action: string; status: string; error_code: string | null; request_id: string }> }).data
    const entryOf = (id: string | null) => entries.filter((e) => e.request_id === id)
    expect(entryOf(answered[0]!.headers.get("x-request-id"))).toMatchObject([{ action: "no_such_tool", status: "error", error_code: "invalid_request" }])
    expect(entryOf(`${answered[3]!.headers.get("x-request-id")}.1`)).toMatchObject([{ action: "no_such_tool", status: "error", error_code: "invalid_request" }])
    expect(entryOf(over.headers.get("x-request-id"))).toMatchObject([{ action: "tools/call", status: "error", error_code: "rate_limited" }])
  })

  it("should count a write refused to a read-only connection (403) like any request, and answer 429 over the limit, as REST does", async () => {
    standing.advance(60_000) // the last test spent its minute
    const reader = new ScriptedOAuthProvider({ ...ALICE, decision: "allow", access: "read" }, "Reading Agent")
    const connected = await connectOrFail(`${counted.url}/mcp`, reader)
    await connected.close()
    standing.advance(60_000) // connecting made requests: a fresh minute
    const write = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "update_article", arguments: { article_id: "art_a1_1", title: "x" } } }
    const postAsReader = () =>
      fetch(`${counted.url}/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${reader.savedTokens?.access_token ?? ""}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify(write),
      })
    const challenged = []
    for (let i = 0; i < 4; i++) challenged.push(await postAsReader())
    expect(challenged.map((r) => r.status)).toEqual([403, 403, 403, 403])
    expect(challenged.map((r) => limitOf(r).remaining)).toEqual(["3", "2", "1", "0"])
    const over = await postAsReader()
    expect(over.status).toBe(429)
    expect(((await over.json()) as { code: string }).code).toBe("rate_limited")
  })

  it("should refuse a large body of an account over its limit before reading it, 429 with Retry-After", async () => {
    standing.advance(60_000) // a fresh minute, spent here
    for (let i = 0; i < 4; i++) expect((await post(list)).status).toBe(200)
    const url = new URL(counted.url)
    const answer = await new Promise<{ status: number; retryAfter: unknown }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no answer until the whole body is read")), 5_000)
      const req = request({ host: url.hostname, port: url.port, path: "/mcp", method: "POST", headers: { ...headers, "content-length": String(4 * 1024 * 1024) } }, (res) => {
        clearTimeout(timer)
        res.resume()
        resolve({ status: res.statusCode ?? 0, retryAfter: res.headers["retry-after"] })
        req.destroy()
      })
      req.on("error", () => undefined)
      // a part of the body, then nothing more: read first, it would be parsed before the 429
      req.write(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"pad":"${"x".repeat(256 * 1024)}`)
    })
    expect(answer).toEqual({ status: 429, retryAfter: "30" })
  })
})

describe("client registration", () => {
  let limited: StartedServer
  beforeAll(async () => {
    // (the budget is counted in clock hours: a clock from 12:00:30 today, so no hour ends between
    // the registrations that spend it and the one refused, as one could at the machine's 17:59:59)
    limited = await startSeeded({ OAUTH_REGISTRATION_LIMIT_PER_HOUR: "2" }, { now: runningClock(middayToday()).now })
  }, 60_000)
  afterAll(async () => {
    await limited?.close()
  })
  const register = (name: string, path = "/oauth/register") =>
    fetch(`${limited.url}${path}`, {
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
    const problem = (await refused.json()) as { code: string; detail: string }
    expect(problem.code).toBe("rate_limited")
    expect(problem.detail).toMatch(/^More than 2 client registrations from this address in an hour; retry in \d+ s\.$/)
    // the rest of the authorization server is not affected
    expect((await fetch(`${limited.url}/.well-known/oauth-authorization-server`)).status).toBe(200)
  })

  it("should make the refusal an OAuth error too (RFC 7591: error, error_description), which the MCP SDK reads as too_many_requests", async () => {
    // the budget of 2, spent by the test before or, run alone (-t), here
    let refused = await register("over")
    for (let i = 0; i < 2 && refused.status === 201; i++) refused = await register(`over ${i}`)
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
    const body = (await refused.clone().json()) as Record<string, unknown>
    // the contract's problem members, and OAuth's beside them
    expect(body).toMatchObject({ status: 429, code: "rate_limited", error: "too_many_requests" })
    expect(body["error_description"]).toBe(body["detail"])
    const parsed = await parseErrorResponse(refused)
    expect(parsed).toBeInstanceOf(TooManyRequestsError)
    expect(parsed.message).toMatch(/client registrations from this address in an hour/)
    // and the SDK's own registration call throws that error, not "Invalid OAuth error response"
    const metadata = await discoverAuthorizationServerMetadata(limited.url)
    const sdk = await registerClient(limited.url, {
      ...(metadata !== undefined ? { metadata } : {}),
      clientMetadata: { client_name: "sdk", redirect_uris: ["http://127.0.0.1:9/cb"], token_endpoint_auth_method: "none" },
    }).catch((e: unknown) => e)
    expect(sdk).toBeInstanceOf(TooManyRequestsError)
  })

  it("should count a registration posted to the endpoint's path with a trailing slash (the provider takes it) against the same budget", async () => {
    const statuses: Array<number> = []
    for (const name of ["four", "five", "six"]) statuses.push((await register(name, "/oauth/register/")).status)
    expect(statuses.filter((s) => s === 201).length).toBeLessThanOrEqual(2)
    expect(statuses.at(-1)).toBe(429)
  })
})

describe("authorization requests", () => {
  let limited: StartedServer
  beforeAll(async () => {
    // (an hour that does not end during the file, as for registrations)
    limited = await startSeeded({ OAUTH_AUTHORIZATION_LIMIT_PER_HOUR: "2" }, { now: runningClock(middayToday()).now })
  }, 60_000)
  afterAll(async () => {
    await limited?.close()
  })
  const params = async () => {
    const registered = await fetch(`${limited.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Flooder", redirect_uris: ["http://127.0.0.1:9/cb"], token_endpoint_auth_method: "none" }),
    })
    const clientId = ((await registered.json()) as { client_id: string }).client_id
    return new URLSearchParams({
      client_id: clientId,
      response_type: "code",
      redirect_uri: "http://127.0.0.1:9/cb",
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
      state: "st",
    })
  }

  it("should refuse authorization requests past the hourly budget of a client address with an error page, 429 and Retry-After, storing nothing", async () => {
    const query = await params()
    const authorize = () => fetch(`${limited.url}/oauth/authorize?${query}`, { redirect: "manual", headers: { accept: "text/html" } })
    for (let i = 0; i < 2; i++) {
      const started = await authorize()
      // an interaction stored for an hour, its cookie set
      expect(started.status).toBe(303)
      expect(started.headers.get("location")).toMatch(/\/oauth\/interaction\//)
      expect(started.headers.getSetCookie().some((c) => c.startsWith("cs_oauth_interaction="))).toBe(true)
    }
    const refused = await authorize()
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(refused.headers.get("content-type")).toMatch(/^text\/html/)
    expect(refused.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
    expect(refused.headers.getSetCookie()).toEqual([])
    const page = await refused.text()
    expect(page).toContain("temporarily_unavailable")
    expect(page).toMatch(/More than 2 authorization requests from this address in an hour/)
    // a POST to the endpoint (with or without its trailing slash) and a pushed request count against the same budget
    expect((await fetch(`${limited.url}/oauth/authorize/`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded" }, body: query })).status).toBe(429)
    const pushed = await fetch(`${limited.url}/oauth/par`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: query })
    expect(pushed.status).toBe(429)
    expect(Number(pushed.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(await pushed.json()).toMatchObject({ code: "rate_limited", error: "too_many_requests" })
    // registration and metadata are budgets of their own
    expect((await fetch(`${limited.url}/.well-known/oauth-authorization-server`)).status).toBe(200)
    expect((await params()).get("client_id")).toBeTruthy()
  })
})

describe("while the request counters cannot answer", () => {
  // The counters in Redis (the OAuth state in the database, still up), then in the database itself:
  // either way the budget's check is the first to find its store away.
  it.each(["Redis", "the database"] as const)(
    "should answer an authorization request 503 with an error page, and a pushed request and a registration 503 temporarily_unavailable, all with Retry-After, while %s cannot answer",
    async (store) => {
      const seeded = await startSeeded()
      const proxied = store === "Redis" ? await startTcpProxy(REDIS_URL.hostname, Number(REDIS_URL.port || 6379)) : await startPostgresProxy(seeded.databaseUrl)
      const proxy = "proxy" in proxied ? proxied.proxy : proxied
      let away: StartedServer | undefined
      try {
        away = await startSeeded(
          { PUBLIC_URL: seeded.url, ...("url" in proxied ? { DATABASE_URL: proxied.url } : { REDIS_URL: `redis://127.0.0.1:${proxy.port}` }) },
          { reuse: seeded },
        )
        const registered = await fetch(`${away.url}/oauth/register`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ client_name: "Outage Agent", redirect_uris: ["http://127.0.0.1:9/cb"], token_endpoint_auth_method: "none" }),
        })
        expect(registered.status).toBe(201)
        const query = new URLSearchParams({
          client_id: ((await registered.json()) as { client_id: string }).client_id,
          response_type: "code",
          redirect_uri: "http://127.0.0.1:9/cb",
          code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
          code_challenge_method: "S256",
          state: "st",
        })
        await proxy.cut("refuse")
        /** A JSON OAuth endpoint's answer: the 503 problem carrying OAuth's `error`, with Retry-After. */
        const expectUnavailable = async (answer: Response) => {
          expect(answer.status).toBe(503)
          expect(answer.headers.get("retry-after")).toBe("5")
          const body = (await answer.json()) as Record<string, unknown>
          expect(body).toMatchObject({ code: "unavailable", error: "temporarily_unavailable" })
          expect(body["error_description"]).toBe(body["detail"])
        }
        const page = await fetch(`${away.url}/oauth/authorize?${query}`, { redirect: "manual", headers: { accept: "text/html" } })
        expect(page.status).toBe(503)
        expect(page.headers.get("retry-after")).toBe("5")
        expect(page.headers.get("content-type")).toMatch(/^text\/html/)
        expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
        expect(page.headers.getSetCookie()).toEqual([])
        const html = await page.text()
        expect(html).toContain("temporarily_unavailable")
        expect(html).toContain("cannot answer now")
        expect(html).not.toMatch(/internal|server_error|\w+Error\b|ECONNREFUSED|\bat \S+ \(|\.ts:\d/)
        await expectUnavailable(await fetch(`${away.url}/oauth/par`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: query }))
        await expectUnavailable(
          await fetch(`${away.url}/oauth/register`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ client_name: "Outage Agent", redirect_uris: ["http://127.0.0.1:9/cb"], token_endpoint_auth_method: "none" }),
          }),
        )
      } finally {
        await proxy.restore()
        await away?.close()
        await proxy.close()
        await seeded.close()
      }
    },
    60_000,
  )

  it("should answer a token that fails 503 unavailable with Retry-After, as REST answers a key then, not 500", async () => {
    // an instance of its own whose counters are in a Redis reached through a proxy the test cuts
    const proxy = await startTcpProxy(REDIS_URL.hostname, Number(REDIS_URL.port || 6379))
    const away = await startSeeded({ REDIS_URL: `redis://127.0.0.1:${proxy.port}` })
    try {
      await proxy.cut("refuse")
      const mcp = await fetch(`${away.url}/mcp`, {
        method: "POST",
        headers: { authorization: "Bearer not.a.token", accept: "application/json, text/event-stream", "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      })
      expect(mcp.status).toBe(503)
      expect(mcp.headers.get("retry-after")).toBe("5")
      expect(((await mcp.json()) as { code: string }).code).toBe("unavailable")
      const rest = await fetch(`${away.url}/api/v1/sites`, { headers: { authorization: "Bearer cs_notakeynotakeynotakeynotakeynotakey" } })
      expect(rest.status).toBe(503)
      expect(rest.headers.get("retry-after")).toBe("5")
    } finally {
      await away.close()
      await proxy.close()
    }
  }, 60_000)
})

describe("while the database cannot answer", () => {
  it("should answer the revocation of an access token 503 temporarily_unavailable with Retry-After, revoking nothing", async () => {
    // (every client's lookup asks the database first: the refusal comes from the provider's client
    // authentication, answered 503 by its `server_error` handler; adapters/mcp/test/
    // revocationOutage.test.ts makes the grant's lookup fail after it, in the step that revokes JWTs)
    const seeded = await startSeeded()
    const { proxy, url } = await startPostgresProxy(seeded.databaseUrl)
    let away: StartedServer | undefined
    try {
      // a second instance whose database is reached through a proxy the test can cut
      away = await startSeeded({ PUBLIC_URL: seeded.url, DATABASE_URL: url }, { reuse: seeded })
      const revoke = () =>
        fetch(`${away!.url}/oauth/revoke`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ token: provider.savedTokens!.access_token, token_type_hint: "access_token", client_id: provider.client!.client_id }),
        })
      const toolsList = () =>
        fetch(`${seeded.url}/mcp`, {
          method: "POST",
          headers: { authorization: `Bearer ${provider.savedTokens!.access_token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        })
      const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Revoking Agent")
      await (await connect(`${seeded.url}/mcp`, provider))!.close()
      await proxy.cut("refuse")
      try {
        const answer = await revoke()
        expect(answer.status).toBe(503)
        expect(answer.headers.get("retry-after")).toBe("5")
        expect(await answer.json()).toEqual({ error: "temporarily_unavailable", error_description: "The database cannot answer now; nothing was changed. Retry in a few seconds." })
      } finally {
        await proxy.restore()
      }
      // nothing revoked: the token still works at the first instance; once the database is back, revoked
      expect((await toolsList()).status).toBe(200)
      expect(await eventually(async () => (await fetch(`${away!.url}/readyz`)).status, (status) => status === 200, 15_000)).toBe(200)
      expect((await revoke()).status).toBe(200)
      expect((await eventually(toolsList, (answer) => answer.status === 401)).status).toBe(401)
    } finally {
      await away?.close()
      await proxy.close()
      await seeded.close()
    }
  }, 60_000)
})
