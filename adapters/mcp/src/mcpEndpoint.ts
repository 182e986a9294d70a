/**
 * The MCP endpoint (`/mcp`): bearer tokens, DNS-rebinding checks, the stateless Streamable HTTP
 * checks, one SDK server for every request, and one tool call's whole life (limit, arguments,
 * idempotency key, the use case, the answer's shape, the activity entry). Longer than 300 lines because that life is one sequence a
 * reader follows top to bottom; the tools themselves are in `tools.ts`.
 */
import {
  type Caller,
  checkAuthFailureBudget,
  checkRequestLimit,
  claimIdempotencyKey,
  type IdempotencyHold,
  decodeInput,
  internalProblem,
  InsufficientScope,
  InvalidRequest,
  isCoreError,
  minimalWriteAnswer,
  isRecordableStatus,
  type LimitVerdict,
  type LoggedCaller,
  OAuthStore,
  peekRequestLimit,
  type Principal,
  RateLimited,
  recordActivity,
  recordAuthFailure,
  recordIdempotentAnswer,
  releaseIdempotencyKey,
  replayedProblemText,
  requestFingerprint,
  resolveOAuthPrincipal,
  Settings,
  toProblem,
  toTimestamp,
  type Unavailable,
} from "@content-site/core"
import { clientAddress, displayName, eventLogOf, type HttpDeps, jsonBoundPassed, LARGE_BODY_BYTES, MAX_JSON_DEPTH, MAX_JSON_TOKENS, noteAccount, notesOf, type RequestNotes, parseInTurn, problemHeaders, runExit, strictQuery } from "@content-site/http"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { Protocol, type RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js"
import { MAX_BATCH_SIZE } from "@modelcontextprotocol/sdk/server/requestBody.js"
import { mediaTypeEssence } from "@modelcontextprotocol/sdk/shared/mediaType.js"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import {
  CallToolRequestParamsSchema,
  CallToolRequestSchema,
  type CallToolResult,
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  ErrorCode,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  McpError,
  type ServerNotification,
  type ServerRequest,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js"
import { Cause, Effect, Exit, Option } from "effect"
import { type JWTVerifyGetKey, jwtVerify } from "jose"
import type { Context, Middleware } from "koa"
import { MCP_SCOPE, MCP_SCOPES } from "./authorizationServer.ts"
import { grantsWrite, USAGE_MODEL, usageId } from "./connectedClients.ts"
import { exchangeTransport } from "./exchangeTransport.ts"
import { accessTokenChecks } from "./signingKeys.ts"
import { toolDefinitionsFor, toolNamed } from "./tools.ts"
import { COUNTED_PROTOCOL_METHODS, protocolCalls, refusal, refusedForRequestLimit } from "./calls.ts"
import { registerPrompts } from "./prompts.ts"
import { registerArticleResources } from "./resources.ts"
import { refuseMalformedParams } from "./malformedParams.ts"

/** A tool name by MCP's rule (1 to 128 of letters, digits, `_`, `-` and `.`): what an unknown tool's log entry may name. */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/

/** `text` as sent when at most `max` UTF-16 units long, else its first `max` (a surrogate pair kept whole or left out) and `…`. */
const shortened = (text: string, max: number): string => {
  if (text.length <= max) return text
  const cut = /[\uD800-\uDBFF]/.test(text.charAt(max - 1)) ? max - 1 : max
  return `${text.slice(0, cut)}…`
}

/** Largest JSON-RPC body accepted at `/mcp`: a 10 MiB image in base64 plus room for the envelope. */
const MAX_MCP_BODY_BYTES = 16 * 1024 * 1024
/** How many verified access tokens each instance remembers. */
const VERIFIED_TOKEN_CACHE = 5000

const INSTRUCTIONS = [
  "Content-Site keeps the websites, articles and backlinks of one account.",
  "Start with list_sites, then list_articles / list_backlinks / get_stats with a site_id, and get_article with an article_id.",
  "To change an article, read it with get_article first: keep every link in its protected_links exactly as it is. With update_article pass its revision as base_revision, so that a change somebody made meanwhile is merged with yours, not erased (edit_conflict lists what you both changed differently); with edit_article pass it as if_revision.",
  "For small changes use edit_article (find and replace, find copied exactly from the body); use update_article only to replace the whole body. Try risky edits with dry_run first.",
  "Give every write a fresh idempotency_key and reuse it when you retry the same change, so a retry never applies it twice (a dry run is not the change: send it without one).",
  "Writes answer the whole article by default. With edit_article pass response: \"minimal\" (the other write tools take it too): the answer then leaves out only the body, so a small edit costs a few hundred bytes each way; call get_article when you do need to read the body again.",
  "Check what changed with diff_revisions, and undo a change with restore_revision (list_revisions shows the numbers).",
  "To find an article by its words (a title, a phrase, a topic), use search_articles; articles are also resources (content-site://articles/{article_id}), and the prompts monthly_report and refresh_article set out whole tasks.",
  "Errors come back as tool results whose text is a JSON problem with a code (for example not_found, edit_not_applicable, protected_link_changed, precondition_failed, rate_limited).",
].join(" ")

/**
 * `tools/call` as the SDK's schema parses it, except `arguments`: the SDK's asks for an object
 * and answers anything else with a JSON-RPC internal error (the zod issues as its message). Here
 * any value passes, so that the tool refuses it as it refuses any bad argument: an
 * `invalid_request` tool result, logged. A call without a string `name` (or a bad `_meta` or
 * `task`) is still refused by the SDK with a protocol error. (The SDK's own zod schema, extended
 * with its own methods: no second zod.)
 */
/** A call refused before it counted itself (an unknown tool, params the SDK's schema refuses), its entry not yet written. */
interface RefusedUncounted {
  readonly caller: LoggedCaller
  readonly code: string
}

const ToolCallRequestSchema = CallToolRequestSchema.extend({ params: CallToolRequestParamsSchema.omit({ arguments: true }).loose() })
/** What the handler reads of a parsed `tools/call`. */
interface ToolCallRequest {
  readonly params: { readonly name: string; readonly arguments?: unknown }
}

/** The problem code of a replayed tool error. */
const replayedCode = (result: CallToolResult): string | null => {
  const first = result.content[0]
  if (first?.type !== "text") return null
  try {
    return (JSON.parse(first.text) as { code?: string }).code ?? null
  } catch {
    return null
  }
}

/**
 * A replayed answer says so before anything else, and names the revision the first call made:
 * read as a new answer, "Saved as revision 2" would tell a model it wrote again. An error result
 * is the first one with this request's `request_id` (`replayedProblemText`): the contract's tool
 * error is one text content holding the problem, whose id is the response's and the entry's.
 */
const asReplayed = (result: CallToolResult, requestId: string): CallToolResult => {
  if (result.isError === true) {
    return { ...result, content: result.content.map((c) => (c.type === "text" ? { ...c, text: replayedProblemText(c.text, requestId) } : c)) }
  }
  const revision = (result.structuredContent as { revision?: { number?: unknown } | null } | undefined)?.revision
  const line =
    typeof revision?.number === "number"
      ? `Replayed: the first call with this idempotency_key and these arguments saved revision ${revision.number}; nothing was written now. Its answer follows (get_article shows the article as it is now).`
      : "Replayed: the first call with this idempotency_key and these arguments wrote nothing, and nothing was written now. Its answer follows."
  const [first, ...rest] = result.content
  return { ...result, content: first?.type === "text" ? [{ ...first, text: `${line}\n${first.text}` }, ...rest] : [{ type: "text", text: line }, ...result.content] }
}

/** The site of the article a tool answered with (`get_article`, the writes), or null. */
const answeredSite = (value: Record<string, unknown>): string | null => {
  const article = typeof value["article"] === "object" && value["article"] !== null ? (value["article"] as Record<string, unknown>) : value
  return typeof article["site_id"] === "string" ? article["site_id"] : null
}

const jsonRpcError = (ctx: Context, status: number, message: string, code = -32000): undefined => {
  ctx.status = status
  ctx.set("Cache-Control", "no-store")
  ctx.type = "application/json"
  ctx.body = JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null })
  return undefined
}

