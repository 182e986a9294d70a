/** Routes: Replacing an article's featured image from the article page. */
import type Router from "@koa/router"
import { type CoreError, replaceFeaturedImage, toProblem } from "@content-site/core"
import { noteIfClientGone, requestIdOf, untilClientLeaves } from "@content-site/http"
import { Result } from "effect"
import { noteCommitted, noteError, noteOutcome, noteSubject, runCore } from "../call.ts"
import { FormError } from "../forms.ts"
import { csrfOk, setFlash } from "@content-site/http"
import { CsrfRejected, articleId, redirect, type PageKit } from "../pageKit.ts"

/**
 * What the page says of an upload the core refused (`detail`, its problem's words). Not "not
 * saved" when the database did not answer: the change may have committed before the connection
 * dropped. Every upload stores a new file under a new address, so uploading the same image again
 * makes one more revision when the first was saved: the person is told to look first.
 */
export const imageRefusalMessage = (e: CoreError, detail: string): string =>
  e._tag === "Unavailable"
    ? "The image may or may not have been saved: the service could not confirm it (it is busy or cannot reach its database). Look at the article's featured image and its revisions before uploading again: if it was saved, uploading again makes one more revision with the same image."
    : `Image not saved: ${detail}`

export const mountArticleImageRoutes = (router: Router, kit: PageKit): void => {
  const { deps, upload, signedIn } = kit
  router.post(
    "/articles/:id/image",
    signedIn("POST /articles/{id}/image", async (ctx, s) => {
      const id = articleId(ctx)
      noteSubject(ctx, { articleId: id })
      if (!ctx.is("multipart/form-data")) throw new FormError(415, "The image must be sent as multipart/form-data.")
      const back = `/articles/${encodeURIComponent(id)}`
      try {
        await untilClientLeaves(ctx, upload.single("image")(ctx as never, async () => {}))
      } catch (error) {
        // The person left mid-upload, or the server answered on the socket (the body past
        // REQUEST_TIMEOUT_MS: 408): nobody is left to answer or to tell on the next page.
        if (noteIfClientGone(ctx, error)) return
        // A form that could not be read has only the fields read before it broke off (the page's
        // form sends `_csrf` first): without a valid token among them it is refused like any POST
        // without one, and nothing is said about its upload.
        const readSoFar = ((ctx.req as { body?: unknown }).body ?? {}) as Record<string, unknown>
        if (!csrfOk(ctx, s.session, readSoFar["_csrf"])) throw new CsrfRejected()
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
        // Nothing to upload is a refusal like any other: logged with its code, never as done.
        noteOutcome(ctx, 400, "invalid_request")
        await setFlash(deps, s.session, { kind: "error", message: "Choose an image file to upload." })
        return redirect(ctx, back)
      }
      // The form offers the current text: what it sends is the new image's, emptied too (none sent: kept).
      // One over 500 characters (code points, as the contract counts them) is refused as the API refuses it, never cut unseen.
      const alt = typeof fields["alt"] === "string" ? fields["alt"].trim() : undefined
      const outcome = await runCore(
        deps,
        replaceFeaturedImage(s.caller, id, { kind: "bytes", bytes: new Uint8Array(file.buffer) }, alt),
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
      await setFlash(deps, s.session, { kind: "error", message: imageRefusalMessage(e, toProblem(e, requestIdOf(ctx), deps.publicUrl).detail) })
      redirect(ctx, back)
    }),
  )
}
