import { internalProblem, isCoreError, MediaStore, namedParametersRefusal, NotFound, type Problem, type StoredMedia, toProblem, type Unavailable } from "@content-site/core"
import { Cause, Effect, Exit, type ManagedRuntime, Option } from "effect"
import type { Middleware, ParameterizedContext } from "koa"
import { randomUUID } from "node:crypto"

/** Options of the media middleware. */
export interface MediaMiddlewareOptions {
  /** `{base_url}` for the problem `type` URIs (PUBLIC_URL: never the request's Host). */
  readonly publicUrl: string
  /** Told the code of every problem answered (the composition notes it for the access line and metrics). */
  readonly onProblem?: (ctx: ParameterizedContext, code: string) => void
}

const PREFIX = "/media/"

/** Headers of every stored image: immutable under its key, never sniffed, never a document. */
const mediaHeaders = {
  "X-Content-Type-Options": "nosniff",
  "Cache-Control": "public, max-age=31536000, immutable",
  "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
} as const

const requestIdOf = (ctx: ParameterizedContext): string => {
  const id = (ctx.state as { requestId?: unknown }).requestId
  return typeof id === "string" && id !== "" ? id : `req_${randomUUID().replaceAll("-", "")}`
}

const sendProblem = (ctx: ParameterizedContext, problem: Problem, headers: Record<string, string> = {}, onProblem?: MediaMiddlewareOptions["onProblem"]) => {
  onProblem?.(ctx, problem.code)
  ctx.status = problem.status
  ctx.body = JSON.stringify(problem)
  ctx.set({ ...headers, "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff" })
  ctx.type = "application/problem+json"
}

/**
 * Serves stored images at GET/HEAD `/media/<key>` with their content type, `nosniff`, a year of
 * immutable caching and a CSP that forbids everything; unknown keys are a 404 problem. No auth:
 * keys are unguessable and images are public once on an article.
 */
export const mediaMiddleware = (
  runtime: ManagedRuntime.ManagedRuntime<MediaStore, never>,
  options: MediaMiddlewareOptions,
): Middleware => async (ctx, next) => {
  if (!ctx.path.startsWith(PREFIX) || (ctx.method !== "GET" && ctx.method !== "HEAD")) return next()
  const key = ctx.path.slice(PREFIX.length)
  const publicUrl = options.publicUrl.replace(/\/+$/, "")
  const names = [...new Set(new URLSearchParams(ctx.querystring).keys())]
  if (names.length > 0) {
    const refused = namedParametersRefusal(names, "Unknown query parameter", (named) => `Unknown query parameter ${named}; this endpoint takes none.`)
    return sendProblem(ctx, toProblem(refused, requestIdOf(ctx), publicUrl), {}, options.onProblem)
  }
  const exit = await runtime.runPromiseExit(
    Effect.gen(function* () {
      return yield* (yield* MediaStore).get(key)
    }),
  )
  if (Exit.isSuccess(exit)) {
    const found: Option.Option<StoredMedia> = exit.value
    if (Option.isSome(found)) {
      ctx.status = 200
      ctx.body = Buffer.from(found.value.bytes.buffer, found.value.bytes.byteOffset, found.value.bytes.byteLength)
      ctx.set(mediaHeaders)
      ctx.type = found.value.contentType
      return
    }
    const shown = key.length > 200 ? `${key.slice(0, 200)}…` : key
    return sendProblem(ctx, toProblem(new NotFound({ resource: "media", id: shown }), requestIdOf(ctx), publicUrl), {}, options.onProblem)
  }
  const failure = Cause.findErrorOption(exit.cause)
  if (Option.isSome(failure) && isCoreError(failure.value)) {
    const unavailable: Unavailable = failure.value
    return sendProblem(ctx, toProblem(unavailable, requestIdOf(ctx), publicUrl), { "Retry-After": "5" }, options.onProblem)
  }
  return sendProblem(ctx, internalProblem(requestIdOf(ctx), publicUrl), {}, options.onProblem)
}
