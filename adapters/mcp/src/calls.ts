/**
 * One protocol call that is not a tool call (resources, completion, prompts) run like a tool call:
 * counted against the account's requests a minute, run as the connection's account, logged in the
 * activity log with channel `mcp`, and refused with a JSON-RPC error that carries the problem.
 */
import {
  type Caller,
  checkRequestLimit,
  type CoreServices,
  internalProblem,
  isCoreError,
  type LimitVerdict,
  type Principal,
  type Problem,
  type RateLimited,
  recordActivity,
  toProblem,
} from "@content-site/core"
import type { AppRuntime, EventLog } from "@content-site/http"
import { eventLogOf, runExit } from "@content-site/http"
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js"
import { Cause, Effect, Exit, Option } from "effect"

/** The methods that are such calls: each counts and is logged itself, not as part of its request. */
export const COUNTED_PROTOCOL_METHODS: ReadonlySet<string> = new Set(["resources/list", "resources/read", "completion/complete", "prompts/get"])

/**
 * Whether `error` is the refusal of the account's requests a minute, the limit an answer's
 * `RateLimit-*` headers state. A cap of work at once (searches, bodies sanitised, images decoded:
 * a `RateLimited` that says what it `counted`) is not that limit: its refusal leaves the verdict
 * the call was counted with, or the headers would say the minute's budget is spent, and at 4.
 */
export const refusedForRequestLimit = (error: unknown): error is RateLimited =>
  isCoreError(error) && error._tag === "RateLimited" && error.counted === undefined

/** What a call needs of its HTTP request: the call's own request id, the connection, where its limit verdict goes. */
export interface CallContext {
  readonly requestId: string
  readonly principal: Principal
  readonly onVerdict: (verdict: LimitVerdict) => void
}

/**
 * The JSON-RPC error of a refused call: the problem as `data`, its code and sentence as the
 * message. Not an McpError: its message starts with "MCP error <code>:", which the SDK's client
 * (and others) put before the message once more, so a person would read it twice and the message
 * would not start with the problem's code.
 */
export const refusal = (problem: Problem, notFoundCode: number = ErrorCode.InvalidParams): Error & { readonly code: number; readonly data: Problem } => {
  const code =
    problem.code === "invalid_request"
      ? ErrorCode.InvalidParams
      : problem.code === "not_found"
        ? notFoundCode
        : problem.code === "internal"
          ? ErrorCode.InternalError
          : -32000
  return Object.assign(new Error(`${problem.code}: ${problem.detail}`), { code, data: problem })
}

/** Runs calls for one endpoint; their failures go to `log` (the service's event log), as a tool call's do. */
export const protocolCalls = (runtime: AppRuntime, publicUrl: string, log: EventLog = eventLogOf({})) =>
  /**
   * Runs `run` as the call `action` (its activity entry's action) about `target`; a refusal is
   * thrown as a JSON-RPC error (`notFoundCode` for not_found: -32002 for a resource, by the
   * specification, InvalidParams elsewhere).
   */
  async <A>(
    context: CallContext,
    action: string,
    target: { readonly siteId?: string | null; readonly articleId?: string | null },
    run: (caller: Caller) => Effect.Effect<A, unknown, CoreServices>,
    notFoundCode: number = ErrorCode.InvalidParams,
  ): Promise<A> => {
    const caller: Caller = { ...context.principal, channel: "mcp", requestId: context.requestId, action, startedAt: Date.now() }
    const outcome = await runExit(
      runtime,
      Effect.flatMap(
        Effect.exit(Effect.flatMap(checkRequestLimit(caller.accountId), (verdict) => (context.onVerdict(verdict), run(caller)))),
        (exit) => {
          const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : undefined
          const problem = Exit.isSuccess(exit)
            ? undefined
            : error !== undefined && isCoreError(error)
              ? toProblem(error, caller.requestId, publicUrl)
              : internalProblem(caller.requestId, publicUrl)
          if (refusedForRequestLimit(error)) {
            context.onVerdict({ allowed: false, limit: error.limit, remaining: 0, resetSeconds: error.retryAfterSeconds })
          }
          return Effect.map(
            Effect.exit(
              recordActivity(caller, {
                ok: problem === undefined,
                errorCode: problem?.code ?? null,
                siteId: target.siteId ?? null,
                articleId: target.articleId ?? null,
              }) as Effect.Effect<void, unknown>,
            ),
            (logged) => ({ exit, problem, logged }),
          )
        },
      ),
    )
    if (Exit.isFailure(outcome)) throw Cause.squash(outcome.cause)
    const { exit, problem, logged } = outcome.value
    if (Exit.isFailure(logged)) log.error({ request_id: caller.requestId, cause: Cause.pretty(logged.cause) }, "could not record MCP activity")
    if (Exit.isSuccess(exit)) return exit.value
    if (problem?.code === "internal") log.error({ request_id: caller.requestId, cause: Cause.pretty(exit.cause) }, `MCP ${action} failed`)
    throw refusal(problem!, notFoundCode)
  }

/** A runner of protocol calls (see `protocolCalls`). */
export type ProtocolCall = ReturnType<typeof protocolCalls>
