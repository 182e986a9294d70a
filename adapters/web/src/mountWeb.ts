import {
  type AccountRecord,
  type CoreError,
  createApiKey,
  decodeInput,
  extractProtectedBlocks,
  getArticle,
  HtmlAnalyzer,
  getRevision,
  getStats,
  isCoreError,
  listActivity,
  ListActivityQuery,
  listApiKeys,
  ListArticlesQuery,
  listArticles,
  listBacklinks,
  ListBacklinksQuery,
  listRevisions,
  listSites,
  MAX_IMAGE_BYTES,
  MAX_REASON_LENGTH,
  MAX_TITLE_LENGTH,
  NotFound,
  PathId,
  type PeriodSummary,
  problemKindOf,
  Settings,
  replaceFeaturedImage,
  restoreRevision,
  revokeApiKey,
  toProblem,
  UpdateArticleBody,
  updateArticle,
  verifyCredentials,
  type ApiKeyView,
  type Caller,
  type Website,
} from "@content-site/core"
import multer from "@koa/multer"
import Router from "@koa/router"
import { clientAddress, type HttpDeps, requestIdOf, strictQuery } from "@content-site/http"
import { Effect, Result } from "effect"
import type Koa from "koa"
import type { ParameterizedContext } from "koa"
import { existsSync, readFileSync } from "node:fs"
import { noteCommitted, noteError, noteOutcome, noteSubject, recordWebActivity, runCore, runCoreOrThrow, webCaller } from "./call.ts"
import { FormError, type FormFields, queryParam, readForm } from "./forms.ts"
import { type Html, toString } from "./html.ts"
import { page, type NavKey } from "./layout.ts"
import { CHANGE_ACTIONS } from "./activityWords.ts"
import { adoptPendingDraft, type Draft, dropDraft, type EditRefusal, findDraft, keepDraft, keepPendingDraft } from "./drafts.ts"
import { articleContent, type EditForm } from "./pages/article.ts"
import { activityContent, type TitlesById } from "./pages/activity.ts"
import { confirmContent } from "./pages/confirm.ts"
import { holdShownOnce, takeShownOnce } from "./shownOnce.ts"
import { connectContent, type ConnectedClientView } from "./pages/connect.ts"
import { errorPage } from "./pages/errorPage.ts"
import { revisionContent } from "./pages/revision.ts"
import { signInPage } from "./pages/signIn.ts"
import { siteContent, sitesContent, type SiteTab } from "./pages/sites.ts"
import { editPreview } from "./pages/editPreview.ts"
import { PREVIEW_STYLE_HASH } from "./preview.ts"
import { csrfOk, endSession, type Flash, PRE_CSRF_COOKIE, preSessionCsrf, readSession, setFlash, signedInAccount, startSession, takeFlash, type WebSession } from "@content-site/http"

type Ctx = ParameterizedContext

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

const STATIC: Record<string, { file: URL; type: string }> = {
  "/static/app.css": { file: new URL("../static/app.css", import.meta.url), type: "text/css; charset=utf-8" },
  "/static/app.js": { file: new URL("../static/app.js", import.meta.url), type: "text/javascript; charset=utf-8" },
  "/static/editor.css": { file: new URL("../static/editor.css", import.meta.url), type: "text/css; charset=utf-8" },
}

/** The visual editor's bundle, built by `scripts/build-editor.ts` (npm install / npm start). */
const EDITOR_BUNDLE = new URL("../dist/editor.js", import.meta.url)

/** Thrown when a form's CSRF token does not match. */
class CsrfRejected extends Error {}

/** A signed-in request's context. */
interface Signed {
  readonly account: AccountRecord
  readonly session: WebSession
  readonly caller: Caller
}

const send = (ctx: Ctx, status: number, body: Html): void => {
  ctx.status = status
  ctx.set("Content-Security-Policy", PAGE_CSP)
  ctx.set("Cache-Control", "no-store")
  ctx.type = "text/html; charset=utf-8"
  ctx.body = toString(body)
}

const redirect = (ctx: Ctx, to: string): void => {
  ctx.status = 303
  ctx.set("Cache-Control", "no-store")
  ctx.redirect(to)
  ctx.status = 303
}

