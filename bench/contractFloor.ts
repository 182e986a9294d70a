/**
 * The contract's floor: the least work the contract asks of one `GET /api/v1/articles/{id}` and of
 * one MCP `get_article`, written straight on Koa without the service's pipeline (no middleware
 * chain, no Effect run for the key, the limit or the entry, no error funnel). It answers the same
 * bytes as the service and does, per request:
 * - the credential: the API key hashed (SHA-256, as the service stores keys) and found in a map;
 *   the access token found among the verified ones (the service's cache hit);
 * - the request limit counted in process (the service's exact, shared count costs more);
 * - the article read through the service's own repository call, made into the contract's view
 *   (encoded with the REST encoder for REST, as the endpoint answers it for MCP), then serialised;
 * - the activity entry appended to a journal like the service's (shipped in the background);
 * - the headers the contract names: `X-Request-Id`, `Cache-Control: no-store`, `RateLimit-*`,
 *   `ETag` (REST), `X-Content-Type-Options` and a CSP with `frame-ancestors 'none'`;
 * - over MCP, additionally: the Streamable HTTP checks (`Host` and `Origin`, `Accept`,
 *   `Content-Type`), the body read and parsed with the SDK's `JSONRPCMessageSchema`, the call
 *   through one shared SDK `Server` (the endpoint's transport), and the tool's text rendering
 *   beside `structuredContent`.
 * Whatever the service adds over this is its pipeline; what this costs over the floor
 * (Koa + read + journaled entry) no implementation of the contract that makes each answer when
 * asked avoids.
 */
import { hash, randomUUID } from "node:crypto"
import { createServer, type Server as HttpServer } from "node:http"
import type { AddressInfo } from "node:net"
import Router from "@koa/router"
import Koa from "koa"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js"
import { CallToolRequestSchema, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js"
import { Article, ArticleRepository, articleView } from "@content-site/core"
import type { StartedServer } from "../apps/server/server.ts"
import { exchangeTransport } from "../adapters/mcp/src/exchangeTransport.ts"
import { tools } from "../adapters/mcp/src/tools.ts"
import type { ActivityJournal } from "../adapters/orm/src/activityJournal.ts"
import { activityEntries } from "./support.ts"
import { wireEncoderOf } from "../adapters/rest/src/rest/wireEncoder.ts"

/** The two routes of the contract's floor, on one server. */
export interface ContractFloor {
  /** `GET` this URL with the API key as a bearer token. */
  readonly getUrl: string
  /** `POST` a `tools/call` of `get_article` here with the access token. */
  readonly mcpUrl: string
  readonly close: () => Promise<void>
}

/** Who the floor's entries name, as the service's entries for the same calls do. */
export interface FloorCaller {
  readonly accountId: string
  readonly key: { readonly id: string; readonly name: string; readonly secret: string }
  /** The MCP client an access token was issued to, and the token. */
  readonly client?: { readonly id: string; readonly name: string; readonly token: string }
}

const CONTRACT_HEADERS = [
  ["Cache-Control", "no-store"],
  ["X-Content-Type-Options", "nosniff"],
  ["Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"],
] as const

const readBody = (req: NodeJS.ReadableStream): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    const onData = (chunk: Buffer) => void chunks.push(chunk)
    req.on("data", onData)
    req.once("error", reject)
    req.once("end", () => {
      req.off("data", onData)
      req.off("error", reject)
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))
    })
  })

