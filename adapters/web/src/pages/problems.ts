/**
 * The problem types' pages: each problem's `type` (`{base}/problems/<code>`) is an address a
 * person can open, as RFC 9457 asks of a type URI (section 3.1.1), with what the problem means and
 * what to do about it; `/problems` lists them all.
 */
import { internalProblemKind, problemKinds } from "@content-site/core"
import { type Html, html } from "../html.ts"
import { page } from "../layout.ts"

/** One problem type: the status and title its answers carry, what it means, and what a client does next. */
export interface ProblemDoc {
  readonly code: string
  readonly status: number
  readonly title: string
  readonly meaning: string
  readonly next: string
}

/** What each problem means and what to do, by code: every code the service answers with. */
const EXPLAINED: Readonly<Record<string, { readonly meaning: string; readonly next: string }>> = {
  invalid_request: {
    meaning: "The request could not be read or breaks a rule: malformed JSON, an unknown query parameter, a value out of range, a key not allowed. The `errors` member names each field at fault (`path`) with a sentence (`message`).",
    next: "Correct the fields named in `errors` and send the request again.",
  },
  unauthenticated: {
    meaning: "No valid credential came with the request: the API key is missing, unknown or revoked (REST), or the OAuth access token is missing, expired or revoked (MCP). Too many failed attempts from one address are refused for a minute too.",
    next: "Send `Authorization: Bearer <key>` with a live key (REST), or connect the app again with OAuth (MCP).",
  },
  insufficient_scope: {
    meaning: "The credential is valid but may only read: a read-only API key, or an MCP connection allowed to read only, asked for a change.",
    next: "Use a key with write access, or ask the account's owner to allow the app to read and edit.",
  },
  not_found: {
    meaning: "Nothing is at this address for this account: the id does not exist, belongs to another account, or the path is not one of the API's.",
    next: "Check the id (list the resources to find it) and the path against the OpenAPI document, /api/v1/openapi.json.",
  },
  method_not_allowed: {
    meaning: "The path exists but does not take this HTTP method. The `Allow` header lists the methods it takes.",
    next: "Use one of the methods in `Allow`.",
  },
  edit_conflict: {
    meaning: "Someone changed the article while your edit was on its way, and the change could not be merged with yours: a part both changed differently (then `conflicts` shows base, theirs and yours for each), or another change was being written at the same moment. Nothing was changed.",
    next: "Settle each conflict (or fetch the article again) and send the result with `base_revision` set to the article's current revision.",
  },
  precondition_failed: {
    meaning: "The `If-Match` header names a revision the article is no longer at, or the `If-None-Match` header names the revision it is at (or is `*`). Nothing was changed.",
    next: "Fetch the article again (its `ETag`), re-apply your change, and send it with the new tag; or send `base_revision` to have your edit merged.",
  },
  payload_too_large: {
    meaning: "The request, the body, the image or what it becomes once parsed is over a limit (an article body is at most 1 MiB).",
    next: "Send less: a shorter body, a smaller image.",
  },
  unsupported_media_type: {
    meaning: "The request's `Content-Type` is not one this endpoint reads (JSON for writes, `multipart/form-data` or JSON for a featured image).",
    next: "Send the content type the endpoint documents.",
  },
  unsupported_image: {
    meaning: "The bytes are not an image the service accepts (JPEG, PNG, WebP, GIF or AVIF, judged by decoding them, not by the file's name), or it could not be decoded.",
    next: "Send a real image in one of the accepted formats.",
  },
  protected_link_changed: {
    meaning: "The edit removes, changes or adds a protected link (an element carrying `data-service-protected`): the platform's backlinks stay exactly as they are. `blocks` names each. Nothing was changed.",
    next: "Keep every protected link exactly as it is (moving it is allowed) and send the edit again.",
  },
  edit_not_applicable: {
    meaning: "An edit's `find` does not occur exactly once in the article's current body. `errors` names each edit at fault. Nothing was changed.",
    next: "Fetch the article again, and make each `find` long enough to occur once.",
  },
  idempotency_key_reused: {
    meaning: "The `Idempotency-Key` was used before for a different request (another operation, article or body). Nothing was changed.",
    next: "Use a new key for a new request; send the same request again to get the first answer.",
  },
  unsafe_url: {
    meaning: "The image URL is not one the service fetches: not `https`, or it leads to a private, loopback or otherwise non-public address (redirects included).",
    next: "Use a public `https` URL, or upload the image's bytes.",
  },
  image_fetch_failed: {
    meaning: "The image URL could not be fetched: the server did not answer in time, answered an error, or sent too much.",
    next: "Check the URL, or upload the image's bytes.",
  },
  rate_limited: {
    meaning: "The account made more requests in the minute than its limit (every response's `RateLimit-*` headers count them), or its share of a shared pool (sanitising, image decoding) is busy.",
    next: "Wait the seconds `Retry-After` gives, then send the request again.",
  },
  daily_edit_limit: {
    meaning: "The account's article changes for the day (UTC) are used up; write responses count them down in `Edit-Limit-Remaining`.",
    next: "Wait until midnight UTC (`Retry-After` gives the seconds).",
  },
  internal: {
    meaning: "A fault of the service. No detail is given; the request id identifies it in the service's logs.",
    next: "Try again; if it persists, report the `request_id`.",
  },
  unavailable: {
    meaning: "The service cannot answer now: its database or counters are unreachable, or it is busy. Nothing was half-written; a change whose commit met an outage may be saved with its answer lost.",
    next: "Wait the seconds `Retry-After` gives and send the request again, with the same `Idempotency-Key` (or `If-Match`) for a change, so that it cannot apply twice.",
  },
  request_timeout: {
    meaning: "The request (or its headers) did not arrive in time: the connection was too slow or stalled.",
    next: "Send the request again, whole and promptly.",
  },
  request_header_fields_too_large: {
    meaning: "The request's headers are larger than the server accepts (a very long URL counts among them).",
    next: "Send smaller headers and a shorter URL.",
  },
  expectation_failed: {
    meaning: "The request's `Expect` header asks for something other than `100-continue`.",
    next: "Send the request without that `Expect` header.",
  },
}

