import {
  type AccountRecord,
  type Caller,
  type CoreError,
  type CoreServices,
  isCoreError,
  namedAction,
  problemKindOf,
  recordActivity,
  userPrincipal,
} from "@content-site/core"
import { type HttpDeps, requestIdOf } from "@content-site/http"
import { Effect, Result } from "effect"
import type { ParameterizedContext } from "koa"

/** What a web request that acts for a signed-in person records in the activity log. */
interface WebCallState {
  caller: Caller
  siteId: string | null
  articleId: string | null
  errorCode: string | null
  /** The outcome's status when the response itself is a redirect (post/redirect/get). */
  status: number | null
  /** A change committed: its entry was written in the change's own transaction. */
  committed: boolean
}

/** The Caller for a signed-in person on the web pages: channel `web`, changes tagged `editor`. */
export const webCaller = (ctx: ParameterizedContext, account: AccountRecord, action: string): Caller => {
  const principal = userPrincipal(account)
  const caller: Caller = {
    accountId: principal.accountId,
    actor: principal.actor,
    scope: principal.scope,
    channel: "web",
    requestId: requestIdOf(ctx),
    action,
    startedAt: Date.now(),
  }
  ;(ctx.state as { webCall?: WebCallState }).webCall = { caller, siteId: null, articleId: null, errorCode: null, status: null, committed: false }
  return caller
}

/** Notes which site/article this request concerned, for its activity entry. */
export const noteSubject = (ctx: ParameterizedContext, subject: { readonly siteId?: string; readonly articleId?: string; readonly name?: string }): void => {
  const call = (ctx.state as { webCall?: WebCallState }).webCall
  if (call === undefined) return
  if (subject.siteId !== undefined) call.siteId = subject.siteId
  if (subject.articleId !== undefined) call.articleId = subject.articleId
  // What the entry is about, when it is no article: the key's or agent's name, after the action.
  if (subject.name !== undefined) call.caller = { ...call.caller, action: namedAction(call.caller.action, subject.name) }
}

/** Notes the problem a request ended with, for its activity entry (even if the page then redirects). */
export const noteError = (ctx: ParameterizedContext, error: CoreError): void => {
  const kind = problemKindOf(error)
  noteOutcome(ctx, kind.status, kind.code)
}

/** Notes a failed outcome's status and code, for its activity entry. */
export const noteOutcome = (ctx: ParameterizedContext, status: number, code: string): void => {
  const call = (ctx.state as { webCall?: WebCallState }).webCall
  if (call === undefined) return
  call.status = status
  call.errorCode = code
}

/** Notes that the request's change committed, and with it its activity entry. */
export const noteCommitted = (ctx: ParameterizedContext): void => {
  const call = (ctx.state as { webCall?: WebCallState }).webCall
  if (call !== undefined) call.committed = true
}

/**
 * The call of this request as its activity entry names it (after `noteSubject`), for a change
 * that writes its entry in its own transaction; undefined when the request logs nothing.
 */
export const webCallOf = (ctx: ParameterizedContext): Caller | undefined => (ctx.state as { webCall?: WebCallState }).webCall?.caller

/** Runs a core use case; its domain errors come back as a failed Result, defects reject. */
export const runCore = <A, E>(deps: HttpDeps, effect: Effect.Effect<A, E, CoreServices>): Promise<Result.Result<A, E>> =>
  deps.runtime.runPromise(Effect.result(effect))

/** Runs a core use case and throws its domain error (to the page error handler) when it fails. */
export const runCoreOrThrow = async <A, E extends CoreError>(deps: HttpDeps, effect: Effect.Effect<A, E, CoreServices>): Promise<A> => {
  const result = await runCore(deps, effect)
  if (Result.isSuccess(result)) return result.success
  throw result.failure
}

/**
 * Records one activity entry per web request that acted for a person, after the response is
 * settled: the same log as REST and MCP, channel `web`. A committed change already wrote its entry
 * in its own transaction, so nothing more is written for it (the log is idempotent by request id
 * in any case).
 */
export const recordWebActivity = async (ctx: ParameterizedContext, deps: HttpDeps, thrown: unknown): Promise<void> => {
  const call = (ctx.state as { webCall?: WebCallState }).webCall
  if (call === undefined || call.committed) return
  const status = call.status ?? (thrown === undefined ? ctx.status : isCoreError(thrown) ? problemKindOf(thrown).status : 500)
  // A refusal whose code nobody noted still gets one, so that it never reads as "Done".
  const errorCode = call.errorCode ?? (isCoreError(thrown) ? problemKindOf(thrown).code : thrown === undefined && status < 500 ? "invalid_request" : "internal")
  await deps.runtime
    .runPromise(
      recordActivity(call.caller, {
        ok: status < 400,
        httpStatus: status,
        errorCode: status < 400 ? null : errorCode,
        siteId: call.siteId,
        articleId: call.articleId,
      }),
    )
    .catch(() => undefined)
}
