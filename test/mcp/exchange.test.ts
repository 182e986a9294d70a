/**
 * One SDK server answers every `/mcp` request (`adapters/mcp/src/exchangeTransport.ts`): clients
 * reuse JSON-RPC ids, so requests handled side by side must each get their own answer under their
 * own id, and a client's cancel must never reach another client's request.
 */
import { connect as connectSocket } from "node:net"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ALICE, connect, ScriptedOAuthProvider, type SeededServer, startSeeded } from "./support.ts"

let server: SeededServer
let headers: Record<string, string>

beforeAll(async () => {
  // the calls here would spend most of the default 60 requests a minute
  // a long shutdown grace: a request left waiting would hold the last test's close for minutes
  server = await startSeeded({ RATE_LIMIT_PER_MINUTE: "10000", SHUTDOWN_GRACE_MS: "300000" })
  const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Exchange Agent")
  const client = await connect(`${server.url}/mcp`, provider)
  if (client === undefined) throw new Error(`could not connect: ${provider.lastPage}`)
  await client.close()
  headers = { authorization: `Bearer ${provider.savedTokens?.access_token ?? ""}`, "content-type": "application/json", accept: "application/json, text/event-stream" }
}, 60_000)

afterAll(async () => {
  await server?.close() // a second close is a no-op
})

const post = (body: unknown) => fetch(`${server.url}/mcp`, { method: "POST", headers, body: JSON.stringify(body) })
const getArticle = (id: unknown, articleId: string) =>
  post({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "get_article", arguments: { article_id: articleId } } })

