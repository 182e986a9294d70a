import type { AccountRecord } from "@content-site/core"
import { type Html, html } from "../html.ts"
import { page } from "../layout.ts"

/** A page for a failed request: what happened, and the request id for support. */
export const errorPage = (input: {
  status: number
  title: string
  message: string
  requestId: string
  account: AccountRecord | null
  csrf: string
}): Html =>
  page(
    { title: input.title, nav: null, account: input.account, csrf: input.csrf },
    html`<section class="card" aria-labelledby="error-title">
      <h1 id="error-title">${input.title}</h1>
      <p>${input.message}</p>
      <p class="muted">Error ${input.status} · request id <code>${input.requestId}</code></p>
      <p><a class="button button-quiet" href="${input.account ? "/sites" : "/"}">${input.account ? "Back to your sites" : "Sign in"}</a></p>
    </section>`,
  )
