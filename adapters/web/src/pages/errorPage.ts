import type { AccountRecord } from "@content-site/core"
import { type Html, html } from "../html.ts"
import { page } from "../layout.ts"

/** A text a person typed in the form whose post failed, shown back to be copied, with its field's label. */
export interface TypedText {
  readonly label: string
  readonly text: string
}

/**
 * A page for a failed request: what happened, and the request id for support. `typed`: what the
 * person wrote in the form that failed, when it could not be kept as a draft (the database away):
 * shown back, read-only, to copy, so that a save that failed loses nothing the person typed. Not
 * called "not saved": the database may have taken the change before the connection dropped.
 */
export const errorPage = (input: {
  status: number
  title: string
  message: string
  requestId: string
  account: AccountRecord | null
  csrf: string
  typed?: ReadonlyArray<TypedText> | undefined
}): Html => {
  const typed = (input.typed ?? []).filter((t) => t.text !== "")
  return page(
    { title: input.title, nav: null, account: input.account, csrf: input.csrf },
    html`<section class="card" aria-labelledby="error-title">
      <h1 id="error-title">${input.title}</h1>
      <p>${input.message}</p>
      ${typed.length === 0
        ? ""
        : html`<h2 id="typed-title">Your text</h2>
          <p id="typed-hint">It may or may not have been saved (the database did not answer, perhaps after it took the change), and it could not be kept as a draft, so it is on this page only: copy it before you leave or reload. Once the service answers, open the article to see whether it was saved, and save it again if not: saving an edit again is safe, an edit found saved already is not saved twice.</p>
          ${typed.map((t, i) => html`<label for="typed-${i}">${t.label}</label>
          <textarea id="typed-${i}" class="code" rows="${t.text.length > 200 ? 12 : 2}" readonly aria-describedby="typed-hint" spellcheck="false">
${t.text}</textarea>`)}`}
      <p class="muted">Error ${input.status} · request id <code>${input.requestId}</code></p>
      <p><a class="button button-quiet" href="${input.account ? "/sites" : "/"}">${input.account ? "Back to your sites" : "Sign in"}</a></p>
    </section>`,
  )
}