const safeNext = (next: string | undefined): string =>
  next !== undefined && /^\/(?!\/)[A-Za-z0-9/_.\-?=&%#]*$/.test(next) && !next.startsWith("/\\") ? next : "/sites"

const isId = (s: string | undefined): s is string => s !== undefined && Result.isSuccess(Effect.runSync(Effect.result(decodeInput(PathId, s, "id"))))

/** The page's query parameters: only `names`, each at most once (anything else is a 400 page). */
const queryOf = (ctx: Ctx, names: ReadonlyArray<string>): Record<string, string | undefined> => {
  const query = strictQuery(ctx.querystring, names)
  return Object.fromEntries(names.map((n) => [n, query[n] === undefined || query[n].trim() === "" ? undefined : query[n].trim()]))
}

const pageNumber = (s: string | undefined): number => (s !== undefined && /^[1-9][0-9]{0,8}$/.test(s) ? Number(s) : 1)

const defined = <T extends Record<string, unknown>>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>

const removedText = (removed: ReadonlyArray<{ what: string; count: number }>): ReadonlyArray<string> =>
  removed.map((r) => `Removed ${r.count} × ${r.what}`)

/**
 * Mounts the web pages: sign-in (`/`), `/sites`, `/sites/{id}`, `/articles/{id}` (edit, image,
 * revisions, diff, restore), `/activity`, `/connect` and `/static/*`. Every action goes through the
 * core use cases as the `editor` origin (channel `web`) and is written to the activity log.
 */
export const mountWeb = (app: Koa, deps: HttpDeps): void => {
  const router = new Router()
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
    send(ctx, status, page({ title, nav, account: s.account, csrf: s.session.csrf, flash, wide }, content))

  const renderFailure = (ctx: Ctx, error: unknown, account: AccountRecord | null, csrf: string): void => {
    const requestId = requestIdOf(ctx)
    if (error instanceof CsrfRejected) {
      send(ctx, 403, errorPage({ status: 403, title: "Form expired", message: "This form was opened in another session or has expired. Go back, reload the page and try again.", requestId, account, csrf }))
    } else if (error instanceof FormError) {
      send(ctx, error.status, errorPage({ status: error.status, title: "Could not read the form", message: error.message, requestId, account, csrf }))
    } else if (isCoreError(error)) {
      const kind = problemKindOf(error)
      const title = error._tag === "NotFound" ? "Not found" : kind.title
      const message = error._tag === "NotFound" ? "There is nothing here, or it belongs to another account." : toProblem(error, requestId, deps.publicUrl).detail
      send(ctx, kind.status, errorPage({ status: kind.status, title, message, requestId, account, csrf }))
    } else {
      console.error(`[${requestId}] web page error`, error)
      send(ctx, 500, errorPage({ status: 500, title: "Something went wrong", message: "Something went wrong on our side. Please try again.", requestId, account, csrf }))
    }
  }

  /**
   * A page or action for a signed-in person. Actions (POST) are logged as one activity entry each;
   * page views are not (the log is of calls and changes, and a person's own browsing would bury
   * them). Without a live session a page asks for sign-in and comes back; an action is not done,
   * `expired` may keep what was sent, and the person returns to the page the form was on.
   */
  const signedIn =
    (action: string, fn: (ctx: Ctx, s: Signed) => Promise<void>, expired?: (ctx: Ctx) => Promise<void>) =>
    async (ctx: Ctx): Promise<void> => {
      const session = await readSession(ctx, deps)
      const account = session === null ? null : await signedInAccount(ctx, deps)
      if (session === null || account === null) {
        if (ctx.method === "GET") return redirect(ctx, `/?next=${encodeURIComponent(ctx.originalUrl)}`)
        if (expired !== undefined) await expired(ctx).catch(() => undefined)
        return redirect(ctx, `/?expired=1&next=${encodeURIComponent(formPageOf(ctx.path))}`)
      }
      if (ctx.method === "GET" || UNLOGGED.has(action)) {
        try {
          await fn(ctx, { account, session, caller: webCaller(ctx, account, action) })
        } catch (error) {
          renderFailure(ctx, error, account, session.csrf)
        }
        return
      }
      const caller = webCaller(ctx, account, action)
      let thrown: unknown
      try {
        await fn(ctx, { account, session, caller })
      } catch (error) {
        thrown = error
        if (isCoreError(error)) noteError(ctx, error)
        renderFailure(ctx, error, account, session.csrf)
      } finally {
        await recordWebActivity(ctx, deps, thrown instanceof CsrfRejected || thrown instanceof FormError ? undefined : thrown)
      }
    }

  /** Reads a posted form and checks its CSRF token against the session. */
  const postedForm = async (ctx: Ctx, session: WebSession): Promise<FormFields> => {
    const fields = await readForm(ctx)
    if (!csrfOk(ctx, session, fields["_csrf"])) throw new CsrfRejected()
    return fields
  }

  // ---- static assets -------------------------------------------------------------------------
  router.get("/static/:file", async (ctx, next) => {
    const found = staticFiles.get(ctx.path)
    if (found === undefined) return next()
    strictQuery(ctx.querystring, [])
    ctx.set("Cache-Control", "public, max-age=3600")
    ctx.type = found.type
    ctx.body = found.body
  })

  // ---- sign-in / sign-out --------------------------------------------------------------------
  router.get("/", async (ctx) => {
    let query: Record<string, string | undefined>
    try {
      query = queryOf(ctx, ["next", "signed_out", "expired"])
    } catch (error) {
      return renderFailure(ctx, error, null, preSessionCsrf(ctx, deps))
    }
    if ((await signedInAccount(ctx, deps)) !== null) return redirect(ctx, "/sites")
    const notice = query["expired"]
      ? "Your session expired, so that was not saved. Sign in again to go back to the page; an article edit you were making is kept and offered back."
      : query["signed_out"]
        ? "You are signed out."
        : null
    send(ctx, 200, signInPage({ csrf: preSessionCsrf(ctx, deps), email: "", next: safeNext(query["next"]), error: null, notice }))
  })

  router.post("/", async (ctx) => {
    let fields: FormFields
    try {
      fields = await readForm(ctx, 64 * 1024)
    } catch (error) {
      return renderFailure(ctx, error, null, preSessionCsrf(ctx, deps))
    }
    const email = (fields["email"] ?? "").slice(0, 320)
    const next = safeNext(fields["next"])
    const again = (status: number, message: string) =>
      send(ctx, status, signInPage({ csrf: preSessionCsrf(ctx, deps), email, next, error: message, notice: null }))
    if (!csrfOk(ctx, null, fields["_csrf"])) return again(403, "The sign-in form expired. Please try again.")
    const result = await runCore(deps, verifyCredentials(email, fields["password"] ?? "", clientAddress(ctx)))
    if (Result.isFailure(result)) {
      const e = result.failure
      return e._tag === "RateLimited"
        ? again(429, `Too many failed sign-ins from your address. Try again in ${e.retryAfterSeconds} seconds.`)
        : e._tag === "Unauthenticated"
          ? again(401, "Wrong email or password.")
          : again(problemKindOf(e).status, toProblem(e, requestIdOf(ctx), deps.publicUrl).detail)
    }
    await startSession(ctx, deps, result.success.id)
    ctx.append("Set-Cookie", `${PRE_CSRF_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${deps.publicUrl.startsWith("https:") ? "; Secure" : ""}`)
    webCaller(ctx, result.success, "POST / (sign in)")
    redirect(ctx, next)
    await recordWebActivity(ctx, deps, undefined)
  })

  router.post("/signout", async (ctx) => {
    const session = await readSession(ctx, deps)
    let fields: FormFields = {}
    try {
      fields = await readForm(ctx, 64 * 1024)
    } catch {
      // an unreadable form is treated like a missing token below
    }
    if (session !== null && !csrfOk(ctx, session, fields["_csrf"])) {
      return renderFailure(ctx, new CsrfRejected(), await signedInAccount(ctx, deps), session.csrf)
    }
    await endSession(ctx, deps)
    redirect(ctx, "/?signed_out=1")
  })

  // ---- sites ---------------------------------------------------------------------------------
  router.get(
    "/sites",
    signedIn("GET /sites", async (ctx, s) => {
      const query = queryOf(ctx, ["page"])
      const sites = await runCoreOrThrow(deps, listSites(s.caller, { page: pageNumber(query["page"]), per_page: await perPage(30) }))
      const stats = new Map<string, PeriodSummary>()
      const summaries = await runCoreOrThrow(
        deps,
        Effect.all(sites.data.map((site) => getStats(s.caller, site.id, {})), { concurrency: 4 }),
      )
      for (const summary of summaries) stats.set(summary.site_id, summary)
      render(ctx, 200, s, "sites", "Your sites", sitesContent(sites, stats, query), await takeFlash(deps, s.session))
    }),
  )

  router.get(
    "/sites/:id",
    signedIn("GET /sites/{id}", async (ctx, s) => {
      const id = ctx.params["id"]
      if (!isId(id)) throw notFound("website", String(id))
      noteSubject(ctx, { siteId: id })
      const tab: SiteTab = queryParam(ctx, "tab") === "backlinks" ? "backlinks" : "articles"
      const query = queryOf(ctx, ["from", "to", "status", "page", "tab"])
      // getStats first: another account's site fails here as NotFound, before any listing.
      const stats = await runCoreOrThrow(deps, getStats(s.caller, id, {}))
      const site = await findSite(s.caller, id)
      if (site === null) throw notFound("website", id)
      const filters = defined({ from: query["from"], to: query["to"], page: query["page"] })
      const articles =
        tab === "articles"
          ? await runCore(deps, Effect.flatMap(decodeInput(ListArticlesQuery, { ...filters, ...defined({ status: query["status"] }) }, "Filters"), (q) => listArticles(s.caller, id, q)))
          : null
      const backlinks =
        tab === "backlinks"
          ? await runCore(deps, Effect.flatMap(decodeInput(ListBacklinksQuery, filters, "Filters"), (q) => listBacklinks(s.caller, id, q)))
          : null
      let error: string | null = null
      const failure: CoreError | null =
        articles !== null && Result.isFailure(articles) ? articles.failure : backlinks !== null && Result.isFailure(backlinks) ? backlinks.failure : null
      if (failure !== null) {
        if (failure._tag !== "InvalidRequest") throw failure
        error = toProblem(failure, requestIdOf(ctx), deps.publicUrl).detail
      }
      const content = siteContent({
        site,
        stats,
        tab,
        query,
        articles: articles !== null && Result.isSuccess(articles) ? articles.success : null,
        backlinks: backlinks !== null && Result.isSuccess(backlinks) ? backlinks.success : null,
        error,
      })
      render(ctx, error === null ? 200 : 400, s, "sites", site.name, content, await takeFlash(deps, s.session), true)
    }),
  )

  // ---- article -------------------------------------------------------------------------------
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

  const showArticle = async (ctx: Ctx, s: Signed, id: string, draft: { readonly id: string; readonly draft: Draft } | null, missingDraft: boolean) => {
    const query = queryOf(ctx, ["rev_page", "act_page", "draft"])
    const article = await runCoreOrThrow(deps, getArticle(s.caller, id))
    noteSubject(ctx, { siteId: article.site_id, articleId: article.id })
    const pageSize = await perPage(10)
    const [revisions, activity] = await runCoreOrThrow(
      deps,
      Effect.all([
        listRevisions(s.caller, id, { page: pageNumber(query["rev_page"]), per_page: pageSize }),
        listActivity(s.caller, { article_id: id, actions: CHANGE_ACTIONS, page: pageNumber(query["act_page"]), per_page: pageSize }),
      ]),
    )
    const siteName = (await findSite(s.caller, article.site_id))?.name ?? null
    const flash = await takeFlash(deps, s.session)
    const form: EditForm = draft === null
      ? { title: article.title, body: article.body, reason: "", revision: article.revision, draftId: null }
      : { title: draft.draft.title, body: draft.draft.body, reason: draft.draft.reason, revision: draft.draft.revision, draftId: draft.id }
    render(
      ctx,
      200,
      s,
      "sites",
      article.title,
      articleContent({
        article,
        siteName,
        revisions,
        activity,
        form,
        refusal: draft?.draft.refusal ?? null,
        missingDraft,
        csrf: s.session.csrf,
        query,
        editor: editorBundle !== null,
      }),
      flash,
      true,
    )
  }

  const articleId = (ctx: Ctx): string => {
    const id = ctx.params["id"]
    if (!isId(id)) throw notFound("article", String(id))
    return id
  }

  const draftUrl = (id: string, draftId: string): string => `/articles/${encodeURIComponent(id)}?draft=${draftId}#edit-error`

  router.get(
    "/articles/:id",
    signedIn("GET /articles/{id}", async (ctx, s) => {
      const id = articleId(ctx)
      // An edit sent after the session had expired is offered back once the person is signed in again.
      const adopted = await adoptPendingDraft(ctx, deps, s.session, id)
      if (adopted !== null) return redirect(ctx, draftUrl(id, adopted))
      const draftId = queryParam(ctx, "draft")
      const draft = await findDraft(deps, s.session, id, draftId)
      await showArticle(ctx, s, id, draft === null || draftId === undefined ? null : { id: draftId, draft }, draftId !== undefined && draft === null)
    }),
  )

  /** The edit form's fields as a draft (the text as typed, nothing trimmed but the reason). */
  const draftOf = (id: string, fields: FormFields, refusal: EditRefusal): Draft => ({
    articleId: id,
    title: (fields["title"] ?? "").slice(0, 1000),
    body: fields["body"] ?? "",
    reason: (fields["reason"] ?? "").trim().slice(0, 1000),
    revision: /^[1-9][0-9]{0,8}$/.test(fields["revision"] ?? "") ? Number(fields["revision"]) : 0,
    refusal,
  })

  /** Validation problems as sentences a person reads, one per field. */
  const sentences = (errors: ReadonlyArray<{ readonly path: string; readonly message: string }>): ReadonlyArray<string> => {
    const known: Record<string, string> = {
      title: `The title must be 1 to ${MAX_TITLE_LENGTH} characters long, not counting spaces at either end.`,
      body: "The body must be at most 1 MiB of HTML.",
      reason: `The reason must be at most ${MAX_REASON_LENGTH} characters long.`,
      from: "The start date must be a date such as 2026-11-01.",
      to: "The end date must be a date such as 2026-11-30, not before the start date.",
      channel: "The channel must be API, Agent (MCP) or Web.",
      page: "The page must be a whole number from 1.",
    }
    const out = errors.map((x) => {
      const field = x.path.split(".").pop() ?? ""
      if (known[field] !== undefined) return known[field]
      const message = x.message.trim().replace(/\.$/, "")
      return `${message.charAt(0).toUpperCase()}${message.slice(1)}.`
    })
    return [...new Set(out)]
  }

  router.post(
    "/articles/:id/edit",
    signedIn(
      "POST /articles/{id}/edit",
      async (ctx, s) => {
        const id = articleId(ctx)
        noteSubject(ctx, { articleId: id })
        const fields = await readForm(ctx)
        if (!csrfOk(ctx, s.session, fields["_csrf"])) {
          // A form from an earlier sign-in: nothing is saved, and the text is kept all the same.
          noteOutcome(ctx, 403, "invalid_request")
          const draftId = await keepDraft(deps, s.session, draftOf(id, fields, {
            message: "This form was opened before you last signed in, so it was not saved. Your text is kept below: check it and save again.",
            blocks: [],
            details: [],
          }))
          return redirect(ctx, draftUrl(id, draftId))
        }
        const form = draftOf(id, fields, { message: "", blocks: [], details: [] })
        const startedFrom = form.revision === 0 ? undefined : form.revision
        const outcome = await runCore(
          deps,
          Effect.flatMap(
            decodeInput(UpdateArticleBody, { title: form.title, body: form.body, ...(form.reason === "" ? {} : { reason: form.reason }) }, "Edit"),
            (input) => updateArticle(s.caller, id, input, { dryRun: false, expectedRevision: startedFrom }),
          ),
        )
        if (Result.isSuccess(outcome)) {
          const { result } = outcome.success
          if (result.revision !== null) noteCommitted(ctx)
          await dropDraft(deps, s.session, fields["draft"])
          const removed = removedText(result.sanitized.removed)
          await setFlash(
            deps,
            s.session,
            result.revision === null
              ? { kind: "info", message: "Nothing changed, so no new revision was made.", details: removed }
              : {
                  kind: "success",
                  message: `Saved as revision ${result.revision.number}.${result.sanitized.changed ? " The sanitiser removed some markup:" : ""}`,
                  details: removed,
                },
          )
          return redirect(ctx, `/articles/${encodeURIComponent(id)}`)
        }
        const e = outcome.failure
        noteError(ctx, e)
        const refusal: EditRefusal | null =
          e._tag === "ProtectedLinkChanged"
            ? {
                message: "Your edit removes, changes or adds protected links. Keep each of them exactly as it is (you may move them):",
                blocks: e.blocks,
                details: [],
              }
            : e._tag === "PreconditionFailed"
              ? {
                  message: `Someone saved revision ${e.current} while you were editing revision ${e.expected}. Compare it in the revision list; saving again applies your text over revision ${e.current}.`,
                  blocks: [],
                  details: [],
                }
              : e._tag === "InvalidRequest"
                ? { message: "Please correct the following:", blocks: [], details: sentences(e.errors) }
                : e._tag === "DailyEditLimit" || e._tag === "EditConflict"
                  ? { message: toProblem(e, requestIdOf(ctx), deps.publicUrl).detail, blocks: [], details: [] }
                  : null
        if (refusal === null) throw e
        // Post/redirect/get: the refusal and the text as typed wait under an address that reloads.
        await dropDraft(deps, s.session, fields["draft"])
        const kept = { ...form, refusal, revision: e._tag === "PreconditionFailed" ? e.current : form.revision }
        redirect(ctx, draftUrl(id, await keepDraft(deps, s.session, kept)))
      },
      async (ctx) => {
        const id = ctx.params["id"]
        if (!isId(id)) return
        const fields = await readForm(ctx)
        await keepPendingDraft(ctx, deps, draftOf(id, fields, {
          message: "Your session had expired, so this edit was not saved. Your text is kept below: check it and save again.",
          blocks: [],
          details: [],
        }))
      },
    ),
  )

  router.post(
    "/articles/:id/preview",
    signedIn("POST /articles/{id}/preview", async (ctx, s) => {
      const id = articleId(ctx)
      noteSubject(ctx, { articleId: id })
      const fields = await postedForm(ctx, s.session)
      const startedFrom = /^[1-9][0-9]{0,8}$/.test(fields["revision"] ?? "") ? Number(fields["revision"]) : undefined
      const reason = (fields["reason"] ?? "").trim()
      const current = await runCoreOrThrow(deps, getArticle(s.caller, id))
      const outcome = await runCore(
        deps,
        Effect.flatMap(
          decodeInput(UpdateArticleBody, { title: fields["title"] ?? "", body: fields["body"] ?? "", ...(reason === "" ? {} : { reason }) }, "Edit"),
          (input) => updateArticle(s.caller, id, input, { dryRun: true, expectedRevision: startedFrom }),
        ),
      )
      ctx.set("Cache-Control", "no-store")
      ctx.type = "application/json"
      if (Result.isSuccess(outcome)) {
        const { result } = outcome.success
        const next = result.article
        ctx.body = editPreview({
          titleChanged: next.title !== current.title,
          bodyChanged: next.body !== current.body,
          removed: result.sanitized.removed,
          protectedOk: true,
          protectedCount: extractProtectedBlocks(current.body).length,
          violations: [],
          refused: null,
        })
        return
      }
      const e = outcome.failure
      if (e._tag === "NotFound") throw e
      noteError(ctx, e)
      // A refused dry run says why; what sanitising would remove comes from the sanitiser itself
      // (off the event loop, like the edit), unless the body itself was what was refused.
      const sanitized =
        e._tag === "PayloadTooLarge" || e._tag === "InvalidRequest"
          ? Result.fail(e)
          : await runCore(deps, HtmlAnalyzer.use((analyzer) => analyzer.analyze(fields["body"] ?? "")))
      const removed = Result.isSuccess(sanitized) ? sanitized.success.report.removed : []
      if (e._tag === "ProtectedLinkChanged") {
        ctx.body = editPreview({
          titleChanged: (fields["title"] ?? "").trim() !== current.title,
          bodyChanged: true,
          removed,
          protectedOk: false,
          protectedCount: extractProtectedBlocks(current.body).length,
          violations: e.blocks,
          refused: null,
        })
        return
      }
      ctx.body = editPreview({
        titleChanged: false,
        bodyChanged: false,
        removed,
        protectedOk: true,
        protectedCount: extractProtectedBlocks(current.body).length,
        violations: [],
        refused:
          e._tag === "PreconditionFailed"
            ? `Someone saved revision ${e.current} while you were editing revision ${e.expected}; saving will be refused. Reload the page to edit the current text.`
            : e._tag === "InvalidRequest"
              ? `Saving will be refused: ${e.errors.map((x) => `${x.path}: ${x.message}`).join("; ") || e.detail}`
              : `Saving will be refused: ${toProblem(e, requestIdOf(ctx), deps.publicUrl).detail}`,
      })
    }),
  )

  router.post(
    "/articles/:id/image",
    signedIn("POST /articles/{id}/image", async (ctx, s) => {
      const id = articleId(ctx)
      noteSubject(ctx, { articleId: id })
      if (!ctx.is("multipart/form-data")) throw new FormError(415, "The image must be sent as multipart/form-data.")
      const back = `/articles/${encodeURIComponent(id)}`
      try {
        await upload.single("image")(ctx as never, async () => {})
      } catch (error) {
        const code = (error as { code?: unknown }).code
        noteOutcome(ctx, code === "LIMIT_FILE_SIZE" ? 413 : 400, code === "LIMIT_FILE_SIZE" ? "payload_too_large" : "invalid_request")
        await setFlash(deps, s.session, {
          kind: "error",
          message: code === "LIMIT_FILE_SIZE" ? "The image is larger than 10 MiB." : "The upload could not be read. Please pick one image file and try again.",
        })
        return redirect(ctx, back)
      }
      const fields = ((ctx.request as { body?: unknown }).body ?? {}) as Record<string, unknown>
      if (!csrfOk(ctx, s.session, fields["_csrf"])) throw new CsrfRejected()
      const file = (ctx as { file?: { buffer: Buffer } }).file
      if (file === undefined || file.buffer.length === 0) {
        await setFlash(deps, s.session, { kind: "error", message: "Choose an image file to upload." })
        return redirect(ctx, back)
      }
      const alt = typeof fields["alt"] === "string" ? fields["alt"].trim().slice(0, 500) : undefined
      const outcome = await runCore(
        deps,
        replaceFeaturedImage(s.caller, id, { kind: "bytes", bytes: new Uint8Array(file.buffer) }, alt === "" ? undefined : alt),
      )
      if (Result.isSuccess(outcome)) {
        const rev = outcome.success.result.revision
        if (rev !== null) noteCommitted(ctx)
        await setFlash(deps, s.session, { kind: "success", message: rev ? `Featured image replaced (revision ${rev.number}).` : "The image is the same as before; nothing changed." })
        return redirect(ctx, back)
      }
      const e = outcome.failure
      if (e._tag === "NotFound") throw e
      noteError(ctx, e)
      await setFlash(deps, s.session, { kind: "error", message: `Image not saved: ${toProblem(e, requestIdOf(ctx), deps.publicUrl).detail}` })
      redirect(ctx, back)
    }),
  )

  const revisionNumber = (ctx: Ctx): number => {
    const n = ctx.params["n"]
    if (n === undefined || !/^[1-9][0-9]{0,8}$/.test(n)) throw notFound("revision", String(n))
    return Number(n)
  }

  const showRevision = async (ctx: Ctx, s: Signed, id: string, n: number, status: number, refusal: Parameters<typeof revisionContent>[0]["refusal"]) => {
    const [article, revision] = await runCoreOrThrow(deps, Effect.all([getArticle(s.caller, id), getRevision(s.caller, id, n)]))
    noteSubject(ctx, { siteId: article.site_id, articleId: id })
    const siteName = (await findSite(s.caller, article.site_id))?.name ?? null
    render(ctx, status, s, "sites", `Revision ${n} · ${article.title}`, revisionContent({ article, siteName, revision, csrf: s.session.csrf, refusal }), await takeFlash(deps, s.session), true)
  }

  router.get(
    "/articles/:id/revisions/:n",
    signedIn("GET /articles/{id}/revisions/{number}", async (ctx, s) => {
      queryOf(ctx, [])
      await showRevision(ctx, s, articleId(ctx), revisionNumber(ctx), 200, null)
    }),
  )

  router.post(
    "/articles/:id/revisions/:n/restore",
    signedIn("POST /articles/{id}/revisions/{number}/restore", async (ctx, s) => {
      const id = articleId(ctx)
      const n = revisionNumber(ctx)
      noteSubject(ctx, { articleId: id })
      const fields = await postedForm(ctx, s.session)
      const reason = (fields["reason"] ?? "").trim().slice(0, 500)
      if (fields["confirmed"] !== "yes") {
        // No script asked: this page asks, and nothing is done (nor logged) until it is confirmed.
        ;(ctx.state as { webCall?: unknown }).webCall = undefined
        const article = await runCoreOrThrow(deps, getArticle(s.caller, id))
        return render(
          ctx,
          200,
          s,
          "sites",
          `Restore revision ${n}?`,
          confirmContent({
            title: `Restore revision ${n} of “${article.title}”?`,
            message: "Restoring makes a new revision with that revision's title, body and featured image. The current text stays in the history.",
            action: `/articles/${encodeURIComponent(id)}/revisions/${n}/restore`,
            button: `Restore revision ${n}`,
            csrf: s.session.csrf,
            fields: reason === "" ? {} : { reason },
            cancel: `/articles/${encodeURIComponent(id)}/revisions/${n}`,
          }),
        )
      }
      const outcome = await runCore(deps, restoreRevision(s.caller, id, n, reason === "" ? undefined : reason))
      if (Result.isSuccess(outcome)) {
        const rev = outcome.success.result.revision
        if (rev !== null) noteCommitted(ctx)
        await setFlash(deps, s.session, {
          kind: rev ? "success" : "info",
          message: rev ? `Restored revision ${n} as revision ${rev.number}.` : `Revision ${n} is the same as the current article; nothing changed.`,
        })
        return redirect(ctx, `/articles/${encodeURIComponent(id)}`)
      }
      const e = outcome.failure
      if (e._tag === "NotFound") throw e
      noteError(ctx, e)
      return showRevision(
        ctx,
        s,
        id,
        n,
        problemKindOf(e).status,
        e._tag === "ProtectedLinkChanged"
          ? { message: `Restoring revision ${n} would remove or change protected links that the current article has. They must stay exactly as they are:`, blocks: e.blocks }
          : { message: toProblem(e, requestIdOf(ctx), deps.publicUrl).detail, blocks: [] },
      )
    }),
  )

  // ---- activity ------------------------------------------------------------------------------
  /** The account's articles for the article filter, by title (the first 100 of each site). */
  const articleChoices = async (caller: Caller): Promise<ReadonlyArray<{ id: string; title: string }>> => {
    const size = await perPage(100)
    const sites = await runCoreOrThrow(deps, listSites(caller, { page: 1, per_page: size }))
    const lists = await runCoreOrThrow(
      deps,
      Effect.all(sites.data.map((site) => listArticles(caller, site.id, { page: 1, per_page: size })), { concurrency: 4 }),
    )
    return lists.flatMap((l) => l.data.map((a) => ({ id: a.id, title: a.title }))).sort((x, y) => x.title.localeCompare(y.title))
  }

  router.get(
    "/activity",
    signedIn("GET /activity", async (ctx, s) => {
      const query = queryOf(ctx, ["channel", "status", "from", "to", "page", "article", "changes"])
      const status = query["status"]
      const article = query["article"]
      const size = await perPage(25)
      const outcome = await runCore(
        deps,
        Effect.gen(function* () {
          const q = yield* decodeInput(ListActivityQuery, defined({ channel: query["channel"], from: query["from"], to: query["to"], page: query["page"] }), "Filters")
          if (status !== undefined && status !== "ok" && status !== "error") {
            return yield* Effect.fail(new InvalidFilter("The result filter must be “Done” or “Refused or failed”."))
          }
          if (article !== undefined && !isId(article)) return yield* Effect.fail(new InvalidFilter("That article id is not valid."))
          return yield* listActivity(s.caller, {
            ...q,
            per_page: size,
            ...(status === "ok" || status === "error" ? { outcome: status } : {}),
            ...(article !== undefined ? { article_id: article } : {}),
            ...(query["changes"] === "1" ? { actions: CHANGE_ACTIONS } : {}),
          })
        }),
      )
      let error: string | null = null
      if (Result.isFailure(outcome)) {
        const e = outcome.failure
        if (e instanceof InvalidFilter) error = e.message
        else if (e._tag === "InvalidRequest") error = sentences(e.errors).join(" ")
        else throw e
      }
      const entries = Result.isSuccess(outcome) ? outcome.success : null
      const [titles, articles] = await Promise.all([
        titlesOf(s.caller, [...(entries?.data ?? []), ...(article !== undefined && isId(article) ? [{ article_id: article }] : [])]),
        articleChoices(s.caller),
      ])
      render(
        ctx,
        error === null ? 200 : 400,
        s,
        "activity",
        "Activity",
        activityContent({ entries, titles, articles, query, error }),
        await takeFlash(deps, s.session),
        true,
      )
    }),
  )

  // ---- connect -------------------------------------------------------------------------------
  const connectedClients = async (accountId: string): Promise<ReadonlyArray<ConnectedClientView> | null> => {
    const mcp = await loadMcp()
    return mcp?.listConnectedClients === undefined ? null : await mcp.listConnectedClients(deps, accountId)
  }

  const showConnect = async (ctx: Ctx, s: Signed, status: number, created: { key: string; view: ApiKeyView } | null, shownBefore: boolean, nameError: string | null) => {
    const [keys, clients] = await Promise.all([runCoreOrThrow(deps, listApiKeys(s.account.id)), connectedClients(s.account.id)])
    render(
      ctx,
      status,
      s,
      "connect",
      "API & agents",
      connectContent({ publicUrl: deps.publicUrl, keys, created, shownBefore, clients, csrf: s.session.csrf, nameError }),
      await takeFlash(deps, s.session),
      true,
    )
  }

  router.get(
    "/connect",
    signedIn("GET /connect", async (ctx, s) => {
      const createdId = queryOf(ctx, ["created"])["created"]
      const held = createdId === undefined ? null : await takeShownOnce(ctx, deps, s.session, createdId)
      const keys = held === null ? [] : await runCoreOrThrow(deps, listApiKeys(s.account.id))
      const view = held === null ? undefined : keys.find((k) => k.id === held["id"])
      const created = view !== undefined && typeof held?.["key"] === "string" ? { key: held["key"], view } : null
      await showConnect(ctx, s, 200, created, createdId !== undefined && created === null, null)
    }),
  )

  router.post(
    "/connect/keys",
    signedIn("POST /connect/keys", async (ctx, s) => {
      const fields = await postedForm(ctx, s.session)
      const name = (fields["name"] ?? "").trim()
      const scope = fields["scope"] === "write" ? "write" : "read-only"
      if (name === "" || name.length > 100) {
        noteOutcome(ctx, 400, "invalid_request")
        return showConnect(ctx, s, 400, null, false, "Give the key a name of 1 to 100 characters, such as “Reporting script”.")
      }
      const created = await runCoreOrThrow(deps, createApiKey(s.account.id, { name, scope }))
      // Post/redirect/get: the key waits, encrypted, for the one page that shows it; a reload of
      // that page shows it no more, and never makes a second key.
      const heldId = await holdShownOnce(ctx, deps, s.session, { id: created.view.id, key: created.key })
      redirect(ctx, `/connect?created=${heldId}#new-key`)
    }),
  )

  router.post(
    "/connect/keys/:keyId/revoke",
    signedIn("POST /connect/keys/{id}/revoke", async (ctx, s) => {
      const keyId = ctx.params["keyId"]
      if (!isId(keyId)) throw notFound("API key", String(keyId))
      const fields = await postedForm(ctx, s.session)
      const keys = await runCoreOrThrow(deps, listApiKeys(s.account.id))
      const key = keys.find((k) => k.id === keyId)
      if (key === undefined) throw notFound("API key", keyId)
      if (fields["confirmed"] !== "yes") {
        ;(ctx.state as { webCall?: unknown }).webCall = undefined
        return render(ctx, 200, s, "connect", "Revoke the key?", confirmContent({
          title: `Revoke the key “${key.name}”?`,
          message: "Programs using it stop working at once. This cannot be undone; you can create a new key.",
          action: `/connect/keys/${encodeURIComponent(keyId)}/revoke`,
          button: "Revoke the key",
          csrf: s.session.csrf,
          fields: {},
          cancel: "/connect",
        }))
      }
      await runCoreOrThrow(deps, revokeApiKey(s.account.id, keyId))
      await setFlash(deps, s.session, { kind: "success", message: `Revoked the key “${key.name}”. It no longer works.` })
      redirect(ctx, "/connect")
    }),
  )

  router.post(
    "/connect/clients/:clientId/revoke",
    signedIn("POST /connect/clients/{id}/revoke", async (ctx, s) => {
      const clientId = ctx.params["clientId"] ?? ""
      const fields = await postedForm(ctx, s.session)
      const mcp = await loadMcp()
      if (fields["confirmed"] !== "yes") {
        const client = (await connectedClients(s.account.id))?.find((c) => c.clientId === clientId)
        if (client === undefined) throw notFound("connected agent", clientId)
        ;(ctx.state as { webCall?: unknown }).webCall = undefined
        return render(ctx, 200, s, "connect", "Disconnect the agent?", confirmContent({
          title: `Disconnect ${client.name}?`,
          message: "Its access stops at once. It can connect again only if you allow it again.",
          action: `/connect/clients/${encodeURIComponent(clientId)}/revoke`,
          button: "Disconnect",
          csrf: s.session.csrf,
          fields: {},
          cancel: "/connect",
        }))
      }
      const done = mcp?.revokeConnectedClient === undefined ? false : await mcp.revokeConnectedClient(deps, s.account.id, clientId)
      await setFlash(deps, s.session, done ? { kind: "success", message: "The agent is disconnected; its access stopped." } : { kind: "error", message: "No such connected agent." })
      redirect(ctx, "/connect")
    }),
  )

  app.use(router.routes())

  // Nothing else answered a page address: the site's own 404 page, with a way back.
  app.use(async (ctx, next) => {
    if ((ctx.method !== "GET" && ctx.method !== "HEAD") || NOT_PAGES.test(ctx.path)) return next()
    const session = await readSession(ctx, deps)
    const account = session === null ? null : await signedInAccount(ctx, deps)
    send(
      ctx,
      404,
      errorPage({
        status: 404,
        title: "Page not found",
        message: "There is no page at this address. It may have moved, or the link may be mistyped.",
        requestId: requestIdOf(ctx),
        account,
        csrf: session?.csrf ?? "",
      }),
    )
  })
}

/** Addresses that are not pages: their own 404s (problems, JSON-RPC, OAuth errors) stand. */
const NOT_PAGES = /^\/(?:api|mcp|oauth|\.well-known|media|static)(?:\/|$)/

/** Actions that change nothing and are not logged, like page views (the editor's dry-run preview). */
const UNLOGGED: ReadonlySet<string> = new Set(["POST /articles/{id}/preview"])

/** The page a form at this path was on: where a person returns after signing in again. */
const formPageOf = (path: string): string => {
  const article = /^\/articles\/([^/]+)\//.exec(path)
  if (article !== null) return `/articles/${article[1]}`
  return path.startsWith("/connect/") ? "/connect" : "/sites"
}

/** A filter value the web page checks itself (not a core query parameter). */
class InvalidFilter extends Error {}

const notFound = (resource: string, id: string): CoreError => new NotFound({ resource, id })

interface McpConnections {
  readonly listConnectedClients?: (deps: HttpDeps, accountId: string) => Promise<ReadonlyArray<ConnectedClientView>>
  readonly revokeConnectedClient?: (deps: HttpDeps, accountId: string, clientId: string) => Promise<boolean>
}

/** The MCP adapter's connected-client functions, when that adapter is present (feature check). */
const loadMcp = async (): Promise<McpConnections | undefined> => {
  const specifier = "@content-site/mcp"
  try {
    return (await import(specifier)) as McpConnections
  } catch {
    return undefined
  }
}
