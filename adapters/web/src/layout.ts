import type { AccountRecord } from "@content-site/core"
import { type Html, html, type Interpolation } from "./html.ts"
import type { Flash } from "@content-site/http"

/** The main navigation entries. */
export type NavKey = "sites" | "activity" | "connect" | null

/** What every page's frame needs. */
export interface PageFrame {
  readonly title: string
  readonly nav: NavKey
  readonly account: AccountRecord | null
  readonly csrf: string
  readonly flash?: Flash | null
  readonly wide?: boolean
  /** The page's path: its main link is the current page there, and only the current section on the pages under it. */
  readonly path?: string
}

const navItem = (key: Exclude<NavKey, null>, href: string, label: string, frame: PageFrame): Html =>
  html`<li><a href="${href}"${frame.nav === key ? html` aria-current="${frame.path === undefined || frame.path === href ? "page" : "true"}"` : ""}>${label}</a></li>`

/** A hidden CSRF input for a form. */
export const csrfInput = (csrf: string): Html => html`<input type="hidden" name="_csrf" value="${csrf}">`

/** A one-time message box. */
export const flashBox = (flash: Flash | null | undefined): Html =>
  flash
    ? html`<div class="notice notice-${flash.kind}" role="${flash.kind === "error" ? "alert" : "status"}">
        <p>${flash.message}</p>
        ${flash.details && flash.details.length > 0 ? html`<ul>${flash.details.map((d) => html`<li>${d}</li>`)}</ul>` : ""}
        ${flash.link ? html`<p><a href="${flash.link.href}">${flash.link.text}</a></p>` : ""}
      </div>`
    : html``

/** The whole HTML document of a page. */
export const page = (frame: PageFrame, content: Interpolation): Html => html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} · Content-Site</title>
<link rel="stylesheet" href="/static/app.css">
<script src="/static/app.js" defer></script>
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
  <div class="bar">
    <a class="brand" href="${frame.account ? "/sites" : "/"}"><span class="brand-mark" aria-hidden="true">CS</span> Content-Site</a>
    ${
      frame.account
        ? html`<nav aria-label="Main">
            <ul>
              ${navItem("sites", "/sites", "Sites", frame)}
              ${navItem("activity", "/activity", "Activity", frame)}
              ${navItem("connect", "/connect", "Connect Site", frame)}
            </ul>
          </nav>
          <form class="signout" method="post" action="/signout">
            ${csrfInput(frame.csrf)}
            <span class="who">${frame.account.name || frame.account.email}</span>
            <button type="submit" class="button button-quiet">Sign out</button>
          </form>`
        : ""
    }
  </div>
</header>
<main id="main" tabindex="-1" class="${frame.wide ? "wide" : ""}">
${flashBox(frame.flash)}
${content}
</main>
<footer class="site-footer"><p>Content-Site · <a href="/api/docs">API reference</a></p></footer>
</body>
</html>`
