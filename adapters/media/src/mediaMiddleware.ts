import { internalProblem, isCoreError, MediaStore, namedParametersRefusal, NotFound, type Problem, type StoredMedia, toProblem, type Unavailable } from "@content-site/core"
import { Cause, Effect, Exit, type ManagedRuntime, Option } from "effect"
import type { Middleware, ParameterizedContext } from "koa"
import { randomUUID } from "node:crypto"
import { noneMatchNames } from "./noneMatch.ts"

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

/** The entity tag of a stored image: its key, which names one upload's bytes forever (strong). */
const etagOfKey = (key: string): string => `"${key}"`

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

/** A store that could not be read: 503 `unavailable` with `Retry-After` for an outage, else 500 `internal`. */
const sendStoreFailure = (ctx: ParameterizedContext, cause: Cause.Cause<Unavailable>, publicUrl: string, options: MediaMiddlewareOptions) => {
  const failure = Cause.findErrorOption(cause)
  if (Option.isSome(failure) && isCoreError(failure.value)) {
    const unavailable: Unavailable = failure.value
    return sendProblem(ctx, toProblem(unavailable, requestIdOf(ctx), publicUrl), { "Retry-After": "5" }, options.onProblem)
  }
  return sendProblem(ctx, internalProblem(requestIdOf(ctx), publicUrl), {}, options.onProblem)
}

/** What a stored image answers to: GET and HEAD (RFC 9110 15.5.6, 9.3.7). */
const ALLOW = "GET, HEAD"

/**
 * Any other method on `/media/<key>`: for a stored image, `OPTIONS` is a 204 and anything else a
 * 405 `method_not_allowed` problem, both with `Allow: GET, HEAD`; a store that cannot be read,
 * 503 (or 500) as to a GET; for anything else, the next middleware (a 404).
 */
const otherMethod = async (ctx: ParameterizedContext, runtime: ManagedRuntime.ManagedRuntime<MediaStore, never>, key: string, publicUrl: string, options: MediaMiddlewareOptions, next: () => Promise<unknown>) => {
  const exit = await runtime.runPromiseExit(
    Effect.gen(function* () {
      return yield* (yield* MediaStore).get(key)
    }),
  )
  // a store that cannot be read says so, as to a GET: whether the image exists is not known
  if (Exit.isFailure(exit)) return sendStoreFailure(ctx, exit.cause, publicUrl, options)
  if (Option.isNone(exit.value)) return next()
  ctx.set("Allow", ALLOW)
  if (ctx.method === "OPTIONS") {
    ctx.status = 204
    ctx.body = null
    return
  }
  const requestId = requestIdOf(ctx)
  sendProblem(ctx, {
    type: `${publicUrl}/problems/method_not_allowed`,
    title: "Method not allowed",
    status: 405,
    code: "method_not_allowed",
    detail: `${ctx.method} is not allowed on this path; use GET or HEAD.`,
    request_id: requestId,
  }, { Allow: ALLOW }, options.onProblem)
}

/**
 * Serves stored images at GET/HEAD `/media/<key>` with their content type, `nosniff`, a year of
 * immutable caching, a strong ETag (304 to an `If-None-Match` naming it), `Accept-Ranges: none`
 * and a CSP that forbids everything; unknown keys are a 404 problem. No auth:
 * keys are unguessable and images are public once on an article.
 */
export const mediaMiddleware = (
  runtime: ManagedRuntime.ManagedRuntime<MediaStore, never>,
  options: MediaMiddlewareOptions,
): Middleware => async (ctx, next) => {
  if (!ctx.path.startsWith(PREFIX)) return next()
  const key = ctx.path.slice(PREFIX.length)
  const publicUrl = options.publicUrl.replace(/\/+$/, "")
  if (ctx.method !== "GET" && ctx.method !== "HEAD") return otherMethod(ctx, runtime, key, publicUrl, options, next)
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
      const etag = etagOfKey(key)
      // Ranges are not served: said, so that a client does not ask for them.
      ctx.set({ ...mediaHeaders, ETag: etag, "Accept-Ranges": "none" })
      const noneMatch = ctx.get("If-None-Match")
      if (noneMatch !== "" && noneMatchNames(noneMatch, etag)) {
        // 304: the headers a 200 would carry for caching (ETag, Cache-Control), no body.
        ctx.status = 304
        ctx.body = null
        return
      }
      ctx.status = 200
      ctx.body = Buffer.from(found.value.bytes.buffer, found.value.bytes.byteOffset, found.value.bytes.byteLength)
      ctx.type = found.value.contentType
      return
    }
    const shown = key.length > 200 ? `${key.slice(0, 200)}…` : key
    return sendProblem(ctx, toProblem(new NotFound({ resource: "media", id: shown }), requestIdOf(ctx), publicUrl), {}, options.onProblem)
  }
  return sendStoreFailure(ctx, exit.cause, publicUrl, options)
}
