/**
 * The REST pipeline: routing from the operation table, the gate every authenticated request
 * passes (key, request limit, RateLimit-*), idempotency keys, `Prefer: return=minimal`, encoding,
 * and one activity entry per call. A little over 300 lines: one pipeline, kept in one place.
 */
import {
  authenticateApiKey,
  type Caller,
  checkRequestLimit,
  claimIdempotencyKey,
  type CoreError,
  decodeInput,
  editsRemaining,
  IdempotencyKey,
  type IdempotencyHold,
  InvalidRequest,
  isCoreError,
  isRecordableStatus,
  type LoggedCaller,
  minimalWriteAnswer,
  principalOfApiKey,
  NotFound,
  type Pagination,
  type Principal,
  problemKindOf,
  type AnswerToKeep,
  type RecordedAnswer,
  recordActivity,
  recordIdempotentAnswer,
  releaseIdempotencyKey,
  replayedProblemText,
  requestFingerprint,
  toProblem,
} from "@content-site/core"
import Router from "@koa/router"
import { Cause, Effect, Option, Result, Schema } from "effect"
import type Koa from "koa"
import type { ParameterizedContext } from "koa"
import { clientAddress } from "@content-site/http"
import type { HttpDeps } from "@content-site/http"
import { coreErrorOfHttpError, problemHeaders, sendProblem } from "@content-site/http"
import { requestIdOf } from "@content-site/http"
import { runEffect } from "@content-site/http"
import { eventLogOf, noteAccount, notesOf } from "@content-site/http"
import { mountDocs } from "../openapi/docs.ts"
import { type Call, type Operation, operations } from "./operations.ts"
import { decodePathId, noneMatchNames, prefersMinimal } from "./requestParts.ts"
import { textMemo } from "./textMemo.ts"
import { wireEncoderOf } from "./wireEncoder.ts"

/** The REST API's path prefix. */
export const API_PREFIX = "/api/v1"

/** The API key a request presents: `Authorization: Bearer <key>` or `X-API-Key: <key>`. */
export const presentedKey = (ctx: ParameterizedContext): string | undefined => {
  const authorization = ctx.get("Authorization")
  if (authorization !== "") {
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization)
    return m?.[1] ?? ""
  }
  const header = ctx.get("X-API-Key").trim()
  return header === "" ? undefined : header
}

/** Link headers made, by everything they are made of (a list is mostly asked again as it was). */
const links = textMemo<string>(256, 1024)

/** The RFC 8288 `Link` header of a page: first, prev, next, last as they apply, absolute URLs. */
export const linkHeader = (publicUrl: string, path: string, querystring: string, pagination: Pagination): string =>
  links(`${pagination.page}/${pagination.total_pages} ${publicUrl}${path}?${querystring}`, () =>
    makeLinkHeader(publicUrl, path, querystring, pagination),
  )

const makeLinkHeader = (publicUrl: string, path: string, querystring: string, pagination: Pagination): string => {
  const last = Math.max(1, pagination.total_pages)
  const params = new URLSearchParams(querystring)
  const at = (page: number) => {
    params.set("page", String(page))
    return `<${publicUrl}${path}?${params.toString()}>`
  }
  const links = [`${at(1)}; rel="first"`]
  if (pagination.page > 1) links.push(`${at(Math.min(pagination.page - 1, last))}; rel="prev"`)
  if (pagination.page < last) links.push(`${at(pagination.page + 1)}; rel="next"`)
  links.push(`${at(last)}; rel="last"`)
  return links.join(", ")
}

const setRateHeaders = (ctx: ParameterizedContext, limit: number, remaining: number, reset: number) => {
  ctx.set("RateLimit-Limit", String(limit))
  ctx.set("RateLimit-Remaining", String(Math.max(0, remaining)))
  ctx.set("RateLimit-Reset", String(Math.max(0, Math.ceil(reset))))
}

