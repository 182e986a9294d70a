import { type Html, html } from "../html.ts"
import { csrfInput, page } from "../layout.ts"

/**
 * The sign-in page: a plain form with `email` and `password` (works without JavaScript). The email
 * field has the focus, or the password field after a refused attempt (the email is kept), or the
 * email field when the error is about it (`errorField`).
 */
export const signInPage = (input: { csrf: string; email: string; next: string; error: string | null; notice: string | null; errorField?: "email" | "password" }): Html => {
  const onEmail = input.error !== null && input.errorField === "email"
  return page(
    { title: input.error ? "Error: Sign in" : "Sign in", nav: null, account: null, csrf: input.csrf },
    html`<section class="signin card" aria-labelledby="signin-title">
      <h1 id="signin-title">Sign in</h1>
      <p class="muted">Manage your sites' articles, API keys and connected agents.</p>
      ${input.notice ? html`<div class="notice notice-info" role="status"><p>${input.notice}</p></div>` : ""}
      ${input.error ? html`<div class="notice notice-error" role="alert" id="signin-error"><p>${input.error}</p></div>` : ""}
      <form method="post" action="/" class="stack">
        ${csrfInput(input.csrf)}
        <input type="hidden" name="next" value="${input.next}">
        <div>
          <label for="email">Email</label>
          <input type="email" id="email" name="email" value="${input.email}" autocomplete="username" required
            ${input.error ? html`aria-invalid="true" aria-describedby="signin-error"${onEmail ? html` autofocus` : ""}` : html`autofocus`}>
        </div>
        <div>
          <label for="password">Password</label>
          <input type="password" id="password" name="password" autocomplete="current-password" required
            ${input.error && !onEmail ? html`autofocus aria-invalid="true" aria-describedby="signin-error"` : ""}>
        </div>
        <div><button type="submit" class="button">Sign in</button></div>
      </form>
    </section>`,
  )
}