const requestIdOf = (ctx: Context): string => {
  const id = (ctx.state as { requestId?: unknown }).requestId
  return typeof id === "string" ? id : crypto.randomUUID()
}

/**
 * Reads the request body, or undefined when it is larger than `limit` bytes (the rest is left
 * unread). Rejects when the client goes away before the body ends, so the request is not left
 * waiting (the server's drain counts it until it settles).
 */
const readBody = (ctx: Context, limit: number): Promise<Buffer | undefined> =>
  new Promise((resolve, reject) => {
    const req = ctx.req
    const chunks: Array<Buffer> = []
    let size = 0
    const stop = () => {
      req.off("data", onData)
      req.off("end", onEnd)
      req.off("error", onGone)
      req.off("close", onGone)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= limit) return void chunks.push(chunk)
      stop()
      req.pause()
      resolve(undefined)
    }
    const onEnd = () => {
      stop()
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks))
    }
    const onGone = (error?: Error) => {
      stop()
      reject(error ?? new Error("aborted"))
    }
    if (req.readableEnded) return resolve(Buffer.alloc(0))
    req.on("data", onData)
    req.once("end", onEnd)
    req.once("error", onGone)
    req.once("close", onGone)
  })

const rateLimitHeaders = (ctx: Context, verdict: LimitVerdict) => {
  ctx.set("RateLimit-Limit", String(verdict.limit))
  ctx.set("RateLimit-Remaining", String(verdict.remaining))
  ctx.set("RateLimit-Reset", String(verdict.resetSeconds))
}

interface Authenticated {
  readonly principal: Principal
  readonly clientId: string
}

/** The protocol revision that brought `resource_link` content (tool results, prompt messages). */
const RESOURCE_LINKS_SINCE = "2025-06-18"

/**
 * An answer without `resource_link` items, for a client of an older revision: a tool result's
 * content without them, a prompt without the messages that are one. Revisions are dates: they
 * compare as text. Linear in the answer's content.
 */
const withoutResourceLinks = (answer: JSONRPCMessage): JSONRPCMessage => {
  const result = (answer as { result?: { content?: unknown; messages?: unknown } }).result
  if (result === undefined) return answer
  const isLink = (item: unknown) => (item as { type?: unknown } | null)?.type === "resource_link"
  if (Array.isArray(result.content) && result.content.some(isLink)) {
    return { ...answer, result: { ...result, content: result.content.filter((item: unknown) => !isLink(item)) } } as JSONRPCMessage
  }
  if (Array.isArray(result.messages) && result.messages.some((m: unknown) => isLink((m as { content?: unknown }).content))) {
    return { ...answer, result: { ...result, messages: result.messages.filter((m: unknown) => !isLink((m as { content?: unknown }).content)) } } as JSONRPCMessage
  }
  return answer
}

/**
 * The MCP endpoint at `/mcp`: Streamable HTTP, stateless (one SDK server answers every request),
 * Host/Origin checked against the public URL, OAuth access tokens verified for signature, expiry,
 * audience and a live grant. Every tool call counts against the account's limits and is logged.
 */
