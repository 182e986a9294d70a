/** Routes: One revision compared with the current article, and its restore (confirmed first). */
import type Router from "@koa/router"
import { type CoreError, getArticle, getRevision, HtmlAnalyzer, problemKindOf, restoreRevision, toProblem } from "@content-site/core"
import { requestIdOf } from "@content-site/http"
import { Effect, Result } from "effect"
import { noteCommitted, noteError, noteSubject, runCore, runCoreOrThrow } from "../call.ts"
import type { FormFields } from "../forms.ts"
import { RESTORE_OVER, restoreOverOf } from "./article.ts"
import { confirmContent } from "./confirm.ts"
import { revisionContent } from "./revision.ts"
import { setFlash, takeFlash } from "@content-site/http"
import { type Ctx, CSRF_REFUSED, type Signed, articleId, notFound, queryOf, redirect, type PageKit } from "../pageKit.ts"

/**
 * What the revision page says of a restore of revision `n` the core refused (`detail`, its
 * problem's words), with the reason typed. When the database did not answer, not "not restored"
 * (`uncertain`): the change may have committed before the connection dropped. Restoring again
 * makes no second revision: restored, the article is the same as revision `n` and a restore
 * changes nothing; sent again from the first form, it is refused as over an older revision.
 */
export const restoreRefusalOf = (n: number, e: CoreError, detail: string, reason: string): Parameters<typeof revisionContent>[0]["refusal"] & {} =>
  e._tag === "ProtectedLinkChanged"
    ? { message: `Restoring revision ${n} would remove or change protected links that the current article has. They must stay exactly as they are:`, blocks: e.blocks, reason }
    : e._tag === "PreconditionFailed"
      ? { message: `Revision ${e.current} was saved after the page you restored from was opened, so revision ${n} was not restored. It is compared with revision ${e.current} below: restore it again if you still want to.`, blocks: [], reason }
      : e._tag === "Unavailable"
        ? {
            message: `Revision ${n} may or may not have been restored: the service could not confirm it (it is busy or cannot reach its database). Look at the article's revisions to check, or wait a few seconds and restore it again: restoring it again is safe, since once restored the article is the same as revision ${n} and a restore changes nothing.`,
            blocks: [],
            reason,
            uncertain: true,
          }
        : { message: detail, blocks: [], reason }

export const mountRevisionRoutes = (router: Router, kit: PageKit): void => {
  const { deps, findSite, render, signedIn, postedFormOrOfferBack } = kit
  const revisionNumber = (ctx: Ctx): number => {
    const n = ctx.params["n"]
    if (n === undefined || !/^[1-9][0-9]{0,8}$/.test(n)) throw notFound("revision", String(n))
    return Number(n)
  }

  const showRevision = async (ctx: Ctx, s: Signed, id: string, n: number, status: number, refusal: Parameters<typeof revisionContent>[0]["refusal"]) => {
    const [article, revision] = await runCoreOrThrow(deps, Effect.all([getArticle(s.caller, id), getRevision(s.caller, id, n)]))
    noteSubject(ctx, { siteId: article.site_id, articleId: id })
    const siteName = (await findSite(s.caller, article.site_id))?.name ?? null
    // One comparison, with one budget, off the event loop like an edit's sanitising.
    const comparison =
      revision.number === article.revision
        ? null
        : await runCoreOrThrow(
            deps,
            HtmlAnalyzer.use((analyzer) => analyzer.compare(revision.body, article.body, { reading: true, titles: { from: revision.title, to: article.title } }, s.caller.accountId)),
          )
    render(ctx, status, s, "sites", `${refusal ? (refusal.uncertain === true ? "Not confirmed: " : "Not restored: ") : ""}Revision ${n} · ${article.title}`, revisionContent({ article, siteName, revision, comparison, csrf: s.session.csrf, refusal }), await takeFlash(deps, s.session), true)
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
      // (cut at 500 characters, code points as the contract counts them: never half an emoji)
      const reasonOf = (fields: FormFields) => Array.from((fields["reason"] ?? "").trim().slice(0, 1000)).slice(0, 500).join("")
      // A form opened in another session or before the last sign-in: the revision page again,
      // nothing restored, the reason typed offered back under a fresh token.
      const fields = await postedFormOrOfferBack(ctx, s.session, (sent) =>
        showRevision(ctx, s, id, n, CSRF_REFUSED.status, {
          message: `This form was opened in another session or has expired, so revision ${n} was not restored. Your reason is kept below: restore it again if you still want to.`,
          blocks: [],
          reason: reasonOf(sent),
        }),
      )
      if (fields === undefined) return
      const reason = reasonOf(fields)
      const over = restoreOverOf(fields)
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
            fields: { ...(reason === "" ? {} : { reason }), ...(over === undefined ? {} : { [RESTORE_OVER]: String(over) }) },
            cancel: `/articles/${encodeURIComponent(id)}/revisions/${n}`,
          }),
        )
      }
      const outcome = await runCore(deps, restoreRevision(s.caller, id, n, reason === "" ? undefined : reason, { expectedRevisions: over === undefined ? undefined : [over] }))
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
      return showRevision(ctx, s, id, n, problemKindOf(e).status, restoreRefusalOf(n, e, toProblem(e, requestIdOf(ctx), deps.publicUrl).detail, reason))
    }),
  )
}