describe("one server for every request", () => {
  // first, while the ids the shared server gives out are still small
  it("should not let a client's cancel reach a call in flight, whatever id it names", async () => {
    // the cancels come in the call's own batch, so they reach the server while the call runs;
    // they name ids 0 to 98, which covers the id the server gives the call this early
    const response = await post([
      { jsonrpc: "2.0", id: "mine", method: "tools/call", params: { name: "get_article", arguments: { article_id: "art_a1_1" } } },
      ...Array.from({ length: 99 }, (_, i) => ({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: i, reason: "test" } })),
    ])
    expect(response.status).toBe(200)
    const body = (await response.json()) as { id: unknown; result: { isError?: boolean; structuredContent: { id: string } } }
    expect(body.id).toBe("mine")
    expect(body.result.isError).toBeUndefined()
    expect(body.result.structuredContent.id).toBe("art_a1_1")
  })

  it("should answer concurrent calls that share a JSON-RPC id each with its own article, under that id", async () => {
    const articles = Array.from({ length: 30 }, (_, i) => `art_a1_${(i % 5) + 1}`)
    const answers = await Promise.all(articles.map((articleId, i) => getArticle(i % 2 === 0 ? 1 : "same", articleId)))
    for (const [i, response] of answers.entries()) {
      expect(response.status).toBe(200)
      const body = (await response.json()) as { id: unknown; result: { isError?: boolean; structuredContent: { id: string } } }
      expect(body.id).toBe(i % 2 === 0 ? 1 : "same")
      expect(body.result.isError).toBeUndefined()
      expect(body.result.structuredContent.id).toBe(articles[i])
    }
  })

  it("should answer a batch whose requests share an id with one answer each, in order", async () => {
    const response = await post([
      { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "get_article", arguments: { article_id: "art_a1_2" } } },
      { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "get_article", arguments: { article_id: "art_a1_3" } } },
    ])
    const body = (await response.json()) as Array<{ id: unknown; result: { structuredContent: { id: string } } }>
    expect(body.map((a) => [a.id, a.result.structuredContent.id])).toEqual([
      [5, "art_a1_2"],
      [5, "art_a1_3"],
    ])
  })

  it("should refuse a tools/call without a tool name, or one asking for a task, with a JSON-RPC error", async () => {
    const calls = [
      { name: 7, arguments: {} },
      { arguments: { article_id: "art_a1_1" } },
      { name: 7, arguments: "art_a1_1" },
      { name: "get_article", arguments: { article_id: "art_a1_1" }, task: { ttl: 60_000 } },
      { name: "get_article", arguments: { article_id: "art_a1_1" }, task: "soon" },
    ]
    for (const [i, params] of calls.entries()) {
      const body = (await (await post({ jsonrpc: "2.0", id: i, method: "tools/call", params })).json()) as { id: unknown; result?: unknown; error?: { code: number } }
      expect(body.id, JSON.stringify(params)).toBe(i)
      expect(body.result, JSON.stringify(params)).toBeUndefined()
      expect(body.error?.code, JSON.stringify(params)).toBeTypeOf("number")
    }
  })

  it("should answer every kind of tool result in the SDK's CallToolResult shape", async () => {
    const calls = [
      { name: "get_article", arguments: { article_id: "art_a1_1" } },
      { name: "get_article", arguments: { article_id: "art_nobody" } },
      { name: "get_article", arguments: { article_id: 5 } },
      { name: "list_sites", arguments: {} },
      { name: "list_articles", arguments: { site_id: "site_a1", per_page: 2 } },
    ]
    const kinds = new Set<string>()
    for (const [i, params] of calls.entries()) {
      const body = (await (await post({ jsonrpc: "2.0", id: i, method: "tools/call", params })).json()) as { result: unknown }
      const parsed = CallToolResultSchema.safeParse(body.result)
      expect(parsed.success, JSON.stringify(body.result).slice(0, 200)).toBe(true)
      kinds.add(parsed.data?.isError === true ? "error" : "structured")
    }
    expect([...kinds].sort()).toEqual(["error", "structured"])
  })

  it("should answer arguments that are not an object with an invalid_request tool error, logged as a refused call", async () => {
    const cases: Array<unknown> = ["oops", ["art_a1_1"], null, 5, true]
    const requestIds: Array<string | null> = []
    for (const [i, args] of cases.entries()) {
      const response = await post({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "get_article", arguments: args } })
      expect(response.status).toBe(200)
      requestIds.push(response.headers.get("x-request-id"))
      const body = (await response.json()) as { id: unknown; error?: unknown; result: { isError?: boolean; structuredContent?: unknown; content: Array<{ type: string; text: string }> } }
      expect(body.error, JSON.stringify(args)).toBeUndefined()
      expect(body.id).toBe(i)
      expect(body.result.isError).toBe(true)
      expect(body.result.structuredContent).toBeUndefined()
      expect(body.result.content).toHaveLength(1)
      const problem = JSON.parse(body.result.content[0]?.text ?? "") as { code: string; status: number; detail: string; errors: Array<unknown>; request_id: string }
      expect(problem).toMatchObject({ code: "invalid_request", status: 400, request_id: requestIds[i] })
      expect(problem.detail).toContain("get_article")
      expect(problem.errors.length).toBeGreaterThan(0)
    }
    const log = await fetch(`${server.url}/api/v1/activity?channel=mcp&per_page=100`, { headers: { authorization: `Bearer ${ALICE.apiKey}` } })
    const entries = ((await log.json()) as { data: Array<{ action: string; status: string; error_code: string | null; request_id: string }> }).data
    const refused = entries.filter((e) => requestIds.includes(e.request_id))
    expect(refused).toHaveLength(cases.length)
    expect(refused.every((e) => e.action === "get_article" && e.status === "error" && e.error_code === "invalid_request")).toBe(true)
  })

  it("should refuse a resource, completion or prompt call with a JSON-RPC error whose message starts with the problem's code", async () => {
    const calls: Array<[string, unknown, number, string]> = [
      ["resources/read", { uri: "content-site://articles/art_b1_1" }, -32002, "not_found"],
      ["resources/list", { cursor: "not-a-cursor" }, -32602, "invalid_request"],
      ["prompts/get", { name: "monthly_report", arguments: { site_id: "site_a1", period: "bogus" } }, -32602, "invalid_request"],
      ["prompts/get", { name: "refresh_article", arguments: { article_id: "art_b1_1" } }, -32602, "not_found"],
    ]
    for (const [i, [method, params, code, problem]] of calls.entries()) {
      const body = (await (await post({ jsonrpc: "2.0", id: i, method, params })).json()) as { error: { code: number; message: string; data: { code: string; detail: string } } }
      expect(body.error.code, method).toBe(code)
      expect(body.error.data.code, method).toBe(problem)
      // said once: a client puts "MCP error <code>:" before it itself (as the SDK's client does)
      expect(body.error.message, method).toBe(`${problem}: ${body.error.data.detail}`)
    }
  })

  it("should answer params the protocol's schema refuses as invalid params (-32602) with the invalid_request problem, not as an internal error", async () => {
    const calls: Array<[string, unknown, string]> = [
      ["tools/call", { name: 7 }, "params/name"],
      ["tools/call", {}, "params/name"],
      ["resources/read", {}, "params/uri"],
      ["prompts/get", { arguments: {} }, "params/name"],
    ]
    const requestIds: Array<[string, string]> = []
    for (const [i, [method, params, path]] of calls.entries()) {
      const response = await post({ jsonrpc: "2.0", id: i, method, params })
      const body = (await response.json()) as { id: number; error: { code: number; message: string; data: { code: string; detail: string; request_id: string; errors: Array<{ path: string }> } } }
      expect(body.id, method).toBe(i)
      expect(body.error.code, method).toBe(-32602)
      expect(body.error.data.code, method).toBe("invalid_request")
      expect(body.error.data.errors.map((e) => e.path), method).toContain(path)
      expect(body.error.data.request_id, method).toBe(response.headers.get("x-request-id"))
      // a sentence naming the field, said once, not the schema's issues as JSON
      expect(body.error.message, method).toBe(`invalid_request: ${body.error.data.detail}`)
      expect(body.error.message, method).toContain(`${method} message's params are not valid: ${path}:`)
      requestIds.push([method, body.error.data.request_id])
    }
    // each is a call, logged as refused, its method its action, even one whose params name nothing
    const log = await fetch(`${server.url}/api/v1/activity?channel=mcp&per_page=100`, { headers: { authorization: `Bearer ${ALICE.apiKey}` } })
    const entries = ((await log.json()) as { data: Array<{ action: string; status: string; error_code: string | null; request_id: string }> }).data
    for (const [method, requestId] of requestIds) {
      expect(entries.filter((e) => e.request_id === requestId), method).toEqual([expect.objectContaining({ action: method, status: "error", error_code: "invalid_request" })])
    }
  })

  it("should check Origin and the token before the query string: a foreign Origin is 403 and no token 401, a query or not", async () => {
    const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
    const foreign = await fetch(`${server.url}/mcp?x=1`, { method: "POST", headers: { ...headers, origin: "http://evil.example" }, body: list })
    expect(foreign.status).toBe(403)
    const { authorization: _, ...anonymous } = headers
    const unauthenticated = await fetch(`${server.url}/mcp?x=1`, { method: "POST", headers: anonymous, body: list })
    expect(unauthenticated.status).toBe(401)
    expect(unauthenticated.headers.get("www-authenticate")).toContain('resource_metadata="')
    // with a valid token, the query string is refused as before
    const query = await fetch(`${server.url}/mcp?x=1`, { method: "POST", headers, body: list })
    expect(query.status).toBe(400)
    expect(((await query.json()) as { code: string }).code).toBe("invalid_request")
  })

  // last: it closes the server
  it("should let the server close at once after a client left in the middle of a body", async () => {
    const url = new URL(server.url)
    const socket = connectSocket(Number(url.port), url.hostname)
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
    socket.write(
      `POST /mcp HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${headers["authorization"]}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n`,
    )
    // Node answers 100 Continue as it hands the request to the app: from then on the request is in
    // flight, waiting for its body (a signal from the server, not a guess at how long that takes).
    const interim = await new Promise<string>((resolve) => socket.once("data", (chunk) => resolve(String(chunk))))
    expect(interim).toMatch(/^HTTP\/1\.1 100 Continue\r\n/)
    // part of the body, then the client leaves: once the part is written, the socket is destroyed
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()))
    socket.write('{"jsonrpc":"2.0",', () => socket.destroy())
    await closed
    // the request that lost its client settles, so the drain has nothing to wait for: a request
    // left waiting would hold this close for the 300 s grace, far past the test's time limit
    await server.close()
  }, 30_000)
})
