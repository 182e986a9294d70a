/**
 * Every REST operation of the contract in one table (path, schemas, headers, problems, handler).
 * Longer than 300 lines on purpose: the table is the API's index, read and reviewed as a whole,
 * and the OpenAPI document, routing and the pipeline are all generated from it.
 */
import {
  ActivityPage,
  Article,
  ArticlePage,
  BacklinkPage,
  type Caller,
  type CoreError,
  InvalidRequest,
  type CoreServices,
  decodeInput,
  DiffQuery,
  diffRevisions,
  EditArticleBody,
  editArticle,
  FeaturedImageResult,
  FeaturedImageUrlBody,
  getArticle,
  getRevision,
  getStats,
  HtmlAnalyzer,
  ListActivityQuery,
  listActivity,
  ListArticlesQuery,
  listArticles,
  ListBacklinksQuery,
  listBacklinks,
  ListRevisionsQuery,
  listRevisions,
  ListSitesQuery,
  listSites,
  PeriodSummary,
  replaceFeaturedImage,
  RestoreRevisionBody,
  RestoreRevisionResult,
  restoreRevision,
  Revision,
  RevisionDiff,
  RevisionPage,
  SearchArticlesQuery,
  searchArticles,
  SearchPage,
  StatsQuery,
  UpdateArticleBody,
  UpdateArticleQuery,
  UpdateArticleResult,
  updateArticle,
  WebsitePage,
} from "@content-site/core"
import { createHash } from "node:crypto"
import { type Effect, Schema } from "effect"
import type { ParameterizedContext } from "koa"
import type { AppRuntime } from "@content-site/http"
import { runEffect } from "@content-site/http"
import { readFeaturedImage } from "./featuredImage.ts"
import { decodeNow, decodePathId, decodeQuery, decodeRevisionNumber, etagOf, expectedRevisionsOf, readJson, unexpectedRevisionsOf } from "./requestParts.ts"

/**
 * The `If-Match` part of a write's idempotency fingerprint, in the shape it had when `If-Match`
 * named one revision (a number, or null without one), so that a key used before If-Match took a
 * list still names the same request; only a list of several (or none) is written as the list.
 */
const preconditionPart = (revisions: ReadonlyArray<number> | undefined): number | ReadonlyArray<number> | null =>
  revisions === undefined ? null : revisions.length === 1 ? revisions[0]! : revisions

/**
 * A write's preconditions as the request states them: `If-Match` (the revisions it may be at),
 * then `If-None-Match` (the revisions, or `*`, it may not be at), each a 400 when malformed.
 */
const preconditionsOf = (call: Call, articleId: string) => ({
  expectedRevisions: expectedRevisionsOf(call.ctx.get("If-Match") || undefined, articleId),
  unexpectedRevisions: unexpectedRevisionsOf(call.ctx.get("If-None-Match") || undefined, articleId),
})

/**
 * The preconditions' part of a write's idempotency fingerprint: If-Match as it always was, and
 * If-None-Match only when sent, so that a key used before it was read still names the same request.
 */
const preconditionParts = (preconditions: ReturnType<typeof preconditionsOf>) => ({
  expectedRevision: preconditionPart(preconditions.expectedRevisions),
  ...(preconditions.unexpectedRevisions === undefined ? {} : { unexpectedRevisions: preconditions.unexpectedRevisions }),
})

/** Operations without query parameters still refuse unknown ones. */
const emptyQuery = Schema.Struct({})

/** Largest JSON body of `PUT /articles/{id}`: a 1 MiB body, JSON-escaped (even `\uXXXX` for every character), plus room for title and reason. */
export const MAX_UPDATE_JSON_BYTES = 3 * 1024 * 1024 + 64 * 1024
/** Largest JSON body of `POST /articles/{id}/featured-image`. */
export const MAX_IMAGE_URL_JSON_BYTES = 16 * 1024
/** Largest JSON body of `PATCH /articles/{id}`: like a PUT (finds and replaces together stay within it). */
export const MAX_EDIT_JSON_BYTES = MAX_UPDATE_JSON_BYTES
/** Largest JSON body of a restore (`{ reason }`). */
export const MAX_RESTORE_JSON_BYTES = 16 * 1024

