/** The OpenAPI 3.1 document, generated from the operation table and the core's schemas. */
import {
  ActivityEntry,
  Alt,
  Article,
  ArticleListItem,
  Backlink,
  type CoreError,
  Pagination,
  MAX_REVISION_NUMBER,
  PathId,
  PER_PAGE_CEILING,
  perPageFacts,
  Problem,
  problemKinds,
  Revision,
  RevisionSummary,
  Website,
} from "@content-site/core"
import { Schema } from "effect"
import { type Operation, operations } from "../rest/operations.ts"
import { IF_MATCH_PATTERN } from "../rest/requestParts.ts"

type Json = Record<string, unknown>

/** Schemas that become named components wherever they occur (by their `title` annotation). */
const COMPONENT_TITLES = new Set([
  "Website",
  "ArticleListItem",
  "Article",
  "ArticleWithoutBody",
  "Backlink",
  "PeriodRange",
  "PeriodSummary",
  "RevisionSummary",
  "Revision",
  "ActivityEntry",
  "Actor",
  "Pagination",
  "FeaturedImage",
  "SanitizeReport",
  "ProtectedBlockViolation",
  "Problem",
  "WebsitePage",
  "ArticlePage",
  "BacklinkPage",
  "RevisionPage",
  "ActivityPage",
  "UpdateArticleResult",
  "FeaturedImageResult",
  "UpdateArticleBody",
  "FeaturedImageUrlBody",
  "ProtectedLink",
  "TextEdit",
  "EditArticleBody",
  "RestoreRevisionBody",
  "RestoreRevisionResult",
  "RevisionDiff",
])

const titleOf = (ast: unknown): string | undefined => {
  const title = (ast as { annotations?: { title?: unknown } }).annotations?.title
  return typeof title === "string" ? title : undefined
}

const rewriteRefs = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(rewriteRefs)
  if (typeof value !== "object" || value === null) return value
  const out: Json = {}
  for (const [k, v] of Object.entries(value)) {
    out[k] = k === "$ref" && typeof v === "string" ? v.replace(/^#\/\$defs\//, "#/components/schemas/") : rewriteRefs(v)
  }
  return out
}

/** Collects JSON Schemas generated from core schemas into one `components.schemas` table. */
class SchemaTable {
  readonly components: Record<string, unknown> = {}

  /** The JSON Schema of a core schema; titled resources become `$ref`s to components. */
  schemaOf(schema: Schema.Top, options: { readonly closed?: boolean } = {}): Json {
    const doc = Schema.toJsonSchemaDocument(schema, {
      referencePolicy: ({ ast }) => {
        const title = titleOf(ast)
        return title !== undefined && COMPONENT_TITLES.has(title) ? title : undefined
      },
      ...(options.closed === true ? { onExcessProperty: "error" as const } : {}),
    })
    for (const [name, def] of Object.entries(doc.definitions)) this.components[name] ??= rewriteRefs(def)
    const root = rewriteRefs(doc.schema) as Json
    const title = typeof root.title === "string" ? root.title : undefined
    if (title !== undefined && COMPONENT_TITLES.has(title)) {
      this.components[title] ??= root
      return { $ref: `#/components/schemas/${title}` }
    }
    return root
  }
}

const COMMON_PROBLEMS: ReadonlyArray<CoreError["_tag"] | "Internal"> = ["Unauthenticated", "RateLimited", "Unavailable", "Internal"]

const problemCodesByStatus = (op: Operation): Map<number, Array<string>> => {
  const byStatus = new Map<number, Array<string>>()
  for (const tag of [...op.problems, ...COMMON_PROBLEMS]) {
    const kind = tag === "Internal" ? { status: 500, code: "internal" } : problemKinds[tag]
    const codes = byStatus.get(kind.status) ?? []
    if (!codes.includes(kind.code)) codes.push(kind.code)
    byStatus.set(kind.status, codes)
  }
  return new Map([...byStatus.entries()].sort(([a], [b]) => a - b))
}

/** A schema's description, from its own annotations or its last check's (refinements keep it there). */
const descriptionOf = (schema: Schema.Top | undefined): string | undefined => {
  if (schema === undefined) return undefined
  const ast = schema.ast as { annotations?: { description?: unknown }; checks?: ReadonlyArray<{ annotations?: { description?: unknown } }> }
  const found = [ast.annotations?.description, ...(ast.checks ?? []).map((c) => c.annotations?.description)].filter((d) => typeof d === "string")
  return found.at(-1) as string | undefined
}