const coreErrorOf = (err: unknown): CoreError | undefined => (isCoreError(err) ? err : coreErrorOfHttpError(err))

/** Ends a call that repeats the first answer of its idempotency key. */
class Replay {
  readonly answer: RecordedAnswer
  constructor(answer: RecordedAnswer) {
    this.answer = answer
  }
}

/** Response headers an idempotent answer keeps for its replays. */
const REPLAYED_HEADERS = ["ETag", "Edit-Limit-Remaining", "Retry-After"] as const

/** The `Idempotency-Key` of a request, decoded (a malformed one is a 400), or undefined. */
const idempotencyKeyOf = (ctx: ParameterizedContext): string | undefined => {
  // Sent but empty is not absent: a client that meant a key and lost it must hear so.
  if (ctx.headers["idempotency-key"] === undefined) return undefined
  const raw = ctx.get("Idempotency-Key")
  const exit = Effect.runSyncExit(decodeInput(IdempotencyKey, raw, "Idempotency-Key"))
  if (exit._tag === "Success") return exit.value
  const error = Option.getOrThrow(Cause.findErrorOption(exit.cause))
  const message = error.errors[0]?.message ?? "Expected 1 to 255 visible ASCII characters"
  throw new InvalidRequest({ detail: `The Idempotency-Key header is not valid: ${message} (a UUID is typical).`, errors: [{ path: "Idempotency-Key", message }] })
}

/**
 * The gate every authenticated API request passes: the API key (401 / 429 per client address,
 * before anything is logged) and the account's request limit, run as one effect. Sets
 * `Cache-Control` and `RateLimit-*`; answers the caller and the limit's verdict.
 */
const gateRequest = async (ctx: ParameterizedContext, deps: HttpDeps, action: string, subject: () => Subject = noSubject) => {
  const startedAt = Date.now()
  ctx.set("Cache-Control", "no-store")
  const callerOf = (principal: Principal): Caller => ({
    accountId: principal.accountId,
    actor: principal.actor,
    scope: principal.scope,
    channel: "api",
    requestId: requestIdOf(ctx),
    action,
    startedAt,
  })
  const presented = presentedKey(ctx)
  const gate = await runEffect(
    deps.runtime,
    Effect.flatMap(authenticateApiKey(presented, clientAddress(ctx)), (principal) =>
      Effect.map(Effect.result(checkRequestLimit(principal.accountId)), (verdict) => ({ principal, verdict })),
    ),
  ).catch(async (err: unknown) => {
    // Refused before an account was known: still logged (every API call is). Over its address's
    // failure budget a call is refused whatever key it carries (the account's limit is in the
    // Result above, never thrown): on a live key's account when it carried one. A key that is
    // missing, unknown or revoked, and a call the database or the counters could not serve, with
    // no account (in no account's view of the log; the key is not looked up again then, which
    // would wait for an unreachable database a second time).
    const core = coreErrorOf(err)
    if (core?._tag === "RateLimited" || core?._tag === "Unauthenticated" || core?._tag === "Unavailable") {
      const { status, code } = problemKindOf(core)
      const holder =
        core._tag === "RateLimited" ? await runEffect(deps.runtime, principalOfApiKey(presented)).catch(() => Option.none<Principal>()) : Option.none<Principal>()
      const caller: LoggedCaller = Option.isSome(holder)
        ? callerOf(holder.value)
        : { accountId: null, actor: null, channel: "api", requestId: requestIdOf(ctx), action, startedAt, address: clientAddress(ctx) }
      await record(deps, caller, { ok: false, httpStatus: status, errorCode: code, ...(caller.accountId === null ? noSubject() : subject()) })
    }
    throw err
  })
  const caller = callerOf(gate.principal)
  noteAccount(ctx, caller.accountId)
  if (Result.isFailure(gate.verdict)) {
    const err = gate.verdict.failure
    if (err._tag === "RateLimited") setRateHeaders(ctx, err.limit, 0, err.retryAfterSeconds)
  } else {
    const verdict = gate.verdict.success
    setRateHeaders(ctx, verdict.limit, verdict.remaining, verdict.resetSeconds)
  }
  return { caller, verdict: gate.verdict }
}

