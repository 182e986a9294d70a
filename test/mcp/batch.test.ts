/**
 * Tool calls sent together in one JSON-RPC batch (one `POST /mcp` whose body is an array): every
 * call is an activity entry of its own, on PostgreSQL (the journal's insert skips an entry whose
 * channel and request id are in the table already) and on the in-memory storage alike.
 */
import { importData } from "@content-site/core"
import { MAX_JSON_DEPTH, MAX_JSON_TOKENS } from "@content-site/http"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { type StartedServer, startServer } from "../../apps/server/server.ts"
import { scratchDirs } from "../e2e/helpers.ts"
import { ALICE, connect, ScriptedOAuthProvider, seedFile, startSeeded } from "./support.ts"

type Entry = { action: string; channel: string; status: string; error_code: string | null; request_id: string; article_id: string | null }

/** Connects an agent through the OAuth flow and answers raw `/mcp` POSTs and the account's activity. */
const agentOn = async (server: StartedServer, name: string) => {
  const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, name)
  const client = await connect(`${server.url}/mcp`, provider)
  if (client === undefined) throw new Error(`could not connect: ${provider.lastPage}`)
  await client.close()
  const headers = {
    authorization: `Bearer ${provider.savedTokens?.access_token ?? ""}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  }
  return {
    /** Posts `body` as JSON, or as it is when `asText` (a message written by hand). */
    post: (body: unknown, asText = false) =>
      fetch(`${server.url}/mcp`, { method: "POST", headers, body: asText ? (body as string) : JSON.stringify(body) }),
    /** This agent's mcp entries, by request id (the calls of a batch run side by side: their times tell no order). */
    entries: async (): Promise<Array<Entry>> => {
      const response = await fetch(`${server.url}/api/v1/activity?channel=mcp&per_page=100`, { headers: { authorization: `Bearer ${ALICE.apiKey}` } })
      expect(response.status).toBe(200)
      const data = ((await response.json()) as { data: Array<Entry & { actor: { name: string } }> }).data
      return data.filter((e) => e.actor.name === name).sort((a, b) => a.request_id.localeCompare(b.request_id, "en", { numeric: true }))
    },
  }
}

const toolCall = (id: number, name: string, args: Record<string, unknown>) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } })

/** The checks every storage must pass; `server` is read when the tests run. */
const batchCases = (server: () => StartedServer) => {
  it("should refuse a message nested deeper than MAX_JSON_DEPTH levels without parsing it, and parse one nested to the limit", async () => {
    const agent = await agentOn(server(), "Deep Agent")
    // the envelope, params and arguments are three levels; `x` holds the rest
    const nested = (levels: number) =>
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_sites","arguments":{"x":${"[".repeat(levels - 3)}${"]".repeat(levels - 3)}}}}`
    const parse = vi.spyOn(JSON, "parse")
    try {
      for (const [levels, parsed] of [
        [MAX_JSON_DEPTH, 1],
        [MAX_JSON_DEPTH + 1, 0],
        // (a million brackets: parsed, they held the event loop for a tenth of a second and built a million arrays)
        [1_000_000, 0],
      ] as const) {
        const body = nested(levels)
        parse.mockClear()
        const response = await agent.post(body, true)
        // the message's own text handed to JSON.parse: once within the limit, never past it
        expect(parse.mock.calls.filter(([text]) => text === body).length).toBe(parsed)
        if (parsed === 0) {
          expect(response.status).toBe(400)
          expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32600)
        } else {
          expect(response.status).toBe(200)
        }
      }
    } finally {
      parse.mockRestore()
    }
  })

  it("should refuse a message of more than MAX_JSON_TOKENS values and keys without parsing it, and parse one at the limit", async () => {
    const agent = await agentOn(server(), "Wide Agent")
    // the envelope holds 15 of them (`{`, `[`, `:` and `,`); each `{},` of `x` two more
    const wide = (tokens: number) => {
      const objects = (tokens - 15) / 2
      return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_sites","arguments":{"x":[${"{},".repeat(objects)}0]}}}`
    }
    const parse = vi.spyOn(JSON, "parse")
    try {
      for (const [tokens, parsed] of [
        [MAX_JSON_TOKENS - 1, 1],
        [MAX_JSON_TOKENS + 1, 0],
        // (16 MiB of `{},`: parsed, they held the event loop 3 s)
        [2_000_001, 0],
      ] as const) {
        const body = wide(tokens)
        parse.mockClear()
        const response = await agent.post(body, true)
        expect(parse.mock.calls.filter(([text]) => text === body).length).toBe(parsed)
        expect(response.status).toBe(parsed === 0 ? 400 : 200)
        if (parsed === 0) expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32600)
      }
    } finally {
      parse.mockRestore()
    }
  })

  it("should log every tool call of a batch as its own entry, each with its own request id", async () => {
    const agent = await agentOn(server(), "Batch Agent")
    const response = await agent.post([
      toolCall(1, "list_sites", {}),
      // refused: an article nobody has
      toolCall(2, "get_article", { article_id: "art_nobody" }),
      { jsonrpc: "2.0", method: "notifications/initialized" },
      toolCall(4, "get_article", { article_id: "art_a1_1" }),
    ])
    expect(response.status).toBe(200)
    const requestId = response.headers.get("x-request-id") ?? ""
    expect(requestId).not.toBe("")
    const answers = (await response.json()) as Array<{ id: number; result: { isError?: boolean; content: Array<{ text: string }> } }>
    expect(answers.map((a) => [a.id, a.result.isError ?? false])).toEqual([
      [1, false],
      [2, true],
      [4, false],
    ])
    const entries = await agent.entries()
    expect(entries.map((e) => [e.action, e.status, e.error_code])).toEqual([
      ["list_sites", "ok", null],
      ["get_article", "error", "not_found"],
      ["get_article", "ok", null],
    ])
    // each call's id is the HTTP request's with the call's 1-based position in the batch
    expect(entries.map((e) => e.request_id)).toEqual([`${requestId}.1`, `${requestId}.2`, `${requestId}.4`])
    const problem = JSON.parse(answers[1]?.result.content[0]?.text ?? "{}") as { code: string; request_id: string }
    expect(problem).toMatchObject({ code: "not_found", request_id: `${requestId}.2` })
  })

  it("should keep the request's own id for a single call, as in X-Request-Id", async () => {
    const agent = await agentOn(server(), "Single Agent")
    const response = await agent.post(toolCall(1, "get_article", { article_id: "art_nobody" }))
    const requestId = response.headers.get("x-request-id")
    const answer = (await response.json()) as { result: { content: Array<{ text: string }> } }
    expect((JSON.parse(answer.result.content[0]?.text ?? "{}") as { request_id: string }).request_id).toBe(requestId)
    // a batch of one message is a single message
    const alone = await agent.post([toolCall(2, "list_sites", {})])
    const aloneId = alone.headers.get("x-request-id")
    expect(alone.status).toBe(200)
    const entries = (await agent.entries()).map((e) => [e.action, e.request_id])
    expect(entries).toHaveLength(2)
    expect(entries).toEqual(
      expect.arrayContaining([
        ["get_article", requestId],
        ["list_sites", aloneId],
      ]),
    )
  })

  it("should write every change of a batch with its own entry", async () => {
    const agent = await agentOn(server(), "Batch Writer")
    const response = await agent.post([
      toolCall(1, "update_article", { article_id: "art_a1_2", title: "Batch title one" }),
      toolCall(2, "update_article", { article_id: "art_a1_3", title: "Batch title two" }),
    ])
    const requestId = response.headers.get("x-request-id")
    const answers = (await response.json()) as Array<{ result: { isError?: boolean; structuredContent: { revision: { number: number } | null } } }>
    expect(answers.map((a) => a.result.isError ?? false)).toEqual([false, false])
    expect(answers.every((a) => a.result.structuredContent.revision !== null)).toBe(true)
    expect((await agent.entries()).map((e) => [e.action, e.article_id, e.request_id])).toEqual([
      ["update_article", "art_a1_2", `${requestId}.1`],
      ["update_article", "art_a1_3", `${requestId}.2`],
    ])
  })
}

describe("a batch of tool calls on PostgreSQL", () => {
  let server: StartedServer
  beforeAll(async () => {
    server = await startSeeded()
  }, 60_000)
  afterAll(async () => {
    await server?.close()
  })
  batchCases(() => server)
})

describe("a batch of tool calls on the in-memory storage", () => {
  let server: StartedServer
  const dirs = scratchDirs()
  beforeAll(async () => {
    server = await startServer({
      storage: "memory",
      quiet: true,
      env: { HOST: "127.0.0.1", PORT: "0", SEED_DEMO: "false", AUTH_FAILURE_LIMIT_PER_MINUTE: "1000", DATA_DIR: dirs.make() },
    })
    await server.runtime.runPromise(importData(seedFile()))
  }, 60_000)
  afterAll(async () => {
    await server?.close()
    dirs.removeAll()
  })
  batchCases(() => server)
})
