import { type Html, html } from "../html.ts"
import { csrfInput } from "../layout.ts"

/**
 * The confirmation asked before a risky action when the browser ran no script (with scripts, a
 * dialog asks and the form is sent confirmed): the same form again, confirmed, and a way back.
 */
export const confirmContent = (input: {
  title: string
  message: string
  action: string
  button: string
  csrf: string
  /** The posted fields to send again (a restore's reason). */
  fields: Readonly<Record<string, string>>
  cancel: string
}): Html => html`<section class="card confirm" aria-labelledby="confirm-title">
    <h1 id="confirm-title">${input.title}</h1>
    <p>${input.message}</p>
    <form method="post" action="${input.action}" class="actions-row">
      ${csrfInput(input.csrf)}
      ${Object.entries(input.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
      <input type="hidden" name="confirmed" value="yes">
      <button type="submit" class="button button-danger" autofocus>${input.button}</button>
      <a class="button button-quiet" href="${input.cancel}">Cancel</a>
    </form>
  </section>`