/**
 * The pipeline of every authenticated operation: the gate (key, request limit, RateLimit-*
 * headers), the operation, the response encoded with its core schema, and one activity entry for
 * the outcome, refused calls included.
 */
const handlerOf = (op: Operation, deps: HttpDeps): Koa.Middleware => async (ctx) => {
  // The action names the method as sent: a HEAD (which a GET route answers) is logged as HEAD.
  const method = op.method === "GET" && ctx.method === "HEAD" ? "HEAD" : op.method
  const { caller, verdict: gateVerdict } = await gateRequest(ctx, deps, `${method} ${API_PREFIX}${op.path}`, () => subjectOfPath(op, ctx))
  // `Prefer: return=minimal` on a write that answers an article: the answer without its body.
  const minimal = op.minimal === true && prefersMinimal(ctx.get("Prefer"))
  // Said on the 200 only (errors are the same either way).
  const preferenceHeaders = () => {
    if (op.minimal !== true) return
    ctx.vary("Prefer")
    if (minimal) ctx.set("Preference-Applied", "return=minimal")
  }
  // The key this call holds once its write claimed it: its answer is recorded for retries.
  let held: { readonly hold: IdempotencyHold; readonly dryRun: boolean } | undefined
  const call: Call = {
    ctx,
    caller,
    runtime: deps.runtime,
    ids: { siteId: null, articleId: null },
    claim: async (parts, options) => {
      const key = op.idempotent === true ? idempotencyKeyOf(ctx) : undefined
      if (key === undefined) return
      const fingerprint = await runEffect(deps.runtime, requestFingerprint({ operation: op.operationId, parts }))
      const claim = await runEffect(deps.runtime, claimIdempotencyKey(caller, key, fingerprint))
      if (claim.kind === "replay") throw new Replay(claim.answer)
      if (claim.hold === undefined) return
      held = { hold: claim.hold, dryRun: options?.dryRun === true }
      // the change this call makes marks its key applied in the change's own transaction
      call.caller = { ...caller, idempotency: claim.hold }
    },
  }
  // What is kept is the core's to say: a write's answer without its article's body (rebuilt from
  // the revision it names), nothing of a dry run's.
  const keep = async (answer: Omit<AnswerToKeep, "dryRun"> | undefined) => {
    if (held === undefined) return
    const { hold, dryRun } = held
    const effect = answer === undefined ? releaseIdempotencyKey(caller, hold) : recordIdempotentAnswer(caller, hold, { ...answer, dryRun })
    // A key left pending is freed by its lease; the answer already made is sent regardless.
    await runEffect(deps.runtime, effect).catch((err: unknown) => {
      eventLogOf(deps).error({ request_id: caller.requestId, err: err instanceof Error ? err.message : String(err) }, "could not keep the idempotency key's answer")
    })
  }
  try {
    if (Result.isFailure(gateVerdict)) {
      // Refused before the operation ran: the entry still names the site or article in the path.
      noteSubjectOfPath(op, call)
      throw gateVerdict.failure
    }
    // Tracing on: the operation (its use case) is a span, its database and Redis calls under it.
    const reply = await (deps.span !== undefined ? deps.span(op.operationId, () => op.handle(call)) : op.handle(call))
    // A GET whose `If-None-Match` names the answer's ETag: 304 with the tag, and no body made.
    const etag = reply.headers?.["ETag"]
    if (op.method === "GET" && etag !== undefined && noneMatchNames(ctx.get("If-None-Match") || undefined, etag)) {
      ctx.set("ETag", etag)
      ctx.status = 304
      ctx.body = null
      await record(deps, caller, { ok: true, httpStatus: 304, errorCode: null, ...call.ids })
      return
    }
    const body = wireEncoderOf(op.response)(reply.value) as Record<string, unknown>
    for (const [name, value] of Object.entries(reply.headers ?? {})) ctx.set(name, value)
    if (reply.editsRemaining !== undefined) ctx.set("Edit-Limit-Remaining", String(Math.max(0, reply.editsRemaining)))
    if (op.paginated) {
      const pagination = (reply.value as { pagination: Pagination }).pagination
      ctx.set("Link", linkHeader(deps.publicUrl, `${API_PREFIX}${ctx.path.slice(API_PREFIX.length)}`, ctx.querystring, pagination))
    }
    ctx.status = 200
    ctx.type = "application/json"
    preferenceHeaders()
    // The full answer is kept for replays (as a value); a minimal one is made from it for each
    // call that asks, and the full text only when it is sent (a 1 MiB body's is about 10 ms of
    // the event loop, for nothing under `Prefer: return=minimal`).
    ctx.body = minimal ? JSON.stringify(minimalWriteAnswer(body as { article: object })) : JSON.stringify(body)
    if (held !== undefined) await keep({ status: 200, headers: keptHeaders(ctx), value: body })
    // a committed change wrote its entry in its own transaction
    if (reply.committed !== true) await record(deps, caller, { ok: true, httpStatus: 200, errorCode: null, ...call.ids })
  } catch (err) {
    if (err instanceof Replay) {
      const { answer } = err
      for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value)
      // The edits left are the account's today, as `RateLimit-*` are its now: a replay changes
      // nothing, and says what is left after the edits made since its first answer (or on a new day).
      if (op.write) {
        const left = await runEffect(deps.runtime, editsRemaining(caller)).catch(() => undefined)
        if (left !== undefined) ctx.set("Edit-Limit-Remaining", String(Math.max(0, left)))
      }
      ctx.set("Idempotent-Replayed", "true")
      ctx.status = answer.status
      if (answer.status === 200) preferenceHeaders()
      ctx.body =
        minimal && answer.status === 200
          ? JSON.stringify(minimalWriteAnswer(JSON.parse(answer.body) as { article: object }))
          : answer.status >= 400
            ? replayedProblemText(answer.body, caller.requestId)
            : answer.body
      const code = answer.status >= 400 ? ((JSON.parse(answer.body) as { code?: string }).code ?? null) : null
      await record(deps, caller, { ok: answer.status < 400, httpStatus: answer.status, errorCode: code, ...call.ids })
      return
    }
    const core = coreErrorOf(err)
    const kind = core === undefined ? { status: 500, code: "internal" } : problemKindOf(core)
    // A refusal for load (the request limit, the account's share of the sanitiser, a busy
    // service) says only when to retry: it costs no read of the day's edits, so that a flood of
    // them costs the database nothing more than the refusals themselves.
    const refusedForLoad = core?._tag === "RateLimited" || core?._tag === "Unavailable"
    if (op.write && !refusedForLoad) {
      if (core?._tag === "DailyEditLimit") ctx.set("Edit-Limit-Remaining", "0")
      else {
        const left = await runEffect(deps.runtime, editsRemaining(caller)).catch(() => undefined)
        if (left !== undefined) ctx.set("Edit-Limit-Remaining", String(Math.max(0, left)))
      }
    }
    if (held !== undefined) {
      if (core !== undefined && isRecordableStatus(kind.status)) {
        // The problem as the error funnel sends it (same request id), kept for the retries.
        const headers: Record<string, string> = { ...problemHeaders(core) }
        if (ctx.res.hasHeader("Edit-Limit-Remaining")) headers["Edit-Limit-Remaining"] = String(ctx.response.get("Edit-Limit-Remaining"))
        headers["Content-Type"] = "application/problem+json"
        await keep({ status: kind.status, headers, value: toProblem(core, caller.requestId, deps.publicUrl) })
      } else await keep(undefined)
    }
    await record(deps, caller, { ok: false, httpStatus: kind.status, errorCode: kind.code, ...call.ids })
    throw err
  }
}

