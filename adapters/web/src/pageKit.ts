/**
 * The pages' shared kit: how a page is sent (CSP, no-store), redirects, query and id checks, the
 * signed-in wrapper that logs every action, failure pages, CSRF-checked forms. Each room of the
 * pages (`pages/*.routes.ts`) mounts its routes with it; `mountWeb.ts` lists the rooms.
 */
import { type AccountRecord, BODY_LIMIT_MESSAGE, type CoreError, decodeInput, getArticle, InvalidRequest, isCoreError, listSites, MAX_IMAGE_BYTES, MAX_NESTING_DEPTH, MAX_REASON_LENGTH, MAX_TITLE_LENGTH, NotFound, PageParam, PathId, problemKindOf, Settings, toProblem, type Caller, UNSTORABLE_TEXT_MESSAGE, type Website } from "@content-site/core"
import multer from "@koa/multer"
import { eventLogOf, type HttpDeps, noteAccount, noteIfClientGone, notesOf, problemHeaders, requestIdOf, strictQuery } from "@content-site/http"
import { Effect, Result } from "effect"
import type { ParameterizedContext } from "koa"
import { existsSync, readFileSync } from "node:fs"
import { noteError, noteOutcome, recordWebActivity, runCoreOrThrow, webCaller } from "./call.ts"
import { FormError, type FormFields, formRead, readForm } from "./forms.ts"
import { type Html, toString } from "./html.ts"
import { page, type NavKey } from "./layout.ts"
import { type TitlesById } from "./pages/activity.ts"
import { type ConnectedClientView } from "./pages/connect.ts"
import { errorPage, type TypedText } from "./pages/errorPage.ts"
import { PREVIEW_STYLE_HASH } from "./preview.ts"
import { csrfOk, type Flash, preSessionCsrf, readSession, signedInAccount, type WebSession } from "@content-site/http"

export type Ctx = ParameterizedContext

/** The pages' Content-Security-Policy: own scripts and styles only, no inline script at all. */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  `style-src 'self' ${PREVIEW_STYLE_HASH}`,
  "img-src 'self' https: data:",
  "frame-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "connect-src 'self'",
].join("; ")

export const STATIC: Record<string, { file: URL; type: string }> = {
  "/static/app.css": { file: new URL("../static/app.css", import.meta.url), type: "text/css; charset=utf-8" },
  "/static/app.js": { file: new URL("../static/app.js", import.meta.url), type: "text/javascript; charset=utf-8" },
  "/static/editor.css": { file: new URL("../static/editor.css", import.meta.url), type: "text/css; charset=utf-8" },
}

/** The visual editor's bundle, built by `scripts/build-editor.ts` (npm install / npm start). */
export const EDITOR_BUNDLE = new URL("../dist/editor.js", import.meta.url)

/** Thrown when a form's CSRF token does not match. */
export class CsrfRejected extends Error {}

/**
 * How a POST refused for its CSRF token (missing or wrong) is logged: 403 with the code the pages
 * have always given it, `invalid_request` (the request is not one the person's session made).
 */
export const CSRF_REFUSED = { status: 403, code: "invalid_request" } as const

/** A signed-in request's context. */
export interface Signed {
  readonly account: AccountRecord
  readonly session: WebSession
  readonly caller: Caller
}

export const send = (ctx: Ctx, status: number, body: Html): void => {
  ctx.status = status
  ctx.set("Content-Security-Policy", PAGE_CSP)
  ctx.set("Cache-Control", "no-store")
  ctx.type = "text/html; charset=utf-8"
  ctx.body = toString(body)
}

export const redirect = (ctx: Ctx, to: string): void => {
  ctx.status = 303
  ctx.set("Cache-Control", "no-store")
  ctx.redirect(to)
  ctx.status = 303
}

