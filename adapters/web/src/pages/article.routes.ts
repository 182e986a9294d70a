/** Routes: The article page: view, edit (with drafts kept through refusals and expired sessions) and the dry-run preview. */
import type Router from "@koa/router"
import {
  checkRequestLimit,
  peekRequestLimit,
  RateLimited as RateLimitedError,
  type CoreError,
  decodeInput,
  extractProtectedBlocks,
  getArticle,
  HtmlAnalyzer,
  listActivity,
  listRevisions,
  type RateLimited,
  toProblem,
  type Unavailable,
  UpdateArticleBody,
  updateArticle,
} from "@content-site/core"
import { requestIdOf } from "@content-site/http"
import { Effect, Result } from "effect"
import { noteCommitted, noteError, noteOutcome, noteSubject, recordWebActivity, runCore, runCoreOrThrow } from "../call.ts"
import { type FormFields, queryParam, readForm } from "../forms.ts"
import { CHANGE_ACTIONS } from "../activityWords.ts"
import { adoptPendingDraft, type Draft, dropDraft, type EditRefusal, findDraft, keepDraft, keepPendingDraft } from "../drafts.ts"
import { articleContent, type EditForm } from "./article.ts"
import { editPreview } from "./editPreview.ts"
import { csrfOk, setFlash, takeFlash } from "@content-site/http"
import { type Ctx, type Signed, articleId, CSRF_REFUSED, isId, pageNumber, queryOf, redirect, removedText, sentences, type PageKit } from "../pageKit.ts"

export const mountArticleRoutes = (router: Router, kit: PageKit): void => {
  const { deps, editorBundle, perPage, findSite, render, signedIn, postedForm } = kit
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
          noteOutcome(ctx, CSRF_REFUSED.status, CSRF_REFUSED.code)
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
            (input) => updateArticle(s.caller, id, input, { dryRun: false, expectedRevisions: startedFrom === undefined ? undefined : [startedFrom] }),
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
                  message: `Someone saved revision ${e.current} while you were editing revision ${e.expected.join(" or ")}. Compare it in the revision list; saving again applies your text over revision ${e.current}.`,
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

  /**
   * A preview refused for a limit (the account's requests a minute, or its share of the
   * sanitiser): 429 or 503 with `Retry-After`, a sentence the editor shows, and an activity entry
   * (a refused request is logged, though a preview is not).
   */
  const refusePreview = async (ctx: Ctx, e: RateLimited | Unavailable) => {
    noteError(ctx, e)
    const wait = e._tag === "RateLimited" ? e.retryAfterSeconds : 5
    ctx.status = e._tag === "RateLimited" ? 429 : 503
    ctx.set("Retry-After", String(wait))
    ctx.set("Cache-Control", "no-store")
    ctx.type = "application/json"
    ctx.body = editPreview({
      titleChanged: false,
      bodyChanged: false,
      removed: [],
      protectedOk: true,
      protectedCount: 0,
      violations: [],
      refused:
        e._tag === "RateLimited"
          ? `No preview now: ${e.counted === undefined ? `your account has made more than ${e.limit} requests in a minute (previews count like API calls)` : `more than ${e.limit} ${e.counted}`}. Wait ${wait} seconds, then press Save again.`
          : `No preview now: the service is busy. Wait ${wait} seconds, then press Save again.`,
      limited: true,
    })
    await recordWebActivity(ctx, deps, e)
  }
  const isLimit = (e: CoreError): e is RateLimited | Unavailable => e._tag === "RateLimited" || e._tag === "Unavailable"

  router.post(
    "/articles/:id/preview",
    signedIn("POST /articles/{id}/preview", async (ctx, s) => {
      const id = articleId(ctx)
      noteSubject(ctx, { articleId: id })
      // An account that has its share of the sanitiser busy already is refused before its form is read.
      const share = await runCore(deps, HtmlAnalyzer.use((analyzer) => analyzer.admits(s.caller.accountId, ctx.request.length)))
      if (Result.isFailure(share)) return refusePreview(ctx, share.failure)
      // Over its requests a minute already: refused before the form is read too (a look, not a
      // count: the preview is counted once its CSRF token is checked, below).
      const window = await runCore(deps, peekRequestLimit(s.caller.accountId))
      if (Result.isSuccess(window) && window.success.remaining <= 0) {
        return refusePreview(ctx, new RateLimitedError({ limit: window.success.limit, retryAfterSeconds: Math.max(1, window.success.resetSeconds) }))
      }
      const fields = await postedForm(ctx, s.session)
      // A preview is a request like an API call: it counts against the account's requests a minute.
      const counted = await runCore(deps, checkRequestLimit(s.caller.accountId))
      if (Result.isFailure(counted)) {
        if (counted.failure._tag === "RateLimited") return refusePreview(ctx, counted.failure)
        throw counted.failure
      }
      const startedFrom = /^[1-9][0-9]{0,8}$/.test(fields["revision"] ?? "") ? Number(fields["revision"]) : undefined
      const reason = (fields["reason"] ?? "").trim()
      const current = await runCoreOrThrow(deps, getArticle(s.caller, id))
      const outcome = await runCore(
        deps,
        Effect.flatMap(
          decodeInput(UpdateArticleBody, { title: fields["title"] ?? "", body: fields["body"] ?? "", ...(reason === "" ? {} : { reason }) }, "Edit"),
          (input) => updateArticle(s.caller, id, input, { dryRun: true, expectedRevisions: startedFrom === undefined ? undefined : [startedFrom] }),
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
      if (isLimit(e)) return refusePreview(ctx, e)
      noteError(ctx, e)
      // A refused dry run says why; what sanitising would remove comes from the sanitiser itself
      // (off the event loop, like the edit), unless the body itself was what was refused.
      const sanitized =
        e._tag === "PayloadTooLarge" || e._tag === "InvalidRequest"
          ? Result.fail(e)
          : await runCore(deps, HtmlAnalyzer.use((analyzer) => analyzer.analyze(fields["body"] ?? "", s.caller.accountId)))
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
            ? `Someone saved revision ${e.current} while you were editing revision ${e.expected.join(" or ")}; saving will be refused. Reload the page to edit the current text.`
            : e._tag === "InvalidRequest"
              ? `Saving will be refused: ${e.errors.map((x) => `${x.path}: ${x.message}`).join("; ") || e.detail}`
              : `Saving will be refused: ${toProblem(e, requestIdOf(ctx), deps.publicUrl).detail}`,
      })
    }),
  )
}