/** The headers of a success kept for its replays, its `Content-Type` as sent (`application/json; charset=utf-8`). */
const keptHeaders = (ctx: ParameterizedContext): Record<string, string> => {
  const out: Record<string, string> = { "Content-Type": String(ctx.response.get("Content-Type")) }
  // (Koa 3 answers undefined for a header not set, which a store keeping objects would keep as such)
  for (const name of REPLAYED_HEADERS) if (ctx.res.hasHeader(name)) out[name] = String(ctx.response.get(name))
  return out
}

/** Sets the call's site or article id from the operation's `{id}` path parameter, when it is a valid id. */
/** The site or article an activity entry names. */
interface Subject {
  readonly siteId: string | null
  readonly articleId: string | null
}
const noSubject = (): Subject => ({ siteId: null, articleId: null })

/** The site or article in an operation's path, for the entry of a call refused before it ran. */
const subjectOfPath = (op: Operation, ctx: ParameterizedContext): Subject =>
  subjectOfTemplate(op.path, (ctx.params as Record<string, string | undefined> | undefined)?.["id"])

/** The site or article a path of this template names by its `{id}` (`raw`, as in the path). */
const subjectOfTemplate = (template: string, raw: string | undefined): Subject => {
  if (raw === undefined) return noSubject()
  try {
    const id = decodePathId(raw, "resource")
    if (template.startsWith("/articles/")) return { siteId: null, articleId: id }
    if (template.startsWith("/sites/")) return { siteId: id, articleId: null }
  } catch {
    // Not an id: the entry names no subject.
  }
  return noSubject()
}