/** The codes the service answers with outside the core's errors, with their status and title. */
const HTTP_ONLY = [
  { code: "method_not_allowed", status: 405, title: "Method not allowed" },
  { code: "request_timeout", status: 408, title: "Request timeout" },
  { code: "expectation_failed", status: 417, title: "Expectation failed" },
  { code: "request_header_fields_too_large", status: 431, title: "Request header fields too large" },
] as const

/** Every problem type, in order of status: the core's errors, the defect, and the HTTP layer's own. */
export const PROBLEM_DOCS: ReadonlyArray<ProblemDoc> = [...Object.values(problemKinds), internalProblemKind, ...HTTP_ONLY]
  .map((kind) => ({ code: kind.code, status: kind.status, title: kind.title, ...EXPLAINED[kind.code]! }))
  .sort((a, b) => a.status - b.status || a.code.localeCompare(b.code))

const BY_CODE = new Map(PROBLEM_DOCS.map((doc) => [doc.code, doc]))

/** The doc of a problem code, or undefined. */
export const problemDoc = (code: string): ProblemDoc | undefined => BY_CODE.get(code)

/** Back-quoted words as code, the rest as text. */
const withCode = (text: string): Html => html`${text.split("`").map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : part))}`

/** One problem type's page. */
export const problemPage = (doc: ProblemDoc): Html =>
  page(
    { title: `${doc.title} (${doc.status})`, nav: null, account: null, csrf: "" },
    html`<section class="card" aria-labelledby="problem-title">
      <h1 id="problem-title">${doc.title}</h1>
      <p class="muted">HTTP ${doc.status} · <code>${doc.code}</code> · an RFC 9457 problem (<code>application/problem+json</code>)</p>
      <h2>What it means</h2>
      <p>${withCode(doc.meaning)}</p>
      <h2>What to do</h2>
      <p>${withCode(doc.next)}</p>
      <p><a href="/problems">Every problem type</a> · <a href="/api/docs">API reference</a></p>
    </section>`,
  )

/** The list of every problem type. */
export const problemsPage = (): Html =>
  page(
    { title: "Problem types", nav: null, account: null, csrf: "" },
    html`<section class="card" aria-labelledby="problems-title">
      <h1 id="problems-title">Problem types</h1>
      <p>Every error of the API and the MCP connector is an RFC 9457 problem whose <code>type</code> is one of these addresses, and whose <code>code</code> names it.</p>
      <table>
        <thead><tr><th scope="col">Status</th><th scope="col">Code</th><th scope="col">Title</th></tr></thead>
        <tbody>
          ${PROBLEM_DOCS.map((doc) => html`<tr><td>${doc.status}</td><td><a href="/problems/${doc.code}"><code>${doc.code}</code></a></td><td>${doc.title}</td></tr>`)}
        </tbody>
      </table>
    </section>`,
  )

/** The page of a problem type's address that names none: says so, and links the list (no account is concerned). */
export const unknownProblemPage = (code: string, requestId: string): Html =>
  page(
    { title: "Not found: no such problem type", nav: null, account: null, csrf: "" },
    html`<section class="card" aria-labelledby="error-title">
      <h1 id="error-title">Not found</h1>
      <p>No such problem type: there is no problem type named <code>${code}</code>. Every problem the API and the MCP connector answer with is listed on <a href="/problems">the problem types' page</a>.</p>
      <p class="muted">Error 404 · request id <code>${requestId}</code></p>
    </section>`,
  )