const header = (description: string, schema: Json = { type: "string" }) => ({ description, schema })
/** A header every answer of its status carries. */
const always = (h: Json): Json => ({ ...h, required: true })

const REQUEST_ID = always(header("The request's id; the same id is in the problem body and the activity entry."))
const RATE_HEADERS = {
  "RateLimit-Limit": header("Requests allowed per minute for the account (REST and MCP together).", { type: "integer" }),
  "RateLimit-Remaining": header("Requests left in the current window.", { type: "integer" }),
  "RateLimit-Reset": header("Seconds until the window resets.", { type: "integer" }),
}
/** The rate headers of an answer the account's count let through (a success, a 304): always there. */
const COUNTED_RATE_HEADERS = Object.fromEntries(Object.entries(RATE_HEADERS).map(([name, h]) => [name, always(h)]))

const STATUS_TEXT: Record<number, string> = {
  400: "The request is malformed (unknown parameter or key, bad value, malformed JSON).",
  401: "No valid API key (`WWW-Authenticate: Bearer realm=\"content-site\"`).",
  403: "The API key is read-only.",
  404: "No such object on this account (another account's objects are indistinguishable from missing ones).",
  409: "A concurrent writer won; nothing was written.",
  412: "`If-Match` no longer matches the article, or `If-None-Match` names its current ETag (or is `*`); nothing was written.",
  413: "The body or image is too large.",
  415: "Wrong content type, or the bytes are not an accepted image.",
  422: "The change was refused (or its `Idempotency-Key` was used for another request).",
  429: "A limit is used up; retry after `Retry-After` seconds.",
  500: "Something went wrong on our side (no internal detail is sent).",
  503: "The database cannot be reached; nothing was written; retry later.",
}