export const mcpEndpoint = (options: {
  readonly deps: HttpDeps
  /** The keys access tokens are verified with, as in force now (they change with a key rotation). */
  readonly verifyKeys: () => JWTVerifyGetKey
  /** Further `Host` names accepted besides PUBLIC_URL's, lower case. */
  readonly allowedHosts: ReadonlyArray<string>
}): Middleware => {
  const { deps } = options
  const { runtime, publicUrl } = deps
  const events = eventLogOf(deps)
  const mcpUrl = `${publicUrl}/mcp`
  const publicOrigin = new URL(publicUrl)
  const allowedHosts = new Set([publicOrigin.host, ...options.allowedHosts])
  const allowedOrigins = new Set([publicOrigin.origin])
  const resourceMetadata = `${publicUrl}/.well-known/oauth-protected-resource/mcp`
  const lastUsageWrite = new Map<string, number>()
  // Signature checks are the costly part of a call; a token's claims never change, so a verified
  // token is remembered until it expires. Its grant is still looked up on every call.
  const verifiedTokens = new Map<string, Record<string, unknown>>()
  let verifiedWith: JWTVerifyGetKey | undefined
  // The server's JSON Schema validator: one Ajv, built once.
  const jsonSchemaValidator = new AjvJsonSchemaValidator()

  /** Logs a refused call: its entry's outcome `error` with `errorCode`. A log that cannot be written is an event, not the caller's failure. */
  const logRefusedCall = (caller: Parameters<typeof recordActivity>[0], errorCode: string): Promise<void> =>
    runtime
      .runPromise(recordActivity(caller, { ok: false, errorCode }) as Effect.Effect<void>)
      .catch((err: unknown) => events.error({ request_id: caller.requestId, err: err instanceof Error ? err.message : String(err) }, "could not record MCP activity"))

  /**
   * Logs a request refused before any token named an account (every connector call is logged):
   * no account and no actor, so it is in no account's view of the log. Its answer is sent
   * whether or not the entry could be written.
   */
  const logRefused = (ctx: Context, code: string): Promise<void> =>
    logRefusedCall({ accountId: null, actor: null, channel: "mcp", requestId: requestIdOf(ctx), action: `${ctx.method} /mcp`, startedAt: Date.now(), address: clientAddress(ctx) }, code)

  /** A request refused over a limit, as an HTTP answer: 429, the problem, `Retry-After`. */
  const refuseOverLimit = (ctx: Context, error: RateLimited) => {
    // (noted for the access line and the refusals' metric, as every problem answer is)
    notesOf(ctx).problemCode = "rate_limited"
    ctx.status = 429
    ctx.set("Retry-After", String(error.retryAfterSeconds))
    ctx.set("Cache-Control", "no-store")
    ctx.type = "application/problem+json"
    ctx.body = JSON.stringify(toProblem(error, requestIdOf(ctx), publicUrl))
  }

  /** A request refused while the service is busy, as an HTTP answer: 503, the problem, `Retry-After`. */
  const refuseUnavailable = (ctx: Context, error: Unavailable) => {
    notesOf(ctx).problemCode = "unavailable"
    ctx.status = 503
    for (const [name, value] of Object.entries(problemHeaders(error))) ctx.set(name, value)
    ctx.set("Cache-Control", "no-store")
    ctx.type = "application/problem+json"
    ctx.body = JSON.stringify(toProblem(error, requestIdOf(ctx), publicUrl))
  }

  const challenge = (ctx: Context, error?: { code: string; description: string }) => {
    const parts = [`resource_metadata="${resourceMetadata}"`, `scope="${MCP_SCOPES.join(" ")}"`]
    if (error) parts.push(`error="${error.code}"`, `error_description="${error.description.replace(/"/g, "'")}"`)
    ctx.set("WWW-Authenticate", `Bearer ${parts.join(", ")}`)
    notesOf(ctx).problemCode = "unauthenticated"
    ctx.status = 401
    ctx.set("Cache-Control", "no-store")
    ctx.type = "application/problem+json"
    ctx.body = JSON.stringify({
      type: `${publicUrl}/problems/unauthenticated`,
      title: "Unauthenticated",
      status: 401,
      code: "unauthenticated",
      detail: error?.description ?? `Connect with OAuth: the authorization server is described at ${resourceMetadata}.`,
      request_id: requestIdOf(ctx),
    })
  }

  // (the client's name as its token carries it: a client described by a metadata document has no
  // stored registration for the pages to name it by)
  const noteUsage = (accountId: string, clientId: string, clientName: string) => {
    const key = usageId(accountId, clientId)
    const now = Date.now()
    if (now - (lastUsageWrite.get(key) ?? 0) < 60_000) return
    lastUsageWrite.set(key, now)
    if (lastUsageWrite.size > 10_000) lastUsageWrite.clear()
    void runtime
      .runPromise(
        OAuthStore.use((store) => store.upsert(USAGE_MODEL, key, { accountId, clientId, clientName, lastUsedAt: toTimestamp(now) }, undefined)) as Effect.Effect<void>,
      )
      .catch(() => undefined)
  }

  /** Verifies the bearer token; answers the 401/429 itself and returns undefined when it fails. */
  const authenticate = async (ctx: Context): Promise<Authenticated | undefined> => {
    const header = ctx.get("Authorization")
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
    if (header === "" && ctx.get("X-API-Key") === "") {
      challenge(ctx)
      await logRefused(ctx, "unauthenticated")
      return undefined
    }
    // A signed token cannot be guessed, so the per-address failure budget is consulted only when a
    // presented credential fails: over it, 429; otherwise the failure is counted and answered 401.
    // (a failure past the budget, counted in a concurrent burst that all found it open, is a 429 too)
    const fail = async (description: string) => {
      const address = clientAddress(ctx)
      const errorOf = (exit: Exit.Exit<void, unknown>) => (Exit.isSuccess(exit) ? undefined : Option.getOrUndefined(Cause.findErrorOption(exit.cause)) as { _tag?: unknown } | undefined)
      const budget = await runtime.runPromiseExit(checkAuthFailureBudget(address))
      // (a store that cannot read it: its own error, answered 503 as REST answers then)
      if (Exit.isFailure(budget) && errorOf(budget)?._tag !== "RateLimited") {
        const error = errorOf(budget)
        throw error !== undefined && isCoreError(error) ? error : new Error(Cause.pretty(budget.cause))
      }
      // the budget open, the failure counted (a store that cannot count leaves the answer a 401, as before it was asked)
      const counted = Exit.isSuccess(budget) ? await runtime.runPromiseExit(recordAuthFailure(address) as Effect.Effect<void, RateLimited | Unavailable>) : budget
      const over = errorOf(counted)
      if (over?._tag === "RateLimited") {
        refuseOverLimit(ctx, over as RateLimited)
        await logRefused(ctx, "rate_limited")
        return undefined
      }
      challenge(ctx, { code: "invalid_token", description })
      await logRefused(ctx, "unauthenticated")
      return undefined
    }
    const token = match?.[1]
    if (token === undefined) return fail("Send an OAuth access token as 'Authorization: Bearer <token>'.")
    if (token.startsWith("cs_") || ctx.get("X-API-Key") !== "") {
      return fail("API keys are not accepted at /mcp: connect the app with OAuth (it opens a sign-in page).")
    }
    // A key rotation that dropped a key must not leave its tokens remembered as verified.
    const keys = options.verifyKeys()
    if (keys !== verifiedWith) {
      verifiedTokens.clear()
      verifiedWith = keys
    }
    let claims = verifiedTokens.get(token)
    if (claims !== undefined && (typeof claims["exp"] !== "number" || claims["exp"] * 1000 <= Date.now())) {
      verifiedTokens.delete(token)
      claims = undefined
    }
    if (claims === undefined) {
      try {
        const verified = await jwtVerify(token, keys, accessTokenChecks(publicUrl, mcpUrl))
        claims = verified.payload as Record<string, unknown>
      } catch {
        return fail("The access token is invalid, expired or not meant for this server.")
      }
      if (verifiedTokens.size >= VERIFIED_TOKEN_CACHE) verifiedTokens.delete(verifiedTokens.keys().next().value as string)
      verifiedTokens.set(token, claims)
    }
    // A token bound to a key (`cnf`: DPoP, mTLS) is no bearer token: this server checks no proof
    // of possession, so it takes none (RFC 9449 section 7.2). The authorization server issues none.
    if (claims["cnf"] !== undefined) return fail("The access token is bound to a key; this server takes bearer tokens only.")
    const grantId = claims["gid"]
    const clientId = claims["client_id"]
    const accountId = claims["sub"]
    if (typeof grantId !== "string" || typeof clientId !== "string" || typeof accountId !== "string") {
      return fail("The access token is invalid.")
    }
    // one after the other: both are kept in process (or batched), so forking would cost more
    const exit = await runExit(
      runtime,
      Effect.zip(
        OAuthStore.use((store) => store.find("Grant", grantId)),
        resolveOAuthPrincipal(
          accountId,
          // as pages show it, and within the 100 characters of a name registered now (a token of an older client may carry more)
          { id: clientId, name: typeof claims["cname"] === "string" ? [...displayName(claims["cname"])].slice(0, 100).join("") : clientId },
          // full access only with the `mcp` scope; `mcp:read` (or anything else) reads only
          typeof claims["scope"] === "string" && claims["scope"].split(" ").includes(MCP_SCOPE) ? "write" : "read-only",
        ),
      ).pipe(Effect.map(([grant, principal]) => ({ grant, principal }))),
    )
    if (Exit.isFailure(exit)) {
      const error = Option.getOrUndefined(Cause.findErrorOption(exit.cause))
      if (error !== undefined && error._tag === "Unauthenticated") return fail(error.detail)
      throw error !== undefined && isCoreError(error) ? error : new Error(Cause.pretty(exit.cause))
    }
    const grant = Option.getOrUndefined(exit.value.grant)
    if (grant === undefined || grant["clientId"] !== clientId || grant["accountId"] !== accountId) {
      return fail("This connection was revoked: connect the app again.")
    }
    noteUsage(accountId, clientId, exit.value.principal.actor.name)
    // Full access while the grant still gives it: a person who since chose read-only for this app
    // (its grant's `mcp` refused) is obeyed at once, not when the token issued before expires.
    const principal = exit.value.principal.scope === "write" && !grantsWrite(grant) ? { ...exit.value.principal, scope: "read-only" as const } : exit.value.principal
    return { principal, clientId }
  }

  /**
   * Runs one tool call. `requestId` is the call's own: its activity entry and its problem carry
   * it, and the activity log keeps one entry per request id.
   */
  const callTool = async (
    requestId: string,
    auth: Authenticated,
    name: string,
    rawArgs: unknown,
    onVerdict: (verdict: LimitVerdict) => void,
    refusedUncounted: Array<RefusedUncounted>,
  ): Promise<CallToolResult> => {
    const tool = toolNamed(name)
    const caller: Caller = {
      accountId: auth.principal.accountId,
      actor: auth.principal.actor,
      scope: auth.principal.scope,
      channel: "mcp",
      requestId,
      action: name,
      startedAt: Date.now(),
    }
    if (tool === undefined) {
      // Logged as every refused tool call is (a flood of them becomes one entry with its count):
      // the name as sent when it is a tool name by MCP's own rule, else `tools/call`. The request
      // is counted against the limit after its answers (`answer` below), and logged then: over
      // the limit, the client gets the 429, not this answer, and the log says what it got.
      refusedUncounted.push({ caller: { ...caller, action: TOOL_NAME.test(name) ? name : "tools/call" }, code: "invalid_request" })
      // A JSON-RPC error whose message is said once: an McpError's own message starts with
      // "MCP error -32602:", which clients print before it again.
      // The name is echoed at most 100 UTF-16 units long (a request may carry megabytes of it), as
      // an unknown prompt's is, never cut inside a surrogate pair.
      throw Object.assign(new Error(`Unknown tool: ${shortened(name, 100)}`), { code: ErrorCode.InvalidParams })
    }
    const raw = (typeof rawArgs === "object" && rawArgs !== null ? rawArgs : {}) as Record<string, unknown>
    // What the call is about, read from the arguments as sent until they are decoded (a refused
    // call is logged with its site or article too: `fetch` names its article `id`); only strings,
    // and the entry keeps only well-formed ids of them.
    const sent = tool.target(raw)
    let target: { siteId?: string | null; articleId?: string | null } = {
      siteId: typeof sent.siteId === "string" ? sent.siteId : null,
      articleId: typeof sent.articleId === "string" ? sent.articleId : null,
    }
    // One run for the call and its activity entry: the limit, the arguments, the idempotency key,
    // the tool, the key's answer, then the log (every call runs this: a chain, not a generator).
    let held: { readonly hold: IdempotencyHold; readonly dryRun: boolean } | undefined
    type Attempt = { readonly value: Record<string, unknown> } | { readonly replay: CallToolResult }
    const attempt = Effect.flatMap(checkRequestLimit(caller.accountId), (verdict) => {
      onVerdict(verdict)
      // no arguments are no arguments; `null`, an array or a string are refused like any bad argument
      return Effect.flatMap(decodeInput(tool.input, rawArgs === undefined ? {} : rawArgs, `Arguments of ${name}`), (args) => {
        target = tool.target(args)
        const answerAs = (runner: Caller) =>
          Effect.map(tool.run(runner, args), (answered): Attempt => {
            const value = answered as Record<string, unknown>
            // an answer that shows the article shows its site: the entry need not look it up again
            if (target.articleId != null && target.siteId == null) target = { ...target, siteId: answeredSite(value) }
            return { value }
          })
        const key = tool.idempotent === true && typeof args.idempotency_key === "string" ? (args.idempotency_key as string) : undefined
        if (key === undefined) return answerAs(caller)
        // The answer's shape (`response`) is not part of the request: a replay answers in the shape asked for now.
        // `dry_run: false` is the call without it, as `?dry_run=false` is over REST: one request, one fingerprint.
        const { idempotency_key: _key, response: _shape, dry_run: dryRun, ...rest } = args as Record<string, unknown>
        return Effect.flatMap(requestFingerprint({ tool: name, args: dryRun === true ? { ...rest, dry_run: true } : rest }), (fingerprint) =>
          Effect.flatMap(claimIdempotencyKey(caller, key, fingerprint), (claim) => {
            if (claim.kind === "replay") {
              // A result is kept as its structured value (the article's body read from its revision
              // again) and rendered anew; an error result, and a key kept before, as sent.
              if (!claim.rebuilt) return Effect.succeed<Attempt>({ replay: asReplayed(JSON.parse(claim.answer.body) as CallToolResult, caller.requestId) })
              const value = JSON.parse(claim.answer.body) as Record<string, unknown>
              return Effect.succeed<Attempt>({ replay: asReplayed({ content: [{ type: "text", text: tool.render(value) }], structuredContent: value }, caller.requestId) })
            }
            if (claim.hold === undefined) return answerAs(caller)
            held = { hold: claim.hold, dryRun: args.dry_run === true }
            // the change the tool makes marks its key applied in the change's own transaction
            return answerAs({ ...caller, idempotency: claim.hold })
          }),
        )
      })
    })
    const run = await runExit(
      runtime,
      Effect.flatMap(Effect.exit(attempt), (exit) => {
        const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : undefined
        const problem = Exit.isSuccess(exit)
          ? undefined
          : error !== undefined && isCoreError(error)
            ? toProblem(error, requestId, publicUrl)
            : internalProblem(requestId, publicUrl)
        const result: CallToolResult = Exit.isSuccess(exit)
          ? "replay" in exit.value
            ? exit.value.replay
            : { content: tool.content?.(exit.value.value) ?? [{ type: "text", text: tool.render(exit.value.value) }], structuredContent: exit.value.value }
          : { isError: true, content: [{ type: "text", text: JSON.stringify(problem) }] }
        const keep =
          held === undefined
            ? Effect.void
            : Effect.map(
                Effect.exit(
                  (problem === undefined || isRecordableStatus(problem.status)
                    ? recordIdempotentAnswer(caller, held.hold, {
                        status: problem?.status ?? 200,
                        headers: {},
                        // every write tool answers the article it wrote: kept by reference to its revision
                        value: problem === undefined ? result.structuredContent : result,
                        dryRun: held.dryRun,
                      })
                    : releaseIdempotencyKey(caller, held.hold)) as Effect.Effect<void, unknown>,
                ),
                (kept) => {
                  if (Exit.isFailure(kept)) events.error({ request_id: requestId, cause: Cause.pretty(kept.cause) }, "could not keep the idempotency key's answer")
                },
              )
        const replayed = Exit.isSuccess(exit) && "replay" in exit.value ? exit.value.replay : undefined
        // a committed change wrote its entry in its own transaction
        const log: Effect.Effect<Exit.Exit<void, unknown>> =
          Exit.isSuccess(exit) && "value" in exit.value && tool.committed?.(exit.value.value) === true
            ? Effect.succeed(Exit.void)
            : Effect.exit(
                recordActivity(caller, {
                  ok: problem === undefined && replayed?.isError !== true,
                  errorCode: problem?.code ?? (replayed?.isError === true ? replayedCode(replayed) : null),
                  siteId: target.siteId ?? null,
                  articleId: target.articleId ?? null,
                }) as Effect.Effect<void, unknown>,
              )
        return Effect.flatMap(keep, () => Effect.map(log, (logged) => ({ exit, error, problem, logged, result })))
      }),
    )
    if (Exit.isFailure(run)) throw Cause.squash(run.cause)
    const outcome = run.value
    const { exit, error, problem } = outcome
    if (Exit.isFailure(exit) && problem?.code === "internal") events.error({ request_id: requestId, tool: name, cause: Cause.pretty(exit.cause) }, "MCP tool failed")
    if (Exit.isFailure(outcome.logged)) events.error({ request_id: requestId, cause: Cause.pretty(outcome.logged.cause) }, "could not record MCP activity")
    if (refusedForRequestLimit(error)) {
      onVerdict({ allowed: false, limit: error.limit, remaining: 0, resetSeconds: error.retryAfterSeconds })
    }
    // `response: "minimal"`: the same answer without the article's body (the full one is what
    // an idempotency key keeps, so its replays answer in the shape each call asks for).
    const structured = outcome.result.structuredContent
    if (raw["response"] === "minimal" && tool.minimal === true && structured !== undefined && typeof structured["article"] === "object") {
      return { ...outcome.result, structuredContent: minimalWriteAnswer(structured as { article: object }) }
    }
    return outcome.result
  }

  // One SDK Server for every request, over a transport that runs each HTTP request's messages
  // through it (`exchangeTransport.ts`); a handler finds its request's context by request id.
  interface Exchange {
    /** The HTTP request's id (`X-Request-Id`). */
    readonly requestId: string
    /** The body held more than one message: each tool call gets an id of its own (below). */
    readonly batch: boolean
    readonly auth: Authenticated
    readonly onVerdict: (verdict: LimitVerdict) => void
    /** The HTTP request's notes: each tool call adds its tool, outcome and time (access log, metrics). */
    readonly notes: RequestNotes
    /** Calls refused before they counted themselves, logged once the request's count says what the client gets. */
    readonly refusedUncounted: Array<RefusedUncounted>
  }
  const transport = exchangeTransport<Exchange>()
  // The activity log keeps one entry per request id (so that a replayed journal never writes
  // one twice): the calls of a batch are told apart by their position in it, `<id>.<n>`.
  const callRequestIdOf = (exchange: Exchange, sdkRequestId: string | number) =>
    exchange.batch ? `${exchange.requestId}.${transport.positionOf(sdkRequestId) ?? 0}` : exchange.requestId
  const server = new Server(
    {
      name: "content-site",
      title: "Content-Site",
      version: "1.0.0",
      // what clients show beside the connector: what it is for, and where a person manages it
      description: "Your Content-Site websites: articles, backlinks and monthly summaries to read and search, and articles to edit without breaking their protected links.",
      websiteUrl: `${publicUrl}/connect`,
    },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false }, prompts: { listChanged: false }, completions: {} },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator,
    },
  )
  // The descriptions state the limits in force (`RATE_LIMIT_PER_MINUTE` and the rest), read once.
  const toolDefinitions = toolDefinitionsFor(runtime.runSync(Settings.use((settings) => Effect.succeed(settings.limits))))
  /**
   * The refusal of a cursor sent to a list this server answers whole (tools, prompts, resource
   * templates): it gave none, so any is invalid, and the specification's pagination says so with
   * invalid params, as `resources/list` refuses a cursor it did not give.
   */
  const unknownCursor = (extra: RequestHandlerExtra<ServerRequest, ServerNotification>) => {
    const exchange = transport.contextOf(extra.requestId)
    const requestId = exchange === undefined ? "" : callRequestIdOf(exchange, extra.requestId)
    const error = new InvalidRequest({ detail: "The cursor is not one this server gave: this list comes whole, ask for it without a cursor.", errors: [{ path: "cursor", message: "Unknown cursor" }] })
    return refusal(toProblem(error, requestId, publicUrl))
  }
  server.setRequestHandler(ListToolsRequestSchema, (request, extra) => {
    if (request.params?.cursor !== undefined) throw unknownCursor(extra)
    return { tools: toolDefinitions }
  })
  // Registered as the protocol layer registers any handler (the request parsed with the SDK's
  // CallToolRequestSchema, bar `arguments`, a protocol error if it does not parse). `Server.setRequestHandler`
  // would wrap it to parse the request a second time and to parse every result with
  // CallToolResultSchema: a tools/call with `task` is refused anyway (no tasks capability), and
  // every result here is made by `callTool` in the two shapes the SDK's client checks in the tests.
  Protocol.prototype.setRequestHandler.call(server, ToolCallRequestSchema, (request: ToolCallRequest, extra: RequestHandlerExtra<ServerRequest, ServerNotification>) => {
    const exchange = transport.contextOf(extra.requestId)
    if (exchange === undefined) throw new McpError(ErrorCode.InternalError, "The request's context is gone.")
    const requestId = callRequestIdOf(exchange, extra.requestId)
    const name = request.params.name
    const call = () => callTool(requestId, exchange.auth, name, request.params.arguments, exchange.onVerdict, exchange.refusedUncounted)
    // Only a known tool's name is noted or names a span: an unknown one is the caller's text.
    if (toolNamed(name) === undefined) return call()
    const started = performance.now()
    // A tool's failure is a result with isError (the HTTP answer is a 200): its span says so.
    const failed = (result: CallToolResult) => (result.isError === true ? (replayedCode(result) ?? "internal") : undefined)
    return (deps.span !== undefined ? deps.span(`tool ${name}`, call, failed) : call()).then((result) => {
      const { notes } = exchange
      notes.tools ??= []
      notes.tools.push({ name, outcome: result.isError === true ? "error" : "ok", seconds: (performance.now() - started) / 1000 })
      const code = failed(result)
      if (code !== undefined) notes.problemCode = code
      return result
    })
  })
  // resources, completion and prompts: each a call of its own, counted and logged (`calls.ts`)
  const callContextOf = (extra: RequestHandlerExtra<ServerRequest, ServerNotification>) => {
    const exchange = transport.contextOf(extra.requestId)
    if (exchange === undefined) throw new McpError(ErrorCode.InternalError, "The request's context is gone.")
    const requestId = callRequestIdOf(exchange, extra.requestId)
    return { requestId, principal: exchange.auth.principal, onVerdict: exchange.onVerdict }
  }
  registerArticleResources(server, protocolCalls(runtime, publicUrl, events), callContextOf, unknownCursor)
  registerPrompts(server, protocolCalls(runtime, publicUrl, events), callContextOf, unknownCursor)
  const connected = server.connect(transport).then(() => {
    transport.handRequestsTo(server)
    const wrapped = refuseMalformedParams(server, async (method, detail, errors, sdkRequestId) => {
      const exchange = transport.contextOf(sdkRequestId)
      const requestId = exchange === undefined ? "" : callRequestIdOf(exchange, sdkRequestId)
      // a call (a tool's, a resource's, a prompt's, a completion) is logged, refused ones
      // included, even one whose params name nothing: its method is its action
      if ((method === "tools/call" || COUNTED_PROTOCOL_METHODS.has(method)) && exchange !== undefined) {
        exchange.refusedUncounted.push({ caller: { ...exchange.auth.principal, channel: "mcp", requestId, action: method, startedAt: Date.now() }, code: "invalid_request" })
      }
      return toProblem(new InvalidRequest({ detail, errors }), requestId, publicUrl)
    })
    // (an SDK that keeps its handlers elsewhere: said once, at start, rather than found in answers)
    if (!wrapped) events.warn({}, "MCP: the SDK's request handlers were not found; a message whose params its schemas refuse is answered as the SDK answers it (-32603), not as invalid params (-32602)")
  })

  /**
   * Counts a request once against the account's requests a minute. Over the limit it answers the
   * request as a whole (429, the problem, `Retry-After`) and logs it, its methods as the action.
   */
  const countRequest = async (
    ctx: Context,
    auth: Authenticated,
    messages: ReadonlyArray<JSONRPCMessage>,
  ): Promise<{ readonly verdict: LimitVerdict; readonly refused: boolean }> => {
    const counted = await runtime.runPromiseExit(checkRequestLimit(auth.principal.accountId))
    if (Exit.isSuccess(counted)) return { verdict: counted.value, refused: false }
    const error = Option.getOrUndefined(Cause.findErrorOption(counted.cause))
    if (error === undefined || error._tag !== "RateLimited") throw error !== undefined && isCoreError(error) ? error : new Error(Cause.pretty(counted.cause))
    const requestId = requestIdOf(ctx)
    refuseOverLimit(ctx, error)
    const methods = [...new Set(messages.map((m) => (m as { method?: unknown }).method).filter((m) => typeof m === "string"))].join(", ")
    await logRefusedCall({ ...auth.principal, channel: "mcp", requestId, action: methods === "" ? "POST /mcp" : methods, startedAt: Date.now() }, "rate_limited")
    return { verdict: { allowed: false, limit: error.limit, remaining: 0, resetSeconds: error.retryAfterSeconds }, refused: true }
  }

  /**
   * Answers an authenticated request to `/mcp`: the Streamable HTTP checks, then its messages
   * through the server. Resolves with the verdict of the last count its tool calls made, if any.
   */
  const answer = async (ctx: Context, auth: Authenticated): Promise<LimitVerdict | undefined> => {
    if (ctx.method !== "POST") {
      ctx.set("Allow", "POST")
      return jsonRpcError(ctx, 405, "Method not allowed: this server is stateless; send JSON-RPC messages with POST.")
    }

    // What the SDK's Streamable HTTP transport checks of a stateless POST in JSON-response mode,
    // in its order and with its answers.
    const accept = ctx.get("Accept")
    if (!accept.includes("application/json") || !accept.includes("text/event-stream")) {
      return jsonRpcError(ctx, 406, "Not Acceptable: Client must accept both application/json and text/event-stream")
    }
    const contentType = ctx.get("Content-Type")
    if (contentType !== "application/json" && mediaTypeEssence(contentType) !== "application/json") {
      return jsonRpcError(ctx, 415, "Unsupported Media Type: Content-Type must be application/json")
    }
    // A large body of an account over its requests a minute already is refused before it is read
    // (a look, not a count, as for a preview): read first, any number of them would be read and
    // parsed, each refused only then.
    const declared = ctx.request.length
    if (declared === undefined || declared > LARGE_BODY_BYTES) {
      const window = await currentLimit(auth)
      if (window !== undefined && window.remaining <= 0) {
        refuseOverLimit(ctx, new RateLimited({ limit: window.limit, retryAfterSeconds: Math.max(1, window.resetSeconds) }))
        await logRefusedCall({ ...auth.principal, channel: "mcp", requestId: requestIdOf(ctx), action: "POST /mcp", startedAt: Date.now() }, "rate_limited")
        return { ...window, allowed: false, remaining: 0 }
      }
    }
    const raw = await readBody(ctx, MAX_MCP_BODY_BYTES)
    if (raw === undefined) return jsonRpcError(ctx, 413, `Payload too large: at most ${MAX_MCP_BODY_BYTES} bytes.`)
    // A large message is decoded and parsed in a turn of the event loop of its own, in the
    // account's rotation (ownTurn.ts); past the account's queue 429, past every account's 503.
    // Its nesting and its count of values are scanned first, as REST's bodies are: parsing millions
    // of brackets (or of `{},`) held the event loop for seconds.
    const parsed = await Promise.resolve(
      parseInTurn(ctx, raw.length, () => {
        const text = raw.toString("utf8")
        const passed = jsonBoundPassed(text, MAX_JSON_DEPTH, MAX_JSON_TOKENS)
        if (passed === "depth") return { refusal: `the message is nested deeper than ${MAX_JSON_DEPTH} levels` }
        if (passed === "tokens") return { refusal: `the message holds more than ${MAX_JSON_TOKENS} values and keys` }
        try {
          return { ok: JSON.parse(text) as unknown }
        } catch {
          return undefined
        }
      }),
    ).catch((error: unknown) => {
      if (isCoreError(error) && (error._tag === "RateLimited" || error._tag === "Unavailable")) return { refused: error }
      throw error
    })
    if (parsed !== undefined && "refused" in parsed) {
      const error = parsed.refused
      if (error._tag === "RateLimited") refuseOverLimit(ctx, error)
      else refuseUnavailable(ctx, error)
      const requestId = requestIdOf(ctx)
      await logRefusedCall({ ...auth.principal, channel: "mcp", requestId, action: "POST /mcp", startedAt: Date.now() }, error._tag === "RateLimited" ? "rate_limited" : "unavailable")
      return undefined
    }
    if (parsed === undefined) return jsonRpcError(ctx, 400, "Parse error: invalid JSON", -32700)
    if ("refusal" in parsed) return jsonRpcError(ctx, 400, `Invalid Request: ${parsed.refusal}`, -32600)
    // (a batch holds one or more messages: an empty one is JSON-RPC's Invalid Request, not 202)
    if (Array.isArray(parsed.ok) && parsed.ok.length === 0) return jsonRpcError(ctx, 400, "Invalid Request: a batch must hold at least one message", -32600)
    if (Array.isArray(parsed.ok) && parsed.ok.length > MAX_BATCH_SIZE) {
      return jsonRpcError(ctx, 400, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`, -32600)
    }
    let messages: Array<JSONRPCMessage>
    try {
      messages = (Array.isArray(parsed.ok) ? parsed.ok : [parsed.ok]).map((m: unknown) => JSONRPCMessageSchema.parse(m))
    } catch {
      // (JSON that parsed: JSON-RPC's Invalid Request, where the SDK's transport says -32700, the code of JSON that does not parse)
      return jsonRpcError(ctx, 400, "Invalid Request: not a JSON-RPC message", -32600)
    }
    // (by its method: the server itself refuses an initialize whose params are wrong)
    if (messages.some((m) => (m as { method?: unknown }).method === "initialize")) {
      if (messages.length > 1) return jsonRpcError(ctx, 400, "Invalid Request: Only one initialization request is allowed", -32600)
    } else {
      const version = ctx.get("Mcp-Protocol-Version")
      if (version !== "" && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
        return jsonRpcError(
          ctx,
          400,
          `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`,
        )
      }
    }

    // A write tool called under a read-only grant gets the specification's scope challenge, an
    // HTTP 403 naming the scope to ask for, so that a client can ask the person for more and retry.
    if (auth.principal.scope !== "write") {
      const writes = messages
        .filter((m) => (m as { method?: unknown }).method === "tools/call")
        .map((m) => (m as { params?: { name?: unknown } }).params?.name)
        .filter((name): name is string => typeof name === "string" && toolNamed(name)?.annotations.readOnlyHint === false)
      if (writes.length > 0) {
        // counted first, as REST counts a read-only key's write: over the limit it is the 429
        const once = await countRequest(ctx, auth, messages)
        if (once.refused) return once.verdict
        const error = new InsufficientScope({
          detail: "This agent was allowed read-only access (scope mcp:read); writing needs the scope mcp. Ask the person to connect it again and allow “Read and edit”.",
        })
        const requestId = requestIdOf(ctx)
        notesOf(ctx).problemCode = "insufficient_scope"
        ctx.status = 403
        ctx.set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="${MCP_SCOPE}", resource_metadata="${resourceMetadata}", error_description="Writing needs the scope ${MCP_SCOPE}"`)
        ctx.set("Cache-Control", "no-store")
        ctx.type = "application/problem+json"
        ctx.body = JSON.stringify(toProblem(error, requestId, publicUrl))
        // Every call the request carries is refused with it, and each is an entry of its own (a
        // batch's with its position, `<X-Request-Id>.<n>`, as when its calls run).
        const startedAt = Date.now()
        await Promise.all(
          messages.flatMap((m, index) => {
            const method = (m as { method?: unknown }).method
            if (method !== "tools/call" && !COUNTED_PROTOCOL_METHODS.has(method as string)) return []
            const name = (m as { params?: { name?: unknown } }).params?.name
            // (the name as sent when it is a tool name by MCP's own rule, as for any refused call: never megabytes of it)
            const action = method === "tools/call" ? (typeof name === "string" && TOOL_NAME.test(name) ? name : "tools/call") : String(method)
            const callId = messages.length > 1 ? `${requestId}.${index + 1}` : requestId
            return [logRefusedCall({ ...auth.principal, channel: "mcp", requestId: callId, action, startedAt }, "insufficient_scope")]
          }),
        )
        return once.verdict
      }
    }

    // Every request counts against the account's requests a minute (the specification: "all
    // requests"). One that carries tool calls counts each call as it runs (a call over the limit
    // is a tool error, as every tool refusal is); any other (initialize, tools/list, ping,
    // notifications) counts once here and, over the limit, is refused as a whole with 429.
    let verdict: LimitVerdict | undefined
    const carriesCalls = messages.some((m) => {
      const method = (m as { method?: unknown }).method
      return method === "tools/call" || COUNTED_PROTOCOL_METHODS.has(method as string)
    })
    if (!carriesCalls) {
      const once = await countRequest(ctx, auth, messages)
      if (once.refused) return once.verdict
      verdict = once.verdict
    }
    await connected
    let callsCounted = false
    const refusedUncounted: Array<RefusedUncounted> = []
    const answers = await transport.exchange(messages, {
      requestId: requestIdOf(ctx),
      batch: messages.length > 1,
      auth,
      onVerdict: (v) => {
        verdict = v
        callsCounted = true
      },
      notes: notesOf(ctx),
      refusedUncounted,
    })
    // A call refused before it counted itself (an unknown tool, params the SDK's schema refuses)
    // ran nothing: a request of such calls alone counts once, as any other request, after its
    // answers (they changed nothing, so over the limit they are dropped for the 429).
    if (carriesCalls && !callsCounted) {
      const once = await countRequest(ctx, auth, messages)
      // (refused, its one entry is the 429 the client got: the calls' own answers were never sent)
      if (once.refused) return once.verdict
      verdict = once.verdict
    }
    await Promise.all(refusedUncounted.map(({ caller, code }) => logRefusedCall(caller, code)))
    ctx.set("Cache-Control", "no-store")
    if (answers.length === 0) {
      // only notifications (or responses): 202 Accepted without a body, as the transport spec
      // says (the status after the body: Koa turns an empty body into 204)
      ctx.body = null
      ctx.status = 202
      return verdict
    }
    ctx.status = 200
    ctx.type = "application/json"
    // A client of a revision before resource links (2025-06-18) gets none: its results stay of the kinds it knows.
    const version = ctx.get("Mcp-Protocol-Version") || DEFAULT_NEGOTIATED_PROTOCOL_VERSION
    const sent = version < RESOURCE_LINKS_SINCE ? answers.map(withoutResourceLinks) : answers
    // as the SDK's transport answers: one answer as itself, several as an array
    ctx.body = JSON.stringify(sent.length === 1 ? sent[0] : sent)
    return verdict
  }

  /** The account's per-minute limit as it stands, or undefined when the limit store cannot tell. */
  const currentLimit = async (auth: Authenticated): Promise<LimitVerdict | undefined> => {
    const exit = await runtime.runPromiseExit(peekRequestLimit(auth.principal.accountId))
    return Exit.isSuccess(exit) ? exit.value : undefined
  }

  return async (ctx, next) => {
    if (ctx.path !== "/mcp" && ctx.path !== "/mcp/") return next()
    // DNS-rebinding protection: the Host must be ours and a browser Origin, when sent, too.
    // ctx.host honours X-Forwarded-Host only when the app trusts its proxy (TRUST_PROXY=true).
    const host = ctx.host
    const origin = ctx.get("Origin")
    // (a host name is the same in any case: "MCP.Example" is "mcp.example")
    if (!allowedHosts.has(host.toLowerCase())) return jsonRpcError(ctx, 403, `Forbidden: Host '${host}' is not this server's.`)
    if (origin !== "" && !allowedOrigins.has(origin)) return jsonRpcError(ctx, 403, `Forbidden: Origin '${origin}' is not allowed.`)

    const auth = await authenticate(ctx)
    if (auth === undefined) return
    noteAccount(ctx, auth.principal.accountId)
    // after the Host/Origin check and the token, as the contract puts them first: a request that
    // fails either is their 403 or 401 (and its failure counted), whatever its query string
    strictQuery(ctx.querystring, [])
    // Every request the endpoint answers has counted (in `answer`) and has its verdict; the
    // endpoint's own refusals (405, 406, 415, 413, 400) do not count and show the limit as it
    // stands, read without counting.
    const verdict = (await answer(ctx, auth)) ?? (await currentLimit(auth))
    if (verdict !== undefined) rateLimitHeaders(ctx, verdict)
  }
}