/** One call of an operation, after authentication and the rate limit. */
export interface Call {
  readonly ctx: ParameterizedContext
  /** The caller; once `claim` holds an idempotency key, with it (the change marks the key applied). */
  caller: Caller
  readonly runtime: AppRuntime
  /** Path ids as decoded (site/article) for the activity entry. */
  readonly ids: { siteId: string | null; articleId: string | null }
  /**
   * Called by a write once its request is decoded, before it changes anything, with what makes
   * it this request: with an `Idempotency-Key`, claims the key (or ends the call with the first
   * answer again, or refuses a reused key); without one, does nothing. A dry run says so: its
   * answer is not kept, a retry runs it again.
   */
  readonly claim: (parts: unknown, options?: { readonly dryRun?: boolean }) => Promise<void>
}

/** What an operation answers: the value (encoded with the operation's response schema) and headers. */
export interface Reply {
  readonly value: unknown
  readonly headers?: Record<string, string>
  /** Edits left today (write operations): sent as Edit-Limit-Remaining. */
  readonly editsRemaining?: number
  /** A change was committed: its activity entry was written in the same transaction. */
  readonly committed?: boolean
}

/** A path parameter as documented. */
export interface PathParam {
  readonly name: string
  readonly description: string
  readonly kind: "id" | "revision"
  /** An example value of its kind, for the OpenAPI document (a site's id for a site, an article's for an article). */
  readonly example?: string
}

/** One REST operation: everything routing, the pipeline and the OpenAPI document need. */
export interface Operation {
  readonly operationId: string
  readonly method: "GET" | "PUT" | "PATCH" | "POST"
  /** The contract path under /api/v1, e.g. `/articles/{id}`; also the logged action. */
  readonly path: string
  readonly tag: string
  readonly summary: string
  readonly description: string
  readonly pathParams: ReadonlyArray<PathParam>
  readonly query?: Schema.Top
  readonly body?: { readonly json?: Schema.Top; readonly multipart?: boolean; readonly optional?: boolean }
  readonly response: Schema.Top
  readonly paginated: boolean
  readonly write: boolean
  /** Responds with an ETag header (single article answers). */
  readonly etag: boolean
  /** Accepts If-Match. */
  readonly ifMatch: boolean
  /** Accepts Idempotency-Key (the writes). */
  readonly idempotent?: boolean
  /** Answers `Prefer: return=minimal` with the article without its body (the writes that answer an article). */
  readonly minimal?: boolean
  /** The domain errors this operation can answer with (besides 401/429/500/503, common to all). */
  readonly problems: ReadonlyArray<CoreError["_tag"]>
  readonly handle: (call: Call) => Promise<Reply>
}

const run = <A, E extends CoreError>(call: Call, effect: Effect.Effect<A, E, CoreServices>) => runEffect(call.runtime, effect)

/**
 * Runs a write holding the place its account's share of the sanitiser promised its body (an
 * account with its share busy is refused, 429, before the body is read); a place the pool did
 * not take is given back when the write ends, however it ends.
 */
const holdingShare = async (call: Call, length: number | undefined, write: () => Promise<Reply>): Promise<Reply> => {
  const release = await run(call, HtmlAnalyzer.use((analyzer) => analyzer.admits(call.caller.accountId, length)))
  try {
    return await write()
  } finally {
    release()
  }
}

/** The answer of a write that answers an article: its ETag, the edits left today and whether it committed (and its site, for the activity entry). */
const articleWritten = (
  call: Call,
  outcome: {
    readonly result: { readonly article: { readonly id: string; readonly site_id: string; readonly revision: number }; readonly revision: unknown }
    readonly editsRemaining: number
  },
): Reply => {
  const { article } = outcome.result
  call.ids.siteId = article.site_id
  return { value: outcome.result, editsRemaining: outcome.editsRemaining, committed: outcome.result.revision !== null, headers: { ETag: etagOf(article.id, article.revision) } }
}

const siteParam: PathParam = { name: "id", description: "The website's id.", kind: "id", example: "site_1" }
const articleParam: PathParam = { name: "id", description: "The article's id.", kind: "id", example: "art_1" }
const revisionParam: PathParam = { name: "number", description: "The revision number (1, 2, ...).", kind: "revision" }

