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
  isCoreError,
  listActivity,
  listRevisions,
  problemKindOf,
  type RateLimited,
  toProblem,
  type Unavailable,
  UpdateArticleBody,
  updateArticle,
} from "@content-site/core"
import { requestIdOf } from "@content-site/http"
import { Effect, Result } from "effect"
import { noteCommitted, noteError, noteOutcome, noteSubject, recordWebActivity, runCore, runCoreOrThrow } from "../call.ts"
import { type FormFields, hiddenTextOf, queryParam, readForm } from "../forms.ts"
import { CHANGE_ACTIONS } from "../activityWords.ts"
import { adoptPendingDraft, type Draft, dropDraft, type EditRefusal, findDraft, keepDraft, keepPendingDraft, refusalHeading, sentFromAnotherSite, sentFromOwnPage } from "../drafts.ts"
import { draftUrl, isCallersArticle, keepForItsAccount, landOnDraft, mergeUrl, OPENED_FOR_ANOTHER, openedForAnother, refusalOf, savedFlash, whoMade, whoMadeSince } from "./editOutcome.ts"
import { articleContent, type EditForm } from "./article.ts"
import { editPreview } from "./editPreview.ts"
import { csrfOk, setFlash, takeFlash } from "@content-site/http"
import { type Ctx, type Signed, articleId, CSRF_REFUSED, CsrfRejected, isId, pageNumber, positiveNumberOf, queryOf, redirect, type PageKit } from "../pageKit.ts"

/**
 * The title an edit form sent. A text field drops the line breaks of its value (HTML's value
 * sanitisation), so a title stored with one (set over the API) came back without it though the
 * person never touched it, and saving changed it. The form carries such a title as stored beside
 * the field (`title_as_stored`): the field's text equal to it without its line breaks is that
 * title, unchanged; any other text is what the person typed. The hidden field holds the title as
 * JSON: a browser sends every line break of a form's values as CRLF, and the title's own are kept.
 */
const postedTitle = (fields: FormFields): string => {
  const title = fields["title"] ?? ""
  const stored = hiddenTextOf(fields["title_as_stored"])
  return stored !== undefined && title === stored.replace(/[\r\n]/g, "") ? stored : title
}

