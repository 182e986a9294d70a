import { randomBytes } from "node:crypto"

/** A rendered page with the Content-Security-Policy it needs. */
export interface Page {
  readonly html: string
  readonly csp: string
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }
const esc = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c)

// The web pages' colours, header and brand mark, so the sign-in an agent opens is plainly this service's.
const STYLE = `
:root{--fg:#1c2330;--muted:#5a6475;--bg:#f6f7f9;--card:#fff;--line:#d9dee6;--accent:#1d4ed8;--danger:#b42318}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
.site-header{background:#111827;color:#fff}
.site-header .bar{max-width:1180px;margin:0 auto;padding:.6rem 1.25rem;display:flex;gap:1.25rem;align-items:center}
.brand{color:#fff;font-weight:700;display:flex;gap:.5rem;align-items:center}
.brand-mark{background:var(--accent);border-radius:6px;padding:.1rem .35rem;font-size:.8rem;letter-spacing:.05em}
main{max-width:28rem;margin:8vh auto;padding:2rem;background:var(--card);border:1px solid var(--line);border-radius:12px}
h1{font-size:1.4rem;margin:0 0 1rem}
p{margin:.5rem 0}
.muted{color:var(--muted);font-size:.9rem}
label{display:block;margin:1rem 0 .25rem;font-weight:600}
input[type=email],input[type=password]{width:100%;padding:.6rem .7rem;font:inherit;color:inherit;background:transparent;border:1px solid var(--line);border-radius:8px}
input:focus-visible,button:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.actions{display:flex;gap:.75rem;margin-top:1.5rem}
button{flex:1;padding:.65rem 1rem;font:inherit;font-weight:600;border-radius:8px;border:1px solid var(--line);background:transparent;color:inherit;cursor:pointer}
button.primary{background:var(--accent);border-color:var(--accent);color:#fff}
.error{color:var(--danger);font-weight:600}
ul{padding-left:1.2rem}
code{font-size:.9em;overflow-wrap:anywhere}
strong,p{overflow-wrap:anywhere}
fieldset{border:1px solid var(--line);border-radius:8px;margin:1rem 0 .5rem;padding:.5rem .9rem .75rem}
legend{font-weight:600;padding:0 .25rem}
.choice{display:flex;gap:.5rem;align-items:baseline;font-weight:400;margin:.6rem 0 0}
a{color:var(--accent)}
@media (max-width:30rem){main{margin:0;border-radius:0;border-width:0 0 1px;padding:1.25rem}}
`

