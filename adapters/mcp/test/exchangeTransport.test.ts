import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { CallToolRequestSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "vitest"
import { exchangeTransport } from "../src/exchangeTransport.ts"

/** A server with one tool that answers its argument, over an exchange transport whose `onmessage` calls are counted. */
const connected = async (direct: boolean) => {
  const server = new Server({ name: "t", version: "1" }, { capabilities: { tools: {} } })
  server.setRequestHandler(CallToolRequestSchema, (request) => ({ content: [{ type: "text", text: String(request.params.arguments?.["say"]) }] }))
  const transport = exchangeTransport<string>()
  await server.connect(transport)
  const handed = direct ? transport.handRequestsTo(server) : false
  const viaOnmessage: Array<unknown> = []
  const protocolsOwn = transport.onmessage!
  transport.onmessage = (message, extra) => {
    viaOnmessage.push((message as { method?: unknown }).method)
    protocolsOwn(message, extra)
  }
  return { transport, handed, viaOnmessage }
}

const call = (id: string | number, say: string): JSONRPCMessage => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: { say } } })

describe("exchangeTransport", () => {
  it("should hand requests to the SDK protocol's own entry, and still pass notifications through onmessage", async () => {
    const { transport, handed, viaOnmessage } = await connected(true)
    // fails when an SDK upgrade renames the protocol's entry: requests would then take onmessage again
    expect(handed).toBe(true)
    const answers = await transport.exchange([call("a", "one"), call(7, "two"), { jsonrpc: "2.0", method: "notifications/initialized" }], "ctx")
    expect(answers).toEqual([
      { jsonrpc: "2.0", id: "a", result: { content: [{ type: "text", text: "one" }] } },
      { jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: "two" }] } },
    ])
    expect(viaOnmessage).toEqual(["notifications/initialized"])
  })

  it("should answer the same through onmessage when the protocol has no such entry", async () => {
    const direct = await connected(true)
    const plain = await connected(false)
    expect(plain.transport.handRequestsTo({})).toBe(false)
    const unhandled = { jsonrpc: "2.0", id: 3, method: "tools/list" } as JSONRPCMessage
    const messages = [call("a", "one"), unhandled, { jsonrpc: "2.0", id: 4, method: "no/such" } as JSONRPCMessage]
    const expected = await direct.transport.exchange(messages, "ctx")
    expect(await plain.transport.exchange(messages, "ctx")).toEqual(expected)
    expect(plain.viaOnmessage).toEqual(["tools/call", "tools/list", "no/such"])
    expect((expected[2] as { error?: { code: number } }).error?.code).toBe(-32601)
  })

  it("should tell each request's 1-based position among its exchange's messages", async () => {
    const server = new Server({ name: "t", version: "1" }, { capabilities: { tools: {} } })
    const transport = exchangeTransport<string>()
    server.setRequestHandler(CallToolRequestSchema, (request, extra) => ({
      content: [{ type: "text", text: `${String(request.params.arguments?.["say"])}@${transport.positionOf(extra.requestId)}` }],
    }))
    await server.connect(transport)
    transport.handRequestsTo(server)
    const texts = (answers: Array<JSONRPCMessage>) => answers.map((a) => (a as unknown as { result: { content: Array<{ text: string }> } }).result.content[0]?.text)
    // the same client id twice, and a notification between: positions count every message
    expect(texts(await transport.exchange([call(1, "a"), { jsonrpc: "2.0", method: "notifications/initialized" }, call(1, "b")], "ctx"))).toEqual(["a@1", "b@3"])
    expect(texts(await transport.exchange([call(1, "alone")], "ctx"))).toEqual(["alone@1"])
  })
})