const noteSubjectOfPath = (op: Operation, call: Call): void => {
  const subject = subjectOfPath(op, call.ctx)
  if (subject.articleId !== null) call.ids.articleId = subject.articleId
  if (subject.siteId !== null) call.ids.siteId = subject.siteId
}

const record = async (
  deps: HttpDeps,
  caller: LoggedCaller,
  outcome: { ok: boolean; httpStatus: number; errorCode: string | null; siteId: string | null; articleId: string | null },
) => {
  // The activity entry must not turn an answered call into an error: a failure to log is reported, not sent.
  await runEffect(deps.runtime, recordActivity(caller, outcome)).catch((err: unknown) => {
    eventLogOf(deps).error({ request_id: caller.requestId, err: err instanceof Error ? err.message : String(err) }, "could not record activity")
  })
}

const koaPath = (path: string) => path.replace(/\{(\w+)\}/g, ":$1")

/**
 * Mounts the REST API under `/api/v1` (every operation, the OpenAPI document) and the API
 * reference page at `/api/docs`.
 */
export const mountRest = (app: Koa, deps: HttpDeps): void => {
  // Paths are case-sensitive (RFC 3986): `/api/v1/Articles/...` is no endpoint (404, like any
  // unknown path under the prefix), as the 405 check and the prefix check below read them. A
  // trailing slash is tolerated, by the router and the 405 check alike.
  const router = new Router({ prefix: API_PREFIX, sensitive: true })
  for (const op of operations) {
    const handler = handlerOf(op, deps)
    if (op.method === "GET") router.get(koaPath(op.path), handler)
    else if (op.method === "PUT") router.put(koaPath(op.path), handler)
    else if (op.method === "PATCH") router.patch(koaPath(op.path), handler)
    else router.post(koaPath(op.path), handler)
  }
  mountDocs(router, app, deps)
  app.use(router.routes())
  app.use(methodNotAllowed(deps))
  app.use(unknownApiPath(deps))
}