const layout = (title: string, body: string, formTargets: ReadonlyArray<string>): Page => {
  const nonce = randomBytes(16).toString("base64")
  const formAction = ["'self'", ...formTargets].join(" ")
  return {
    csp: `default-src 'none'; style-src 'nonce-${nonce}'; img-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    html: `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${esc(title)} · Content-Site</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<header class="site-header"><div class="bar"><span class="brand"><span class="brand-mark" aria-hidden="true">CS</span> Content-Site</span></div></header>
<main>
${body}
</main>
</body>
</html>`,
  }
}

/** Where a form may send the browser next: our own pages, then the client's redirect URI. */
const redirectSource = (redirectUri: string | undefined): ReadonlyArray<string> => {
  if (redirectUri === undefined) return []
  try {
    const url = new URL(redirectUri)
    return url.protocol === "http:" || url.protocol === "https:" ? [url.origin] : [url.protocol]
  } catch {
    return []
  }
}

/** What the pages say about the connecting client. */
export interface ClientView {
  /** The name the client gave itself: nothing verifies it. */
  readonly name: string
  readonly redirectUri: string | undefined
  readonly redirectHost: string
  /**
   * The host that publishes the client's metadata document (its client_id is that document's
   * URL): the one thing about such a client its own text cannot forge. Unset for a registered client.
   */
  readonly publishedBy?: string | undefined
}

/** "Name" and, for a client described by a document, the host that publishes it. */
const clientTitle = (client: ClientView): string =>
  `<strong>${esc(client.name)}</strong>${client.publishedBy !== undefined ? ` <span class="muted">(described by <code>${esc(client.publishedBy)}</code>)</span>` : ""}`

/** The sign-in page of an OAuth interaction (or "Continue as" when a web session exists). */
export const signInPage = (options: {
  readonly uid: string
  readonly csrf: string
  readonly client: ClientView
  readonly error?: string | undefined
  readonly email?: string | undefined
  readonly signedInEmail?: string | undefined
}): Page => {
  const action = `/oauth/interaction/${encodeURIComponent(options.uid)}/login`
  const intro = `<p>${clientTitle(options.client)} (${esc(options.client.redirectHost)}) wants to connect to your Content-Site account. Sign in to continue.</p>`
  const error = options.error ? `<p class="error" role="alert" id="signin-error">${esc(options.error)}</p>` : ""
  // A refused attempt marks both fields, each described by the message (read with the field).
  const invalid = options.error ? ' aria-invalid="true" aria-describedby="signin-error"' : ""
  const continueForm = options.signedInEmail
    ? `<form method="post" action="${action}">
<input type="hidden" name="csrf" value="${esc(options.csrf)}">
<input type="hidden" name="continue" value="session">
<div class="actions"><button class="primary" type="submit">Continue as ${esc(options.signedInEmail)}</button></div>
</form>
<p class="muted">Or sign in with another account:</p>`
    : ""
  const form = `<form method="post" action="${action}">
<input type="hidden" name="csrf" value="${esc(options.csrf)}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${esc(options.email ?? "")}"${invalid}${options.error || options.signedInEmail ? "" : " autofocus"}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${invalid}${options.error ? " autofocus" : ""}>
<div class="actions"><button class="primary" type="submit">Sign in</button></div>
</form>`
  return layout(options.error ? "Error: Sign in" : "Sign in", `<h1>Sign in</h1>\n${intro}\n${error}\n${continueForm}\n${form}`, redirectSource(options.client.redirectUri))
}

/**
 * The consent page: names the client, its redirect host and the account; what it may do; Allow
 * and Deny. An app asking for full access may be given it (checked) or reading only; an app
 * asking for reading only is told it gets exactly that.
 */
export const consentPage = (options: {
  readonly uid: string
  readonly csrf: string
  readonly client: ClientView
  readonly accountEmail: string
  /** The app asked for full access (`mcp`, or no scope), so the owner picks full or read-only. */
  readonly fullAccessAsked: boolean
}): Page => {
  const action = `/oauth/interaction/${encodeURIComponent(options.uid)}/confirm`
  const access = options.fullAccessAsked
    ? `<fieldset>
<legend>It will be able to:</legend>
<label class="choice"><input type="radio" name="access" value="write" checked> <span><strong>Read and edit</strong>: read your websites, articles, backlinks and period summaries, and edit article titles and bodies and replace featured images</span></label>
<label class="choice"><input type="radio" name="access" value="read"> <span><strong>Read only</strong>: read your websites, articles, backlinks and period summaries; every edit it tries is refused</span></label>
</fieldset>
<p class="muted">Edits never remove protected links, and every change is a revision you can restore.</p>`
    : `<p>It asks for read-only access. It will be able to read your websites, articles, backlinks and period summaries; every edit it tries is refused.</p>`
  const body = `<h1>Allow access?</h1>
<p>${clientTitle(options.client)} wants to use your Content-Site account <strong>${esc(options.accountEmail)}</strong>.</p>
<p class="muted">After you allow it, it will be sent back to <code>${esc(options.client.redirectHost)}</code>.</p>
<form method="post" action="${action}">
<input type="hidden" name="csrf" value="${esc(options.csrf)}">
${access}
<p class="muted">You can disconnect it at any time on the <a href="/connect" target="_blank" rel="noopener">Connect Site</a> page of Content-Site (it opens in a new tab, so this page stays open).</p>
<div class="actions">
<button class="primary" type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</div>
</form>`
  return layout("Allow access", body, redirectSource(options.client.redirectUri))
}

/** A plain error page (expired interaction, bad request); `next`, what the person can do. */
export const errorPage = (title: string, detail: string, next = "Start the connection again from your app.", back?: { readonly href: string; readonly host: string }): Page =>
  layout(
    "Error",
    `<h1>Something went wrong</h1>\n<p class="error" role="alert">${esc(title)}</p>\n<p>${esc(detail)}</p>\n<p class="muted">${esc(next)}</p>` +
      (back === undefined ? "" : `\n<p><a href="${esc(back.href)}" rel="noreferrer">Return to the app at ${esc(back.host)}</a></p>`),
    [],
  )
