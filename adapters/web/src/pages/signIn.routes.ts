/** Routes: Sign-in and sign-out (`/`, `/signout`). */
import type Router from "@koa/router"
import { problemKindOf, recordActivity, toProblem, verifyCredentials } from "@content-site/core"
import { clientAddress, noteAccount, notesOf, requestIdOf } from "@content-site/http"
import { Result } from "effect"
import { recordWebActivity, runCore, webCaller } from "../call.ts"
import { FAILED_SIGN_IN } from "../activityWords.ts"
import { type FormFields, readForm } from "../forms.ts"
import { signInPage } from "./signIn.ts"
import { csrfOk, endSession, PRE_CSRF_COOKIE, preSessionCsrf, readSession, signedInAccount, startSession } from "@content-site/http"
import { CsrfRejected, queryOf, redirect, safeNext, send, type PageKit } from "../pageKit.ts"

/** The logged action of a sign-in (a refused one's too). */
const SIGN_IN = "POST / (sign in)"

export const mountSignInRoutes = (router: Router, kit: PageKit): void => {
  const { deps, renderFailure, traced } = kit
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
    const startedAt = Date.now()
    const email = (fields["email"] ?? "").slice(0, 320)
    const next = safeNext(fields["next"])
    // A refused sign-in's code goes to its access line and the refusals metric (guessing shows there).
    const again = (status: number, code: string, message: string, errorField?: "email" | "password") => {
      notesOf(ctx).problemCode = code
      send(ctx, status, signInPage({ csrf: preSessionCsrf(ctx, deps), email, next, error: message, notice: null, ...(errorField ? { errorField } : {}) }))
    }
    if (!csrfOk(ctx, null, fields["_csrf"])) return again(403, "invalid_request", "The sign-in form expired. Please try again.")
    // An empty field is a form to complete, not a wrong password: say which one to fill in.
    if (email.trim() === "") return again(400, "invalid_request", "Enter your email address and your password, then sign in.", "email")
    if ((fields["password"] ?? "") === "") return again(400, "invalid_request", "Enter your password, then sign in.", "password")
    // the credentials' check and the session it starts, in one span when tracing
    const result = await traced("POST / (sign in)", async () => {
      const checked = await runCore(deps, verifyCredentials(email, fields["password"] ?? "", clientAddress(ctx)))
      if (Result.isSuccess(checked)) await startSession(ctx, deps, checked.success.id)
      return checked
    })
    if (Result.isFailure(result)) {
      const e = result.failure
      // A wrong password for an account's email is shown to its owner (when, how often; never the
      // password), as banks do. Not awaited: the answer takes as long whether the email is known or not.
      if (e._tag === "Unauthenticated" && e.attemptedAccountId !== undefined) {
        void deps.runtime
          .runPromise(
            recordActivity(
              { accountId: e.attemptedAccountId, actor: null, channel: "web", requestId: requestIdOf(ctx), action: FAILED_SIGN_IN, startedAt: Date.now() },
              { ok: false, httpStatus: 401, errorCode: "unauthenticated" },
            ),
          )
          .catch(() => undefined)
      }
      if (e._tag === "RateLimited") {
        // Refused for a limit, so still logged (the contract), as the API logs its equivalent: no
        // account is known before the budget is checked, so with none, counted against the address.
        await deps.runtime
          .runPromise(
            recordActivity(
              { accountId: null, actor: null, channel: "web", requestId: requestIdOf(ctx), action: SIGN_IN, startedAt, address: clientAddress(ctx) },
              { ok: false, httpStatus: 429, errorCode: "rate_limited" },
            ),
          )
          .catch(() => undefined)
        ctx.set("Retry-After", String(e.retryAfterSeconds))
        return again(429, "rate_limited", `Too many failed sign-ins from your address. Try again in ${e.retryAfterSeconds} seconds.`)
      }
      return e._tag === "Unauthenticated"
        ? again(401, "unauthenticated", "Wrong email or password. Check both and try again.")
        : again(problemKindOf(e).status, problemKindOf(e).code, toProblem(e, requestIdOf(ctx), deps.publicUrl).detail)
    }
    // the account is known now: its access line names it
    noteAccount(ctx, result.success.id)
    ctx.append("Set-Cookie", `${PRE_CSRF_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0${deps.publicUrl.startsWith("https:") ? "; Secure" : ""}`)
    webCaller(ctx, result.success, SIGN_IN)
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
    await traced("POST /signout", () => endSession(ctx, deps))
    redirect(ctx, "/?signed_out=1")
  })
}