/**
 * Any other path under `/api/v1`: authenticated, counted and logged like an operation (so the
 * answer carries `RateLimit-*` like every authenticated API response), then 404 `not_found`.
 */
const unknownApiPath = (deps: HttpDeps): Koa.Middleware => {
  const template: Omit<Operation, "method" | "path"> = {
    operationId: "unknownPath",
    tag: "",
    summary: "",
    description: "",
    pathParams: [],
    response: Schema.Unknown,
    paginated: false,
    write: false,
    etag: false,
    ifMatch: false,
    problems: ["NotFound"],
    handle: (call) => Promise.reject(new NotFound({ resource: "endpoint", id: call.ctx.path })),
  }
  return async (ctx, next) => {
    if (ctx.path !== API_PREFIX && !ctx.path.startsWith(`${API_PREFIX}/`)) return next()
    // The logged action names the path asked for, cut short: it is the caller's text, not a template.
    const op = { ...template, method: ctx.method as Operation["method"], path: ctx.path.slice(API_PREFIX.length, API_PREFIX.length + 200) }
    await handlerOf(op, deps)(ctx, next)
  }
}

/**
 * A known API path with a method it does not take: 405 with `Allow` and a problem (code
 * `method_not_allowed`, an HTTP-level answer outside the domain's error table).
 */
const methodNotAllowed = (deps: HttpDeps): Koa.Middleware => {
  // (the `{id}` of a template captured, the only path parameter an entry names its subject by)
  const routes = operations.map((op) => ({
    method: op.method,
    template: op.path,
    regex: new RegExp(`^${API_PREFIX}${op.path.replace(/\{(\w+)\}/g, (_, name: string) => (name === "id" ? "([^/]+)" : "[^/]+"))}/?$`),
  }))
  routes.push({ method: "GET", template: "/openapi.json", regex: new RegExp(`^${API_PREFIX}/openapi\\.json$`) })
  return async (ctx, next) => {
    if (!ctx.path.startsWith(`${API_PREFIX}/`)) return next()
    const matched = routes.filter((r) => r.regex.test(ctx.path))
    const allowed: Array<string> = [...new Set(matched.map((r) => r.method))]
    if (allowed.length === 0) return next()
    if (allowed.includes("GET")) allowed.push("HEAD")
    ctx.set("Allow", allowed.join(", "))
    // the access line and the metrics name the path's template, as they do for its operations
    notesOf(ctx).route = `${API_PREFIX}${matched[0]!.template}`
    if (ctx.method === "OPTIONS") {
      // an API answer like any other: never stored by a cache
      ctx.set("Cache-Control", "no-store")
      ctx.status = 204
      return
    }
    // The OpenAPI document needs no key; every other API path answers authenticated callers only.
    const openPath = ctx.path === `${API_PREFIX}/openapi.json`
    // Logged like the path's operations: the route's template as the action, the site or article
    // of its `{id}` as the subject (the paths matched are one template, one method each).
    const route = matched[0]!
    const subject = subjectOfTemplate(route.template, route.regex.exec(ctx.path)?.[1])
    const gate = openPath ? undefined : await gateRequest(ctx, deps, `${ctx.method} ${API_PREFIX}${route.template}`, () => subject)
    if (gate !== undefined && Result.isFailure(gate.verdict)) {
      await record(deps, gate.caller, { ok: false, httpStatus: 429, errorCode: "rate_limited", ...subject })
      throw gate.verdict.failure
    }
    sendProblem(ctx, {
      type: `${deps.publicUrl}/problems/method_not_allowed`,
      title: "Method not allowed",
      status: 405,
      code: "method_not_allowed",
      detail: `${ctx.method} is not allowed on this path; use ${allowed.join(" or ")}.`,
      request_id: requestIdOf(ctx),
    })
    if (gate !== undefined) {
      await record(deps, gate.caller, { ok: false, httpStatus: 405, errorCode: "method_not_allowed", ...subject })
    }
  }
}
