import type { Middleware, ParameterizedContext } from "koa"
import { randomUUID } from "node:crypto"

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/

/** Options of the request-id middleware. */
export interface RequestIdOptions {
  /**
   * Honour a sane incoming `X-Request-Id` (set by a trusted front proxy). Off by default: the
   * activity log is idempotent by request id, so a client-chosen id could hide entries.
   */
  readonly trustIncoming?: boolean
}

/** The request id of a request, as set by `requestId()`. */
export const requestIdOf = (ctx: ParameterizedContext): string => {
  const id = (ctx.state as { requestId?: unknown }).requestId
  return typeof id === "string" ? id : "unknown"
}

/** Sets `ctx.state.requestId` and the `X-Request-Id` response header on every response. */
export const requestId = (options: RequestIdOptions = {}): Middleware => async (ctx, next) => {
  const incoming = options.trustIncoming === true ? ctx.get("X-Request-Id") : ""
  const id = SANE_REQUEST_ID.test(incoming) ? incoming : `req_${randomUUID().replaceAll("-", "")}`
  ctx.state.requestId = id
  ctx.set("X-Request-Id", id)
  await next()
  // Some downstream code (error handlers, redirects) may reset headers: make sure it survives.
  if (!ctx.headerSent && ctx.response.get("X-Request-Id") !== id) ctx.set("X-Request-Id", id)
}