const operationObject = (op: Operation, table: SchemaTable, maxPerPage: number): Json => {
  const parameters: Array<Json> = []
  for (const p of op.pathParams) {
    parameters.push({
      name: p.name,
      in: "path",
      required: true,
      // The contract lets a bad path id be a 400 or a 404; ours is the 404 of any unknown id.
      description: `${p.description} ${p.kind === "id" ? "An id that does not match the pattern is a 404 like any unknown id." : "Any other value (not digits, written with a leading zero such as `01`, 0, past the maximum) is a 404 like a revision that does not exist."}`,
      schema:
        p.kind === "id"
          ? { ...table.schemaOf(PathId), ...(p.example !== undefined ? { examples: [p.example] } : {}) }
          : { type: "integer", minimum: 1, maximum: MAX_REVISION_NUMBER },
    })
  }
  if (op.query !== undefined) {
    const doc = Schema.toJsonSchemaDocument(Schema.toType(op.query as Schema.Codec<unknown, unknown, never, never>))
    const root = doc.schema as { properties?: Record<string, Json>; required?: Array<string> }
    const fields = (op.query as unknown as { fields?: Record<string, Schema.Top> }).fields ?? {}
    for (const [name, schema] of Object.entries(root.properties ?? {})) {
      const { description: generated, ...rest } = schema
      const description = generated ?? descriptionOf(fields[name])
      // the page size the server allows is the operator's MAX_PER_PAGE, not the schema's ceiling
      const perPage = name === "per_page" ? perPageFacts(maxPerPage) : undefined
      parameters.push({
        name,
        in: "query",
        required: root.required?.includes(name) ?? false,
        ...(perPage !== undefined ? { description: perPage.description } : typeof description === "string" ? { description } : {}),
        schema: perPage !== undefined ? { ...(rewriteRefs(rest) as Json), maximum: perPage.maximum, default: perPage.default } : rewriteRefs(rest),
      })
    }
  }
  if (op.ifMatch) {
    parameters.push({
      name: "If-Match",
      in: "header",
      required: false,
      description:
        'Apply only if the article is still at this ETag (`"<article id>-r<revision>"`), or at any of a comma-separated list of them; otherwise 412 `precondition_failed`. Tags are compared strongly: a weak `W/` tag never matches. `*` means no condition; a value that is not a list of entity tags is a 400.',
      schema: { type: "string", pattern: IF_MATCH_PATTERN.source },
    })
    parameters.push({
      name: "If-None-Match",
      in: "header",
      required: false,
      description:
        'Apply only if the article is not at this ETag (`"<article id>-r<revision>"`), nor at any of a comma-separated list of them; otherwise 412 `precondition_failed`. Tags are compared weakly (`W/"x"` names `"x"`); tags of no revision of this article name none. `*` is always a 412, the article existing. Checked after `If-Match` (RFC 9110 13.2.2), dry runs included; a value that is not a list of entity tags is a 400.',
      schema: { type: "string", pattern: IF_MATCH_PATTERN.source },
    })
  }

  if (op.etag && op.method === "GET") {
    parameters.push({
      name: "If-None-Match",
      in: "header",
      required: false,
      description:
        'Answer 304 Not Modified, without a body, when the article is still at this ETag (`"<article id>-r<revision>"`), or at any of a comma-separated list of them, or for `*`. Tags are compared weakly (`W/"x"` names `"x"`); a value that is not a list of entity tags is ignored (the full answer is sent).',
      schema: { type: "string" },
    })
  }

  if (op.idempotent === true) {
    parameters.push({
      name: "Idempotency-Key",
      in: "header",
      required: false,
      description:
        "Makes a retry safe: the same key with the same request within 24 hours answers the first answer again (with `Idempotent-Replayed: true`) and changes nothing; with a different request it is a 422 `idempotency_key_reused`; while the first is still running, a 409 `edit_conflict` (retry). A dry run's answer is not kept: its retry runs again (changing nothing either way). Keys are per account, 1 to 255 visible ASCII characters (a UUID is typical).",
      schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" },
    })
  }

  if (op.minimal === true) {
    parameters.push({
      name: "Prefer",
      in: "header",
      required: false,
      description:
        "`return=minimal` (RFC 7240) answers the same 200 with the article without its `body` (an `ArticleWithoutBody`: everything else kept), and says so with `Preference-Applied: return=minimal`; use it when you do not read the body back. `return=representation`, no header or other preferences only (ignored) answer in full; only the first `return` preference counts. Errors are the same either way. An `Idempotency-Key` replay answers in the shape each request asks for (the preference is not part of the request it names).",
      schema: { type: "string" },
      example: "return=minimal",
    })
  }

  const successHeaders: Json = { "X-Request-Id": REQUEST_ID, ...COUNTED_RATE_HEADERS }
  if (op.minimal === true) {
    successHeaders["Preference-Applied"] = header("`return=minimal` when the answer's article is without its body, as `Prefer` asked.")
    successHeaders["Vary"] = always(header("`Prefer`: the answer's shape depends on it."))
  }
  if (op.idempotent === true) successHeaders["Idempotent-Replayed"] = header("`true` when this is the first answer of the request's `Idempotency-Key`, sent again.")
  if (op.paginated) successHeaders.Link = always(header('RFC 8288 links: `first`, `prev`, `next`, `last` as they apply (absolute URLs).'))
  if (op.etag) successHeaders.ETag = always(header('The article\'s entity tag, `"<article id>-r<revision>"`.'))
  if (op.write) successHeaders["Edit-Limit-Remaining"] = always(header("Article changes left today (UTC) for the account.", { type: "integer" }))

  const responses: Json = {
    "200": { description: "Success.", headers: successHeaders, content: { "application/json": { schema: table.schemaOf(op.response) } } },
  }
  if (op.etag && op.method === "GET") {
    responses["304"] = {
      description: "Not Modified: `If-None-Match` names the article's current ETag. No body; the call is counted and logged like a 200.",
      headers: { "X-Request-Id": REQUEST_ID, ...COUNTED_RATE_HEADERS, ETag: always(header('The article\'s entity tag, `"<article id>-r<revision>"`.')) },
    }
  }
  for (const [status, codes] of problemCodesByStatus(op)) {
    const headers: Json = { "X-Request-Id": REQUEST_ID }
    // every answer past the key check carries them, a 500 or 503 of the operation included
    if (status !== 401) Object.assign(headers, RATE_HEADERS)
    // every refusal for a limit or for load says when to retry (the error funnel sets it from the error)
    if (status === 429 || status === 503) headers["Retry-After"] = always(header("Seconds to wait before retrying.", { type: "integer" }))
    if (status === 409 && op.idempotent === true) {
      headers["Retry-After"] = header("When the request's `Idempotency-Key` is still being processed: seconds to wait before retrying for its answer.", { type: "integer" })
    }
    if (status === 401) headers["WWW-Authenticate"] = always(header("`Bearer realm=\"content-site\"`: the API key goes in `Authorization: Bearer <key>`."))
    if (op.write && status !== 401) headers["Edit-Limit-Remaining"] = header("Article changes left today (UTC).", { type: "integer" })
    if (op.idempotent === true && status !== 401) headers["Idempotent-Replayed"] = header("`true` when this is the first answer of the request's `Idempotency-Key`, sent again.")
    responses[String(status)] = {
      description: `${STATUS_TEXT[status] ?? "Error."} Codes: ${codes.map((c) => `\`${c}\``).join(", ")}.`,
      headers,
      content: {
        "application/problem+json": {
          schema: {
            allOf: [table.schemaOf(Problem), { type: "object", properties: { status: { const: status }, code: { enum: codes } } }],
          },
        },
      },
    }
  }

  const object: Json = {
    operationId: op.operationId,
    tags: [op.tag],
    summary: op.summary,
    description: op.description,
    parameters,
    responses,
  }
  if (op.body !== undefined) {
    const content: Json = {}
    if (op.body.json !== undefined) content["application/json"] = { schema: table.schemaOf(op.body.json, { closed: true }) }
    if (op.body.multipart === true) {
      content["multipart/form-data"] = {
        schema: {
          type: "object",
          properties: {
            image: { type: "string", contentMediaType: "application/octet-stream", description: "The image file (JPEG, PNG, WebP, GIF or AVIF; at most 10 MiB)." },
            // the JSON body's own `alt`: one schema, the one the form field is decoded with
            alt: table.schemaOf(Alt),
          },
          required: ["image"],
          additionalProperties: false,
        },
      }
    }
    object.requestBody = { required: op.body.optional !== true, content }
  }
  return object
}

/**
 * The OpenAPI 3.1 document of the REST API, generated from the operation table and the core
 * schemas (the same ones the server decodes and encodes with): every parameter, request body,
 * response, problem code and both security schemes.
 */
export const openApiDocument = (publicUrl: string, limits: { readonly maxPerPage: number } = { maxPerPage: PER_PAGE_CEILING }): Json => {
  const table = new SchemaTable()
  for (const s of [Website, ArticleListItem, Article, Backlink, RevisionSummary, Revision, ActivityEntry, Pagination, Problem]) table.schemaOf(s)
  const paths: Record<string, Json> = {}
  for (const op of operations) {
    const item = (paths[op.path] ??= {})
    item[op.method.toLowerCase()] = operationObject(op, table, limits.maxPerPage)
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Content-Site API",
      version: "1.0.0",
      description:
        "Read a website's articles, backlinks and monthly numbers, and edit articles safely: bodies are sanitised, protected links must be kept, every change is a revision. Errors are `application/problem+json` (RFC 9457). Limits: requests per minute per account (`RateLimit-*` headers) and article changes per UTC day (`Edit-Limit-Remaining`).",
    },
    servers: [{ url: `${publicUrl}/api/v1` }],
    security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
    tags: [
      { name: "Websites", description: "The account's websites and their period summaries." },
      { name: "Articles", description: "Articles: read, edit, replace the featured image." },
      { name: "Revisions", description: "Every stored version of an article." },
      { name: "Backlinks", description: "Backlinks acquired for a website." },
      { name: "Activity", description: "The account's activity log." },
    ],
    paths,
    components: {
      schemas: table.components,
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description:
            "An API key (`cs_...`) as `Authorization: Bearer <key>`. Sent together with `X-API-Key`, this one wins and `X-API-Key` is not looked at: an `Authorization` that is not a valid `Bearer <key>` is a 401 even beside a valid `X-API-Key`.",
        },
        apiKeyHeader: { type: "apiKey", in: "header", name: "X-API-Key", description: "An API key (`cs_...`) in `X-API-Key`, read only when no `Authorization` header is sent." },
      },
    },
  }
}
