/**
 * The web pages of the Content-Site service: sign-in, sites, articles with revisions, diff and
 * restore, the activity log and Connect Site, server-rendered on Koa over the core use cases.
 */
export { mountWeb, PAGE_CSP } from "./mountWeb.ts"
export { signedInAccount, SESSION_COOKIE, SESSION_MODEL } from "@content-site/http"
export { html, raw, escapeHtml, type Html } from "./html.ts"