/** Starts the contract's floor for one article of the service `app`, logging to `journal`. */
export const contractFloor = async (app: StartedServer, journal: ActivityJournal, caller: FloorCaller, articleId: string): Promise<ContractFloor> => {
  const keys = new Map([[hash("sha256", caller.key.secret, "hex"), caller.key]])
  const tokens = new Map(caller.client !== undefined ? [[caller.client.token, caller.client]] : [])
  const encode = wireEncoderOf(Article)
  const render = tools.find((t) => t.name === "get_article")!.render
  let counted = 0
  const read = async () => articleView(await app.runtime.runPromise(ArticleRepository.use((articles) => articles.get(caller.accountId, articleId))))
  // the entries name the article's site, as the service's do
  const subject = { accountId: caller.accountId, siteId: (await read()).site_id, articleId }
  const apiEntry = activityEntries(journal, { ...subject, actor: { type: "api_key", id: caller.key.id, name: caller.key.name }, action: "GET /api/v1/articles/{id}" })
  const mcpEntry = caller.client !== undefined
    ? activityEntries(journal, { ...subject, channel: "mcp", actor: { type: "oauth_client", id: caller.client.id, name: caller.client.name }, action: "get_article" })
    : undefined
  const answered = (ctx: Koa.Context, requestId: string) => {
    counted++
    ctx.set("X-Request-Id", requestId)
    for (const [name, value] of CONTRACT_HEADERS) ctx.set(name, value)
    ctx.set("RateLimit-Limit", "1000000000")
    ctx.set("RateLimit-Remaining", String(1_000_000_000 - counted))
    ctx.set("RateLimit-Reset", "60")
  }

  const transport = exchangeTransport<string>()
  const server = new Server({ name: "contract-floor", version: "1" }, { capabilities: { tools: { listChanged: false } } })
  Protocol.prototype.setRequestHandler.call(server, CallToolRequestSchema, async (_request: unknown, extra: { requestId: string | number }) => {
    const requestId = transport.contextOf(extra.requestId) ?? ""
    // as the endpoint answers: the use case's value itself
    const value = await read()
    await mcpEntry!(requestId)
    return { content: [{ type: "text", text: render(value) }], structuredContent: value as unknown as Record<string, unknown> }
  })
  await server.connect(transport)
  transport.handRequestsTo(server)

  const koa = new Koa()
  const router = new Router()
  router.get(`/api/v1/articles/${articleId}`, async (ctx) => {
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(ctx.get("Authorization"))
    const key = m !== null ? keys.get(hash("sha256", m[1]!, "hex")) : undefined
    if (key === undefined) return void (ctx.status = 401)
    const requestId = `req_${randomUUID().replaceAll("-", "")}`
    const value = await read()
    await apiEntry(requestId)
    answered(ctx, requestId)
    ctx.set("ETag", `"${value.id}-r${value.revision}"`)
    ctx.type = "application/json; charset=utf-8"
    ctx.body = JSON.stringify(encode(value))
  })
  router.post("/mcp", async (ctx) => {
    // the transport's DNS-rebinding checks: the Host ours, a browser Origin too when sent
    const origin = ctx.get("Origin")
    if (ctx.host !== host || (origin !== "" && origin !== base)) return void (ctx.status = 403)
    const m = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get("Authorization"))
    if (m === null || !tokens.has(m[1]!)) return void (ctx.status = 401)
    const accept = ctx.get("Accept")
    if (!accept.includes("application/json") || !accept.includes("text/event-stream")) return void (ctx.status = 406)
    if (ctx.get("Content-Type") !== "application/json") return void (ctx.status = 415)
    const parsed: unknown = JSON.parse((await readBody(ctx.req)).toString("utf8"))
    const messages = (Array.isArray(parsed) ? parsed : [parsed]).map((message: unknown) => JSONRPCMessageSchema.parse(message))
    const requestId = `req_${randomUUID().replaceAll("-", "")}`
    const answers = await transport.exchange(messages, requestId)
    answered(ctx, requestId)
    ctx.type = "application/json"
    ctx.body = JSON.stringify(answers.length === 1 ? answers[0] : answers)
  })
  koa.use(router.routes())
  const http: HttpServer = createServer(koa.callback())
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  const host = `127.0.0.1:${(http.address() as AddressInfo).port}`
  const base = `http://${host}`
  return {
    getUrl: `${base}/api/v1/articles/${articleId}`,
    mcpUrl: `${base}/mcp`,
    close: async () => {
      await new Promise((resolve) => http.close(resolve))
      await server.close()
    },
  }
}