export const safeNext = (next: string | undefined): string =>
  next !== undefined && /^\/(?!\/)[A-Za-z0-9/_.\-?=&%#+]*$/.test(next) && !next.startsWith("/\\") ? next : "/sites"

export const isId = (s: string | undefined): s is string => s !== undefined && Result.isSuccess(Effect.runSync(Effect.result(decodeInput(PathId, s, "id"))))

/** The page's query parameters: only `names`, each at most once (anything else is a 400 page). */
export const queryOf = (ctx: Ctx, names: ReadonlyArray<string>): Record<string, string | undefined> => {
  const query = strictQuery(ctx.querystring, names)
  return Object.fromEntries(names.map((n) => [n, query[n] === undefined || query[n].trim() === "" ? undefined : query[n].trim()]))
}

/** A form's or query's positive whole number of at most 9 digits (a page, a revision), else undefined. */
export const positiveNumberOf = (s: string | undefined): number | undefined => (s !== undefined && /^[1-9][0-9]{0,8}$/.test(s) ? Number(s) : undefined)
/**
 * A list page's number from its query parameter (`name`): 1 when it is not given, else read as the
 * API reads `page` (a whole number from 1, leading zeros allowed); anything else is the 400 page
 * naming the parameter, as the pages with filters answer it.
 */
export const pageNumber = (s: string | undefined, name = "page"): number => {
  if (s === undefined) return 1
  const decoded = Effect.runSync(Effect.result(decodeInput(PageParam, s, name)))
  if (Result.isSuccess(decoded)) return decoded.success
  throw new InvalidRequest({ detail: `The page number ${name}='${s.slice(0, 20)}' is not valid: it is a whole number from 1.`, errors: [{ path: name, message: "Expected a whole number from 1" }] })
}

export const defined = <T extends Record<string, unknown>>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>

export const removedText = (removed: ReadonlyArray<{ what: string; count: number }>): ReadonlyArray<string> =>
  removed.map((r) => `Removed ${r.count} × ${r.what}`)

/** Addresses that are not pages: their own 404s (problems, JSON-RPC, OAuth errors) stand. */
export const NOT_PAGES = /^\/(?:api|mcp|oauth|\.well-known|media|static)(?:\/|$)/

/** Actions that change nothing and are not logged, like page views (the editor's dry-run preview). */
export const UNLOGGED: ReadonlySet<string> = new Set(["POST /articles/{id}/preview"])

/** The page a form at this path was on: where a person returns after signing in again. */
export const formPageOf = (path: string): string => {
  const article = /^\/articles\/([^/]+)\//.exec(path)
  if (article !== null) return `/articles/${article[1]}`
  return path.startsWith("/connect/") ? "/connect" : "/sites"
}

/** A filter value the web page checks itself (not a core query parameter). */
/** A filter the page refuses before the core sees it; `field` is the name of the filter it is about. */
export class InvalidFilter extends Error {
  readonly field: string
  constructor(message: string, field: string) {
    super(message)
    this.field = field
  }
}

export const notFound = (resource: string, id: string): CoreError => new NotFound({ resource, id })

export interface McpConnections {
  readonly listConnectedClients?: (deps: HttpDeps, accountId: string) => Promise<ReadonlyArray<ConnectedClientView>>
  /** With `call`, its activity entry is written in the same step as the revocation. */
  readonly revokeConnectedClient?: (deps: HttpDeps, accountId: string, clientId: string, call?: { readonly caller: Caller; readonly httpStatus: number }) => Promise<boolean>
}

/** The MCP adapter's connected-client functions, when that adapter is present (feature check). */
export const loadMcp = async (): Promise<McpConnections | undefined> => {
  const specifier = "@content-site/mcp"
  try {
    return (await import(specifier)) as McpConnections
  } catch {
    return undefined
  }
}

export const articleId = (ctx: Ctx): string => {
  const id = ctx.params["id"]
  if (!isId(id)) throw notFound("article", String(id))
  return id
}

/**
 * A text field's refusal in words, by the core's message: text that cannot be stored is told as
 * such, any other refusal as `otherwise` (a title's or reason's length; undefined: as the core
 * says it).
 */
const unstorableOr =
  (field: string, otherwise: (message: string) => string | undefined) =>
  (message: string): string | undefined =>
    message === UNSTORABLE_TEXT_MESSAGE ? `The ${field} must not contain NUL (U+0000) characters or unpaired surrogates.` : otherwise(message)

/**
 * The body's refusals in words: a body has more than one limit, and the person must be told
 * which one it broke. Anything else reads as the core says it.
 */
const bodySentence = unstorableOr("body", (message) =>
  message === BODY_LIMIT_MESSAGE
    ? "The body must be at most 1 MiB of HTML."
    : message === `HTML must not be nested deeper than ${MAX_NESTING_DEPTH} elements`
      ? `The body is HTML nested deeper than ${MAX_NESTING_DEPTH} elements.`
      : undefined,
)

/** Validation problems as sentences a person reads, one per field. */
export const sentences = (errors: ReadonlyArray<{ readonly path: string; readonly message: string }>): ReadonlyArray<string> => {
  const known: Record<string, string | ((message: string) => string | undefined)> = {
    title: unstorableOr("title", () => `The title must be 1 to ${MAX_TITLE_LENGTH} characters long, not counting spaces at either end.`),
    body: bodySentence,
    reason: unstorableOr("reason", () => `The reason must be at most ${MAX_REASON_LENGTH} characters long.`),
    // The core refuses a start after the end on `from`: a valid date, then, but not that one.
    // The filters' own labels, From and To, so the sentence points at the field to change.
    from: (message) => (message === "from is after to" ? "From must not be after To." : "From must be a date such as 2026-11-01."),
    to: "To must be a date such as 2026-11-30, not before From.",
    channel: "The channel must be API, Agent (MCP), Web or Platform (rewrite job, administrator).",
    page: "The page must be a whole number from 1.",
    // a site's article filter (the activity page checks its own result filter before decoding)
    status: "The status must be Draft, Scheduled, Published or Archived.",
  }
  const out = errors.map((x) => {
    const field = x.path.split("/").pop() ?? ""
    const sentence = known[field]
    const said = typeof sentence === "function" ? sentence(x.message) : sentence
    if (said !== undefined) return said
    const message = x.message.trim().replace(/\.$/, "")
    return `${message.charAt(0).toUpperCase()}${message.slice(1)}.`
  })
  return [...new Set(out)]
}
/**
 * What every room of the pages shares, made once per app: the static files and the editor's
 * bundle, the upload parser, page sizes, the signed-in wrapper that logs actions, rendering and
 * failure pages, CSRF-checked forms, and article titles for activity rows.
 */
export const makePageKit = (deps: HttpDeps) => {
  const staticFiles = new Map(Object.entries(STATIC).map(([path, s]) => [path, { body: readFileSync(s.file), type: s.type }]))
  // Without a built bundle the article page keeps its plain HTML textarea.
  const editorBundle = existsSync(EDITOR_BUNDLE) ? readFileSync(EDITOR_BUNDLE) : null
  if (editorBundle !== null) staticFiles.set("/static/editor.js", { body: editorBundle, type: "text/javascript; charset=utf-8" })
  const upload = multer({
    storage: multer.memoryStorage(),
    limits: { fileSize: MAX_IMAGE_BYTES, files: 1, fields: 10, fieldSize: 64 * 1024, parts: 12 },
  })

  // Page sizes never exceed the operator's MAX_PER_PAGE (the core refuses, never clamps).
  let maxPerPage: Promise<number> | undefined
  const perPage = async (wanted: number): Promise<number> => {
    maxPerPage ??= deps.runtime.runPromise(Settings.use((settings) => Effect.succeed(settings.limits.maxPerPage)))
    return Math.max(1, Math.min(wanted, await maxPerPage))
  }

  /** One of the caller's sites by id (the core lists sites; there is no single-site read). */
  const findSite = async (caller: Caller, id: string): Promise<Website | null> => {
    for (let page = 1; ; page++) {
      const sites = await runCoreOrThrow(deps, listSites(caller, { page, per_page: await perPage(100) }))
      const found = sites.data.find((x) => x.id === id)
      if (found !== undefined) return found
      if (page >= sites.pagination.total_pages) return null
    }
  }

  const render = (ctx: Ctx, status: number, s: Signed, nav: NavKey, title: string, content: Html, flash: Flash | null = null, wide = false) =>
    send(ctx, status, page({ title, nav, account: s.account, csrf: s.session.csrf, flash, wide, path: ctx.path }, content))

  /**
   * What the person typed in the form of a post that failed for want of the database (its text
   * cannot be kept as a draft then): the title, body and reason, and the parts typed on the
   * conflict page, in the form's order. None for any other failure: a draft keeps the text then.
   */
  const typedOf = (ctx: Ctx, error: unknown): ReadonlyArray<TypedText> | undefined => {
    const fields = ctx.method === "POST" && isCoreError(error) && error._tag === "Unavailable" ? formRead(ctx) : undefined
    if (fields === undefined) return undefined
    const out: Array<TypedText> = []
    // (a form's fields are bounded by readForm: its size and its count of fields)
    for (const [name, text] of Object.entries(fields)) {
      if (typeof text !== "string" || text === "") continue
      if (name === "title" || name === "body" || name === "reason") out.push({ label: name[0]!.toUpperCase() + name.slice(1), text })
      else if (name.startsWith("edit_")) out.push({ label: `Your text for ${name === "edit_title" ? "the title" : `the part body/${name.slice("edit_body_".length)}`} (conflict page)`, text })
    }
    return out
  }

  const renderFailure = (ctx: Ctx, error: unknown, account: AccountRecord | null, csrf: string): void => {
    // A person who left while sending the form (or whose body the server answered on its socket,
    // past REQUEST_TIMEOUT_MS): nobody to answer, no defect of ours; the access line says 499.
    if (noteIfClientGone(ctx, error)) return
    const requestId = requestIdOf(ctx)
    // The refusal's code for the access line and the metrics (the page itself is HTML, not a problem).
    notesOf(ctx).problemCode = error instanceof CsrfRejected ? "invalid_request" : error instanceof FormError ? error.code : isCoreError(error) ? problemKindOf(error).code : "internal"
    if (error instanceof CsrfRejected) {
      send(ctx, 403, errorPage({ status: 403, title: "Form expired", message: "This form was opened in another session or has expired. Go back, reload the page and try again.", requestId, account, csrf }))
    } else if (error instanceof FormError) {
      send(ctx, error.status, errorPage({ status: error.status, title: "Could not read the form", message: error.message, requestId, account, csrf }))
    } else if (isCoreError(error)) {
      const kind = problemKindOf(error)
      const title = error._tag === "NotFound" ? "Not found" : kind.title
      const message = error._tag === "NotFound" ? "There is nothing here, or it belongs to another account." : toProblem(error, requestId, deps.publicUrl).detail
      // A refusal for a limit says when to come back (`Retry-After`), as the API's problems do.
      if (error._tag !== "Unauthenticated") for (const [name, value] of Object.entries(problemHeaders(error))) ctx.set(name, value)
      send(ctx, kind.status, errorPage({ status: kind.status, title, message, requestId, account, csrf, typed: typedOf(ctx, error) }))
    } else {
      eventLogOf(deps).error({ request_id: requestId, err: error instanceof Error ? (error.stack ?? error.message) : String(error) }, "web page error")
      send(ctx, 500, errorPage({ status: 500, title: "Something went wrong", message: "Something went wrong on our side. Please try again.", requestId, account, csrf }))
    }
  }

  /**
   * Runs a page's work in a span of its own when tracing is on (`page <action>`, as REST names an
   * operation's and MCP a tool's): its use cases' database and Redis calls become its children.
   */
  const traced = <A>(action: string, work: () => Promise<A>): Promise<A> =>
    deps.span === undefined ? work() : deps.span(`page ${action}`, work)

  /**
   * A page or action for a signed-in person. Actions (POST) are logged as one activity entry each;
   * page views are not (the log is of calls and changes, and a person's own browsing would bury
   * them). Without a live session a page asks for sign-in and comes back; an action is not done,
   * `expired` may keep what was sent, and the person returns to the page the form was on (or to
   * the address `expired` gives, one that offers back what was sent).
   */
  const signedIn =
    (action: string, fn: (ctx: Ctx, s: Signed) => Promise<void>, expired?: (ctx: Ctx) => Promise<string | void>) =>
    async (ctx: Ctx): Promise<void> => {
      let session: WebSession | null
      let account: AccountRecord | null
      try {
        session = await readSession(ctx, deps)
        account = session === null ? null : await signedInAccount(ctx, deps)
      } catch (error) {
        // The session cannot be read (the database away): a page, not the API's problem, says so,
        // and a form's text is read to be shown back on it (nothing else of the form is used).
        if (ctx.method === "POST" && ctx.is("application/x-www-form-urlencoded")) await readForm(ctx).catch(() => undefined)
        return renderFailure(ctx, error, null, preSessionCsrf(ctx, deps))
      }
      // A HEAD is a page view like a GET (the router answers it with the GET's handler): never an action.
      const view = ctx.method === "GET" || ctx.method === "HEAD"
      if (session === null || account === null) {
        if (view) return redirect(ctx, `/?next=${encodeURIComponent(ctx.originalUrl)}`)
        const back = expired === undefined ? undefined : await expired(ctx).catch(() => undefined)
        const next = typeof back === "string" && safeNext(back) === back ? back : formPageOf(ctx.path)
        return redirect(ctx, `/?expired=1&next=${encodeURIComponent(next)}`)
      }
      // (its access line names the account, and a refusal for load is discarded from its drain)
      noteAccount(ctx, account.id)
      if (view || UNLOGGED.has(action)) {
        try {
          await traced(action, () => fn(ctx, { account, session, caller: webCaller(ctx, account, action) }))
        } catch (error) {
          renderFailure(ctx, error, account, session.csrf)
        }
        return
      }
      const caller = webCaller(ctx, account, action)
      let thrown: unknown
      try {
        await traced(action, () => fn(ctx, { account, session, caller }))
      } catch (error) {
        thrown = error
        // A refusal is logged as one, with its code: never as "Done".
        if (isCoreError(error)) noteError(ctx, error)
        else if (error instanceof CsrfRejected) noteOutcome(ctx, CSRF_REFUSED.status, CSRF_REFUSED.code)
        else if (error instanceof FormError) noteOutcome(ctx, error.status, error.code)
        renderFailure(ctx, error, account, session.csrf)
      } finally {
        await recordWebActivity(ctx, deps, thrown)
      }
    }

  /** Reads a posted form and checks its CSRF token against the session. */
  const postedForm = async (ctx: Ctx, session: WebSession): Promise<FormFields> => {
    const fields = await readForm(ctx)
    if (!csrfOk(ctx, session, fields["_csrf"])) throw new CsrfRejected()
    return fields
  }

  /**
   * A posted form, or, when its CSRF token is another session's or expired, undefined once
   * `offerBack` has answered with what was sent (the form's page again under a fresh token: what
   * was typed is kept, nothing is done); the refusal is logged and counted as `invalid_request`.
   */
  const postedFormOrOfferBack = async (ctx: Ctx, session: WebSession, offerBack: (sent: FormFields) => Promise<void>): Promise<FormFields | undefined> => {
    try {
      return await postedForm(ctx, session)
    } catch (error) {
      const sent = error instanceof CsrfRejected ? formRead(ctx) : undefined
      if (sent === undefined) throw error
      noteOutcome(ctx, CSRF_REFUSED.status, CSRF_REFUSED.code)
      notesOf(ctx).problemCode = CSRF_REFUSED.code
      await offerBack(sent)
      return undefined
    }
  }

  /** Titles of the articles some entries concern (one read each; one not found keeps its id). */
  const titlesOf = async (caller: Caller, entries: ReadonlyArray<{ readonly article_id: string | null }>): Promise<TitlesById> => {
    const ids = [...new Set(entries.flatMap((e) => (e.article_id === null ? [] : [e.article_id])))]
    const found = await runCoreOrThrow(
      deps,
      Effect.all(
        ids.map((id) => getArticle(caller, id).pipe(Effect.map((a) => [id, a.title] as const), Effect.catchTag("NotFound", () => Effect.succeed(null)))),
        { concurrency: 4 },
      ),
    )
    return new Map(found.filter((x) => x !== null))
  }

  return { deps, staticFiles, editorBundle, upload, perPage, findSite, render, renderFailure, traced, signedIn, postedForm, postedFormOrOfferBack, titlesOf }
}

/** The shared parts a room's routes use. */
export type PageKit = ReturnType<typeof makePageKit>
