import {
  type CoreError,
  InvalidRequest,
  internalProblem,
  isCoreError,
  NotFound,
  PayloadTooLarge,
  type Problem,
  toProblem,
  UnsupportedMediaType,
} from "@content-site/core"
import type { Middleware, ParameterizedContext } from "koa"
import { Defect } from "./run.ts"
import { requestIdOf } from "./requestId.ts"
import { notesOf } from "./notes.ts"

/** Writes an RFC 9457 problem response. */
export const sendProblem = (ctx: ParameterizedContext, problem: Problem): void => {
  notesOf(ctx).problemCode = problem.code
  ctx.status = problem.status
  ctx.set("Cache-Control", "no-store")
  ctx.type = "application/problem+json"
  ctx.body = JSON.stringify(problem)
}

/** Headers a core error carries besides its body (`Retry-After`, `WWW-Authenticate`). */
export const problemHeaders = (error: CoreError): Record<string, string> => {
  switch (error._tag) {
    case "RateLimited":
    case "DailyEditLimit":
      return { "Retry-After": String(error.retryAfterSeconds) }
    case "Unauthenticated":
      return { "WWW-Authenticate": 'Bearer realm="content-site"' }
    case "Unavailable":
      return { "Retry-After": "5" }
    case "EditConflict":
      return error.retryAfterSeconds === undefined ? {} : { "Retry-After": String(error.retryAfterSeconds) }
    default:
      return {}
  }
}

interface HttpLikeError {
  readonly status?: unknown
  readonly statusCode?: unknown
  readonly expose?: unknown
  readonly message?: unknown
  readonly code?: unknown
  readonly type?: unknown
  readonly field?: unknown
}

/**
 * Maps errors thrown by Koa, body parsers and multer (http-errors, MulterError) to the contract's
 * codes. Unknown errors return undefined (a defect).
 */
export const coreErrorOfHttpError = (err: unknown): CoreError | undefined => {
  if (typeof err !== "object" || err === null) return undefined
  const e = err as HttpLikeError
  if (e.code === "LIMIT_FILE_SIZE") return new PayloadTooLarge({ detail: "The image is larger than 10 MiB." })
  // Multer's codes: its limits (`LIMIT_*`) and a part without a field name (`MISSING_FIELD_NAME`).
  if (typeof e.code === "string" && (e.code.startsWith("LIMIT_") || e.code === "MISSING_FIELD_NAME")) {
    const field = typeof e.field === "string" ? e.field : "(form)"
    return new InvalidRequest({
      detail: `The multipart form is not acceptable (${String(e.message)}): send one file in field 'image' and optionally a field 'alt'.`,
      errors: [{ path: field, message: String(e.message) }],
    })
  }
  const status = typeof e.status === "number" ? e.status : typeof e.statusCode === "number" ? e.statusCode : undefined
  if (status === undefined || status < 400 || status >= 500) return undefined
  const message = typeof e.message === "string" && e.expose !== false ? e.message : "The request is not acceptable."
  if (status === 413) return new PayloadTooLarge({ detail: "The request body is too large." })
  if (status === 415) return new UnsupportedMediaType({ detail: message })
  if (status === 404) return new NotFound({ resource: "resource", id: "(path)" })
  return new InvalidRequest({ detail: message, errors: [{ path: "(request)", message }] })
}

/**
 * Whether the request failed because the client closed the connection while it was being read:
 * the body parser's abort, or any failure (a multipart upload's parse) of a request whose body
 * never arrived whole on a connection that is gone.
 */
const clientWentAway = (ctx: { readonly req: { readonly destroyed: boolean; readonly complete: boolean } }, err: unknown): boolean => {
  if (!ctx.req.destroyed) return false
  const code = (err as { code?: unknown } | null)?.code
  return !ctx.req.complete || code === "ECONNRESET" || code === "ECONNABORTED" || (err instanceof Error && err.message === "aborted")
}

/** The status noted (access line, metrics) for a request whose client left before its answer: nginx's "client closed request". */
export const CLIENT_CLOSED_REQUEST = 499

/**
 * Responses of requests the server itself answered on their socket while the app was reading
 * them (a body not received within REQUEST_TIMEOUT_MS: 408; a body Node's parser refused, such
 * as a malformed chunk: 400), with that status and code: their access line says what the client
 * was answered, not 499.
 */
const answeredOnSocket = new WeakMap<object, { readonly status: number; readonly code: string }>()

/** Notes that the request whose response this is was answered `status` and `code` on its socket (see `answeredOnSocket`). */
export const noteAnsweredOnSocket = (res: object, status: number, code: string): void => void answeredOnSocket.set(res, { status, code })

/**
 * Whether `err` failed a request whose client left while the app read its body (`clientWentAway`);
 * if so, notes its status: the answer the server wrote on its socket (408 past
 * REQUEST_TIMEOUT_MS, 400 for a malformed chunk), with its code, or else 499. The funnel's check,
 * and a route's that handles the departure itself (the article page's image upload).
 */
export const noteIfClientGone = (ctx: ParameterizedContext, err: unknown): boolean => {
  if (!clientWentAway(ctx, err)) return false
  const answered = answeredOnSocket.get(ctx.res)
  if (answered !== undefined) {
    ctx.status = answered.status
    notesOf(ctx).problemCode = answered.code
  } else ctx.status = CLIENT_CLOSED_REQUEST
  return true
}

/** Options of the error funnel. */
export interface ErrorFunnelOptions {
  readonly publicUrl: string
  /** Where defects are reported (with their cause); never sent to the client. */
  readonly logDefect?: (requestId: string, detail: string) => void
}

/**
 * The one error funnel: domain errors become problem+json with their contract code, errors from
 * body parsing are mapped to the right code, anything else is a 500 `internal` without a stack.
 */
export const errorFunnel = (options: ErrorFunnelOptions): Middleware => async (ctx, next) => {
  try {
    await next()
  } catch (err) {
    const requestId = requestIdOf(ctx)
    // Nobody is left to answer; not a defect of ours, nor a refusal, so nothing is reported.
    // (unless the server answered it on its socket: past its time, or a body it could not parse)
    if (noteIfClientGone(ctx, err)) return
    const core = isCoreError(err) ? err : coreErrorOfHttpError(err)
    if (ctx.headerSent) {
      options.logDefect?.(requestId, err instanceof Error ? (err.stack ?? err.message) : String(err))
      return
    }
    if (core !== undefined) {
      for (const [name, value] of Object.entries(problemHeaders(core))) ctx.set(name, value)
      sendProblem(ctx, toProblem(core, requestId, options.publicUrl))
      return
    }
    options.logDefect?.(requestId, err instanceof Defect ? err.pretty : err instanceof Error ? (err.stack ?? err.message) : String(err))
    sendProblem(ctx, internalProblem(requestId, options.publicUrl))
  }
}