const siteId = (call: Call): string => {
  const id = decodePathId(call.ctx.params.id, "site")
  call.ids.siteId = id
  return id
}
const articleId = (call: Call): string => {
  const id = decodePathId(call.ctx.params.id, "article")
  call.ids.articleId = id
  return id
}

const listProblems: ReadonlyArray<CoreError["_tag"]> = ["InvalidRequest", "NotFound"]

/** Every operation of the REST API, in the order of the documentation. */
export const operations: ReadonlyArray<Operation> = [
  {
    operationId: "listSites",
    method: "GET",
    path: "/sites",
    tag: "Websites",
    summary: "List websites",
    description: "The account's websites, by name then id.",
    pathParams: [],
    query: ListSitesQuery,
    response: WebsitePage,
    paginated: true,
    write: false,
    etag: false,
    ifMatch: false,
    problems: ["InvalidRequest"],
    handle: async (call) => ({ value: await run(call, listSites(call.caller, decodeQuery(call.ctx, ListSitesQuery))) }),
  },
  {
    operationId: "listArticles",
    method: "GET",
    path: "/sites/{id}/articles",
    tag: "Articles",
    summary: "List a website's articles",
    description:
      "Articles of one website, newest `published_at` first then by id; filter by an inclusive date range and status. With `q` (the search of `GET /search`) only the articles that match it, best first. List items never carry the body.",
    pathParams: [siteParam],
    query: ListArticlesQuery,
    response: ArticlePage,
    paginated: true,
    write: false,
    etag: false,
    ifMatch: false,
    problems: listProblems,
    handle: async (call) => {
      const id = siteId(call)
      return { value: await run(call, listArticles(call.caller, id, decodeQuery(call.ctx, ListArticlesQuery))) }
    },
  },
  {
    operationId: "searchArticles",
    method: "GET",
    path: "/search",
    tag: "Articles",
    summary: "Search the account's articles",
    description:
      'Full-text search over the title, target keyword and body text (tags left out) of every article of the account, or of one website (`site_id`). `q` is web-search syntax: words (all must match), `"a phrase"`, `OR`, `-word`; case and accents are ignored. Best first: an article whose title holds any term of the query (not a `-` one) above one whose match is in the body alone, then by relevance; ties by `published_at` descending, then id. Each item is the article as listed plus `snippet`: plain text of at most 300 characters around the best match, HTML-escaped, each match in `<mark>`. Filters compose (`status`, `from`/`to` on the publication date). An edit answered is found by its new words at once. The first 200 000 characters of a body are searched.',
    pathParams: [],
    query: SearchArticlesQuery,
    response: SearchPage,
    paginated: true,
    write: false,
    etag: false,
    ifMatch: false,
    problems: listProblems,
    handle: async (call) => {
      const query = decodeQuery(call.ctx, SearchArticlesQuery)
      if (query.site_id !== undefined) call.ids.siteId = query.site_id
      return { value: await run(call, searchArticles(call.caller, query)) }
    },
  },
  {
    operationId: "getArticle",
    method: "GET",
    path: "/articles/{id}",
    tag: "Articles",
    summary: "Get an article",
    description:
      "One article with its full HTML body. Elements carrying `data-service-protected` are inserted backlinks or internal links; edits must keep them unchanged. The `ETag` header names the current revision for `If-Match`.",
    pathParams: [articleParam],
    response: Article,
    paginated: false,
    write: false,
    etag: true,
    ifMatch: false,
    problems: ["InvalidRequest", "NotFound"],
    handle: async (call) => {
      const id = articleId(call)
      decodeQuery(call.ctx, emptyQuery)
      const article = await run(call, getArticle(call.caller, id))
      call.ids.siteId = article.site_id
      return { value: article, headers: { ETag: etagOf(article.id, article.revision) } }
    },
  },
  {
    operationId: "updateArticle",
    method: "PUT",
    path: "/articles/{id}",
    tag: "Articles",
    summary: "Edit an article's title and/or body",
    description:
      "JSON `{ title?, body?, reason? }` with at least one of `title`, `body`; any other key is a 400 naming it. The body is sanitised like the editor does and the response says what was removed. Every protected block of the current body must survive unchanged (moving is fine), otherwise 422 `protected_link_changed` lists each offending block. `If-Match` with the article's ETag makes the edit conditional (412 when it changed; any tag of a list may match; a weak tag never does; `*` means no condition; a value that is not an entity tag is a 400). `?dry_run=true` runs every check and writes nothing. An edit identical to the current article creates no revision (`revision: null`) and counts no edit. `base_revision` (the revision the edit was written against) makes a change made since by someone else merge with yours instead of being erased: block by block, each block only one side changed takes that side, and the answer's `merge` says what was kept; blocks (or the title) both changed differently are a 409 `edit_conflict` whose `conflicts` give base, theirs and mine of each, and nothing is written. `base_revision` with `If-Match` is a 400.",
    pathParams: [articleParam],
    query: UpdateArticleQuery,
    body: { json: UpdateArticleBody },
    response: UpdateArticleResult,
    minimal: true,
    paginated: false,
    write: true,
    etag: true,
    ifMatch: true,
    idempotent: true,
    problems: [
      "InvalidRequest",
      "InsufficientScope",
      "NotFound",
      "EditConflict",
      "PreconditionFailed",
      "PayloadTooLarge",
      "UnsupportedMediaType",
      "ProtectedLinkChanged",
      "IdempotencyKeyReused",
      "DailyEditLimit",
    ],
    handle: async (call) => {
      const id = articleId(call)
      const query = decodeQuery(call.ctx, UpdateArticleQuery)
      const preconditions = preconditionsOf(call, id)
      // An account that has its share of the sanitiser busy already is refused before its body is read.
      return await holdingShare(call, call.ctx.request.length, async () => {
        const json = await readJson(call.ctx, MAX_UPDATE_JSON_BYTES)
        const input = decodeNow(decodeInput(UpdateArticleBody, json, "Request body"))
        if (input.base_revision !== undefined && call.ctx.get("If-Match") !== "") {
          throw new InvalidRequest({
            detail: "base_revision and If-Match cannot be sent together: base_revision merges with newer changes, If-Match refuses them. Send one.",
            errors: [{ path: "base_revision", message: "Not together with If-Match" }],
          })
        }
        const dryRun = query.dry_run === "true"
        await call.claim({ id, input, dryRun, ...preconditionParts(preconditions) }, { dryRun })
        const outcome = await run(call, updateArticle(call.caller, id, input, { dryRun, ...preconditions }))
        return articleWritten(call, outcome)
      })
    },
  },
  {
    operationId: "editArticle",
    method: "PATCH",
    path: "/articles/{id}",
    tag: "Articles",
    summary: "Edit parts of an article's body (find and replace) and/or its title",
    description:
      "JSON `{ edits?: [{ find, replace }], title?, reason? }` with a non-empty `edits` or a `title`. Each `find` is matched in the current body exactly as `GET` serves it and must occur there exactly once; the edits apply in order, each on the result of the one before. A `find` found 0 or 2+ times is a 422 `edit_not_applicable` whose `errors` name each such edit (`edits/0/find`) with its `count`: 0, or 2 for \"2 or more\" (the search is linear and stops at the second occurrence). The result then goes through everything a `PUT` does: sanitising, protected blocks (422 `protected_link_changed`), `If-Match` (412), `?dry_run=true`, the daily edit limit, a new revision. What a `PUT` body refuses the edits may not bring: a NUL or an unpaired surrogate in a `find` or `replace` is a 400 naming the edit (`edits/0/replace`), and edits that make the body larger than 1 MiB are the 400 a `PUT` body over 1 MiB gets. Without `If-Match` the edits are made on the newest body: a change made by someone else meanwhile is never overwritten. Send a few hundred bytes instead of the whole body.",
    pathParams: [articleParam],
    query: UpdateArticleQuery,
    body: { json: EditArticleBody },
    response: UpdateArticleResult,
    minimal: true,
    paginated: false,
    write: true,
    etag: true,
    ifMatch: true,
    idempotent: true,
    problems: [
      "InvalidRequest",
      "InsufficientScope",
      "NotFound",
      "EditConflict",
      "PreconditionFailed",
      "PayloadTooLarge",
      "UnsupportedMediaType",
      "EditNotApplicable",
      "ProtectedLinkChanged",
      "IdempotencyKeyReused",
      "DailyEditLimit",
    ],
    handle: async (call) => {
      const id = articleId(call)
      const query = decodeQuery(call.ctx, UpdateArticleQuery)
      const preconditions = preconditionsOf(call, id)
      // The edited body's size is not the request's: any PATCH waits for the account's share.
      return await holdingShare(call, undefined, async () => {
        const json = await readJson(call.ctx, MAX_EDIT_JSON_BYTES)
        const input = decodeNow(decodeInput(EditArticleBody, json, "Request body"))
        const dryRun = query.dry_run === "true"
        await call.claim({ id, input, dryRun, ...preconditionParts(preconditions) }, { dryRun })
        const outcome = await run(call, editArticle(call.caller, id, input, { dryRun, ...preconditions }))
        return articleWritten(call, outcome)
      })
    },
  },
  {
    operationId: "replaceFeaturedImage",
    method: "POST",
    path: "/articles/{id}/featured-image",
    tag: "Articles",
    summary: "Replace an article's featured image",
    description:
      "Either `multipart/form-data` with the file in field `image` (and optionally `alt`), or JSON `{ url, alt? }` with a public https URL. Accepted: JPEG, PNG, WebP, GIF, AVIF, judged by decoding the bytes; at most 10 MiB and 8000 px a side; SVG never. The image is re-encoded, stored by the service and served from `/media/...`; the change is a revision like any other.",
    pathParams: [articleParam],
    body: { json: FeaturedImageUrlBody, multipart: true },
    response: FeaturedImageResult,
    minimal: true,
    paginated: false,
    write: true,
    etag: true,
    ifMatch: true,
    idempotent: true,
    problems: [
      "InvalidRequest",
      "InsufficientScope",
      "NotFound",
      "EditConflict",
      "PreconditionFailed",
      "PayloadTooLarge",
      "UnsupportedMediaType",
      "UnsupportedImage",
      "UnsafeUrl",
      "ImageFetchFailed",
      "IdempotencyKeyReused",
      "DailyEditLimit",
    ],
    handle: async (call) => {
      const id = articleId(call)
      decodeQuery(call.ctx, emptyQuery)
      const preconditions = preconditionsOf(call, id)
      const { source, alt } = await readFeaturedImage(call.ctx, MAX_IMAGE_URL_JSON_BYTES)
      await call.claim({
        id,
        source: source.kind === "url" ? { url: source.url } : { sha256: createHash("sha256").update(source.bytes).digest("hex") },
        alt: alt ?? null,
        ...preconditionParts(preconditions),
      })
      const outcome = await run(call, replaceFeaturedImage(call.caller, id, source, alt, preconditions))
      return articleWritten(call, outcome)
    },
  },
  {
    operationId: "listRevisions",
    method: "GET",
    path: "/articles/{id}/revisions",
    tag: "Revisions",
    summary: "List an article's revisions",
    description: "Every stored version of the article, newest first, without bodies.",
    pathParams: [articleParam],
    query: ListRevisionsQuery,
    response: RevisionPage,
    paginated: true,
    write: false,
    etag: false,
    ifMatch: false,
    problems: listProblems,
    handle: async (call) => {
      const id = articleId(call)
      return { value: await run(call, listRevisions(call.caller, id, decodeQuery(call.ctx, ListRevisionsQuery))) }
    },
  },
  {
    operationId: "getRevision",
    method: "GET",
    path: "/articles/{id}/revisions/{number}",
    tag: "Revisions",
    summary: "Get one revision with its body",
    description: "One stored version of the article, with its body.",
    pathParams: [articleParam, revisionParam],
    response: Revision,
    paginated: false,
    write: false,
    etag: false,
    ifMatch: false,
    problems: ["InvalidRequest", "NotFound"],
    handle: async (call) => {
      const id = articleId(call)
      const number = decodeRevisionNumber(call.ctx.params.number)
      decodeQuery(call.ctx, emptyQuery)
      return { value: await run(call, getRevision(call.caller, id, number)) }
    },
  },
  {
    operationId: "diffRevisions",
    method: "GET",
    path: "/articles/{id}/diff",
    tag: "Revisions",
    summary: "What changed between two revisions",
    description:
      "`from` (required) and `to` (default: the current revision) are revision numbers. Answers both titles when they differ and a unified diff of the bodies with one block element (paragraph, heading, list item...) a line, with the number of words added and removed. `from` may be the newer one: the diff then shows the way back.",
    pathParams: [articleParam],
    query: DiffQuery,
    response: RevisionDiff,
    paginated: false,
    write: false,
    etag: false,
    ifMatch: false,
    problems: ["InvalidRequest", "NotFound"],
    handle: async (call) => {
      const id = articleId(call)
      const query = decodeQuery(call.ctx, DiffQuery)
      return { value: await run(call, diffRevisions(call.caller, id, query.from, query.to)) }
    },
  },
  {
    operationId: "restoreRevision",
    method: "POST",
    path: "/articles/{id}/revisions/{number}/restore",
    tag: "Revisions",
    summary: "Restore an earlier revision",
    description:
      "Makes revision `number`'s title, body and featured image the article's again, as a new revision (origin `api`, `restored_from` set), under the same rules as the web page's Restore: every protected block of the current body must survive (422 `protected_link_changed`), the daily edit limit counts it, `If-Match` makes it conditional (412). Optional JSON `{ reason }`. Restoring the state the article is already in writes nothing (`revision: null`).",
    pathParams: [articleParam, revisionParam],
    body: { json: RestoreRevisionBody, optional: true },
    response: RestoreRevisionResult,
    minimal: true,
    paginated: false,
    write: true,
    etag: true,
    ifMatch: true,
    idempotent: true,
    problems: [
      "InvalidRequest",
      "InsufficientScope",
      "NotFound",
      "EditConflict",
      "PreconditionFailed",
      "PayloadTooLarge",
      "UnsupportedMediaType",
      "ProtectedLinkChanged",
      "IdempotencyKeyReused",
      "DailyEditLimit",
    ],
    handle: async (call) => {
      const id = articleId(call)
      const number = decodeRevisionNumber(call.ctx.params.number)
      decodeQuery(call.ctx, emptyQuery)
      const preconditions = preconditionsOf(call, id)
      const hasBody = (call.ctx.request.length ?? 0) > 0 || call.ctx.get("Transfer-Encoding") !== ""
      const input = hasBody
        ? decodeNow(decodeInput(RestoreRevisionBody, await readJson(call.ctx, MAX_RESTORE_JSON_BYTES), "Request body"))
        : {}
      await call.claim({ id, number, input, ...preconditionParts(preconditions) })
      const outcome = await run(call, restoreRevision(call.caller, id, number, input.reason, preconditions))
      return articleWritten(call, outcome)
    },
  },
  {
    operationId: "listBacklinks",
    method: "GET",
    path: "/sites/{id}/backlinks",
    tag: "Backlinks",
    summary: "List a website's backlinks",
    description: "Backlinks acquired for one website, newest `date_acquired` first then by id; filter by an inclusive date range.",
    pathParams: [siteParam],
    query: ListBacklinksQuery,
    response: BacklinkPage,
    paginated: true,
    write: false,
    etag: false,
    ifMatch: false,
    problems: listProblems,
    handle: async (call) => {
      const id = siteId(call)
      return { value: await run(call, listBacklinks(call.caller, id, decodeQuery(call.ctx, ListBacklinksQuery))) }
    },
  },
  {
    operationId: "getStats",
    method: "GET",
    path: "/sites/{id}/stats",
    tag: "Websites",
    summary: "Period summary of a website",
    description:
      "Published articles and acquired backlinks whose dates fall in the period (`this_month` by default, `last_month`, `last_30_days` or `YYYY-MM`; UTC).",
    pathParams: [siteParam],
    query: StatsQuery,
    response: PeriodSummary,
    paginated: false,
    write: false,
    etag: false,
    ifMatch: false,
    problems: listProblems,
    handle: async (call) => {
      const id = siteId(call)
      return { value: await run(call, getStats(call.caller, id, decodeQuery(call.ctx, StatsQuery))) }
    },
  },
  {
    operationId: "listActivity",
    method: "GET",
    path: "/activity",
    tag: "Activity",
    summary: "The account's activity log",
    description:
      "Every authenticated REST call and MCP tool call of the account, refused ones included, newest first. Reading the log is itself logged.",
    pathParams: [],
    query: ListActivityQuery,
    response: ActivityPage,
    paginated: true,
    write: false,
    etag: false,
    ifMatch: false,
    problems: ["InvalidRequest"],
    handle: async (call) => ({ value: await run(call, listActivity(call.caller, decodeQuery(call.ctx, ListActivityQuery))) }),
  },
]