export const mountArticleRoutes = (router: Router, kit: PageKit): void => {
  const { deps, editorBundle, perPage, findSite, render, signedIn, postedForm } = kit
  /**
   * The article page with its edit form: the article's text, or a draft's (kept under `draft.id`,
   * or, with `unkept`, text too large to keep shown at once under the status of its refusal).
   */
  const showArticle = async (
    ctx: Ctx,
    s: Signed,
    id: string,
    draft: { readonly id: string | null; readonly draft: Draft } | null,
    missingDraft: boolean,
    status = 200,
    unkept = false,
  ) => {
    const query = queryOf(ctx, ["rev_page", "act_page", "draft"])
    const article = await runCoreOrThrow(deps, getArticle(s.caller, id))
    noteSubject(ctx, { siteId: article.site_id, articleId: article.id })
    const pageSize = await perPage(10)
    const [revisions, activity] = await runCoreOrThrow(
      deps,
      Effect.all([
        listRevisions(s.caller, id, { page: pageNumber(query["rev_page"], "rev_page"), per_page: pageSize }),
        listActivity(s.caller, { article_id: id, actions: CHANGE_ACTIONS, page: pageNumber(query["act_page"], "act_page"), per_page: pageSize }),
      ]),
    )
    const siteName = (await findSite(s.caller, article.site_id))?.name ?? null
    const flash = await takeFlash(deps, s.session)
    const form: EditForm = draft === null
      ? { title: article.title, body: article.body, reason: "", revision: article.revision, draftId: null }
      : { title: draft.draft.title, body: draft.draft.body, reason: draft.draft.reason, revision: draft.draft.revision, draftId: draft.id, ...(draft.draft.mode === undefined ? {} : { mode: draft.draft.mode }) }
    render(
      ctx,
      status,
      s,
      "sites",
      // A refused save says so first in the page's title (the first thing a screen reader reads).
      draft?.draft.refusal ? `${refusalHeading(draft.draft.refusal).title}${article.title}` : article.title,
      articleContent({
        article,
        siteName,
        revisions,
        activity,
        form,
        refusal: draft?.draft.refusal ?? null,
        missingDraft,
        unkept,
        csrf: s.session.csrf,
        account: s.caller.accountId,
        query,
        editor: editorBundle !== null,
      }),
      flash,
      true,
    )
  }

  /**
   * Where a refused edit's text goes: kept as a draft, which replaces the draft it came from, and
   * the person sent to it (post/redirect/get); or, too large to keep (a body over 1 MiB, a title
   * and reason over 16 KiB), shown again at once in the editor under the refusal's status, the
   * draft it came from left as it was (a save from that form drops it).
   */
  const keepOrShow = async (ctx: Ctx, s: Signed, id: string, fields: FormFields, kept: Draft, status: number, page: "draft" | "merge" = "draft") => {
    const draftId = await keepDraft(deps, s.session, kept)
    if (draftId !== null) {
      await dropDraft(deps, s.session, fields["draft"])
      return landOnDraft(ctx, deps, s.session, id, draftId, kept.refusal, page)
    }
    const earlier = (await findDraft(deps, s.session, id, fields["draft"])) === null ? null : (fields["draft"] ?? null)
    await showArticle(ctx, s, id, { id: earlier, draft: kept }, false, status, true)
  }

  const isCallers = (s: Signed, id: string) => isCallersArticle(deps, s.caller, id)

  router.get(
    "/articles/:id",
    signedIn("GET /articles/{id}", async (ctx, s) => {
      const id = articleId(ctx)
      const draftId = queryParam(ctx, "draft")
      // An edit sent after the session had expired is offered back once the person is signed in
      // again; one at a time (the page of a draft shows that draft, the next one waits its turn).
      const adopted = draftId === undefined ? await adoptPendingDraft(ctx, deps, s.session, id, () => isCallers(s, id)) : null
      if (adopted !== null) {
        // one sent from the conflict page goes back there, with what was chosen and typed on it
        const conflict = (await findDraft(deps, s.session, id, adopted))?.refusal.conflictWith !== undefined
        return redirect(ctx, conflict ? mergeUrl(id, adopted) : draftUrl(id, adopted))
      }
      const draft = await findDraft(deps, s.session, id, draftId)
      await showArticle(ctx, s, id, draft === null || draftId === undefined ? null : { id: draftId, draft }, draftId !== undefined && draft === null)
    }),
  )

  /** The edit form's fields as a draft (the text as typed, nothing trimmed but the reason). */
  const draftOf = (id: string, fields: FormFields, refusal: EditRefusal): Draft => ({
    articleId: id,
    // (kept as typed: the draft store bounds a title and reason together, 16 KiB, and keeps no larger text)
    title: postedTitle(fields),
    body: fields["body"] ?? "",
    reason: (fields["reason"] ?? "").trim(),
    revision: positiveNumberOf(fields["revision"]) ?? 0,
    refusal,
    ...(fields["mode"] === "source" ? { mode: "source" as const } : {}),
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
          // Sent from another site (or not known to be from ours): refused, and its text is not
          // kept, or a foreign form could put its text in the person's editor as their own draft.
          if (!sentFromOwnPage(ctx, deps)) throw new CsrfRejected()
          // A form of this service from an earlier sign-in: nothing is saved, and the text is kept all the same.
          noteOutcome(ctx, CSRF_REFUSED.status, CSRF_REFUSED.code)
          // Opened for another account (signed in on this browser before this one): kept for that account, not made this one's.
          if (await openedForAnother(fields, s.caller.accountId, () => isCallers(s, id))) {
            return keepForItsAccount(ctx, deps, s.session, draftOf(id, fields, { message: OPENED_FOR_ANOTHER, blocks: [], details: [] }))
          }
          // (a draft of an earlier session is not this session's: fields["draft"] finds nothing)
          return keepOrShow(ctx, s, id, fields, draftOf(id, fields, {
            message: "This form was opened before you last signed in, so it was not saved.",
            blocks: [],
            details: [],
          }), CSRF_REFUSED.status)
        }
        const form = draftOf(id, fields, { message: "", blocks: [], details: [] })
        const base = form.revision === 0 ? undefined : form.revision
        // The page always sends the revision it was opened at: a change saved meanwhile by
        // anyone is merged with this one, and what both changed differently is settled by the person.
        const outcome = await runCore(
          deps,
          Effect.flatMap(
            decodeInput(
              UpdateArticleBody,
              { title: form.title, body: form.body, ...(form.reason === "" ? {} : { reason: form.reason }), ...(base === undefined ? {} : { base_revision: base }) },
              "Edit",
            ),
            (input) => updateArticle(s.caller, id, input, { dryRun: false }),
          ),
        )
        if (Result.isSuccess(outcome)) {
          const { result } = outcome.success
          if (result.revision !== null) noteCommitted(ctx)
          await dropDraft(deps, s.session, fields["draft"])
          const theirsBy = result.merge === undefined ? null : await runCoreOrThrow(deps, whoMadeSince(s.caller, id, result.merge.base, result.merge.theirs, result.article.revision))
          await setFlash(deps, s.session, savedFlash(id, outcome.success, theirsBy))
          return redirect(ctx, `/articles/${encodeURIComponent(id)}`)
        }
        const e = outcome.failure
        noteError(ctx, e)
        // Not saved: the draft this text came from is dropped only where a new one keeps it.
        if (e._tag === "EditConflict" && e.conflicts !== undefined && base !== undefined) {
          // Nothing is lost: the text waits on the conflict page, where the person chooses part by part.
          const current = await runCoreOrThrow(deps, getArticle(s.caller, id))
          const kept = { ...form, refusal: { message: e.detail, blocks: [], details: [], conflictWith: current.revision } }
          return keepOrShow(ctx, s, id, fields, kept, problemKindOf(e).status, "merge")
        }
        const refusal = refusalOf(ctx, deps, e)
        if (refusal === null) throw e
        // Post/redirect/get: the refusal and the text as typed wait under an address that reloads,
        // still written against the revision it was opened at: saving it later merges it with
        // whatever was saved since (moved to the newest revision, it would replace those changes).
        const kept = { ...form, refusal }
        await keepOrShow(ctx, s, id, fields, kept, problemKindOf(e).status)
      },
      async (ctx) => {
        const id = ctx.params["id"]
        if (!isId(id)) return
        const fields = await readForm(ctx)
        await keepPendingDraft(ctx, deps, draftOf(id, fields, {
          message: "Your session had expired, so this edit was not saved.",
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
      merge: null,
    })
    await recordWebActivity(ctx, deps, e)
  }
  const isLimit = (e: CoreError): e is RateLimited | Unavailable => e._tag === "RateLimited" || e._tag === "Unavailable"

  /**
   * A preview refused before its form is parsed (its account's share of the sanitiser busy, or
   * the form's turn in the account's rotation) counts against the account's requests a minute, as
   * an API call refused for the same share does: previews are limited like requests. Uncounted,
   * a script holding a session could send previews over and over, each refused for free, and have
   * every one its share admitted sanitised (46 to 68 bodies of 1 MiB in 6 s, against 4 to 11 for
   * the same dry runs over the API, docs/benchmarks.md). Not counted when the browser says the request came
   * from another site's page: a forged request does not spend the person's minute. Answers the
   * refusal to send: the minute's when this count went past it.
   */
  const countRefusedPreview = async (ctx: Ctx, s: Signed, refusal: RateLimited | Unavailable): Promise<RateLimited | Unavailable> => {
    if (sentFromAnotherSite(ctx, deps)) return refusal
    const counted = await runCore(deps, checkRequestLimit(s.caller.accountId))
    return Result.isFailure(counted) && counted.failure._tag === "RateLimited" ? counted.failure : refusal
  }

  router.post(
    "/articles/:id/preview",
    signedIn("POST /articles/{id}/preview", async (ctx, s) => {
      const id = articleId(ctx)
      noteSubject(ctx, { articleId: id })
      // An account that has its share of the sanitiser busy already is refused before its form is read.
      const share = await runCore(deps, HtmlAnalyzer.use((analyzer) => analyzer.admits(s.caller.accountId, ctx.request.length)))
      if (Result.isFailure(share)) return refusePreview(ctx, await countRefusedPreview(ctx, s, share.failure))
      try {
        // Over its requests a minute already: refused before the form is read too (a look, not a
        // count: the preview is counted once its CSRF token is checked, below).
        const window = await runCore(deps, peekRequestLimit(s.caller.accountId))
        if (Result.isSuccess(window) && window.success.remaining <= 0) {
          return refusePreview(ctx, new RateLimitedError({ limit: window.success.limit, retryAfterSeconds: Math.max(1, window.success.resetSeconds) }))
        }
        // A large form waits for its turn in the account's rotation (ownTurn.ts): past its queue,
        // refused like any other limit of the preview.
        const posted = await postedForm(ctx, s.session).then(
          (fields) => ({ fields }),
          (error: unknown) => {
            if (isCoreError(error) && isLimit(error)) return { refused: error }
            throw error
          },
        )
        if ("refused" in posted) return refusePreview(ctx, await countRefusedPreview(ctx, s, posted.refused))
        const { fields } = posted
        // A preview is a request like an API call: it counts against the account's requests a minute.
        const counted = await runCore(deps, checkRequestLimit(s.caller.accountId))
        if (Result.isFailure(counted)) {
          if (counted.failure._tag === "RateLimited") return refusePreview(ctx, counted.failure)
          throw counted.failure
        }
        const base = positiveNumberOf(fields["revision"])
        const reason = (fields["reason"] ?? "").trim()
        const current = await runCoreOrThrow(deps, getArticle(s.caller, id))
        // The same call the save makes, as a dry run: what it answers is what saving will do.
        const outcome = await runCore(
          deps,
          Effect.flatMap(
            decodeInput(
              UpdateArticleBody,
              { title: postedTitle(fields), body: fields["body"] ?? "", ...(reason === "" ? {} : { reason }), ...(base === undefined ? {} : { base_revision: base }) },
              "Edit",
            ),
            (input) => updateArticle(s.caller, id, input, { dryRun: true }),
          ),
        )
        ctx.set("Cache-Control", "no-store")
        ctx.type = "application/json"
        const theirsBy = async (n: number) => `revision ${n} by ${await runCoreOrThrow(deps, whoMade(s.caller, id, n, current.revision))}`
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
            merge: result.merge === undefined ? null : { with: await theirsBy(result.merge.theirs), kept: result.merge.merged_units, conflicts: 0 },
          })
          return
        }
        const e = outcome.failure
        if (e._tag === "NotFound") throw e
        if (isLimit(e)) return refusePreview(ctx, e)
        noteError(ctx, e)
        if (e._tag === "EditConflict" && e.conflicts !== undefined) {
          ctx.body = editPreview({
            titleChanged: e.conflicts.some((c) => c.unit === "title"),
            bodyChanged: true,
            removed: [],
            protectedOk: true,
            protectedCount: extractProtectedBlocks(current.body).length,
            violations: [],
            refused: null,
            merge: { with: await theirsBy(current.revision), kept: 0, conflicts: e.conflicts.length },
          })
          return
        }
        // A refused dry run says why; what sanitising would remove comes from the sanitiser itself
        // (off the event loop, like the edit), unless the body itself was what was refused.
        const sanitized =
          e._tag === "PayloadTooLarge" || e._tag === "InvalidRequest"
            ? Result.fail(e)
            : await runCore(deps, HtmlAnalyzer.use((analyzer) => analyzer.analyze(fields["body"] ?? "", s.caller.accountId)))
        const removed = Result.isSuccess(sanitized) ? sanitized.success.report.removed : []
        if (e._tag === "ProtectedLinkChanged") {
          ctx.body = editPreview({
            titleChanged: postedTitle(fields).trim() !== current.title,
            bodyChanged: true,
            removed,
            protectedOk: false,
            protectedCount: extractProtectedBlocks(current.body).length,
            violations: e.blocks,
            refused: null,
            merge: null,
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
          merge: null,
          refused:
            e._tag === "InvalidRequest"
                ? `Saving will be refused: ${e.errors.map((x) => `${x.path}: ${x.message}`).join("; ") || e.detail}`
                : `Saving will be refused: ${toProblem(e, requestIdOf(ctx), deps.publicUrl).detail}`,
        })
      } finally {
        // A place promised to the form and not taken by the pool is given back at once.
        share.success()
      }
    }),
  )
}
