import { decodeInput, InvalidRequest, NotFound, isId, PayloadTooLarge, RevisionNumberParam, UnsupportedMediaType } from "@content-site/core"
import { Cause, Effect, Exit, Option, Schema } from "effect"
import type { ParameterizedContext } from "koa"
import { jsonBoundPassed, MAX_JSON_DEPTH, MAX_JSON_TOKENS, parseInTurn, strictQuery } from "@content-site/http"
import { textMemo } from "./textMemo.ts"

/** Runs a pure decoding effect synchronously, throwing its InvalidRequest. */
export const decodeNow = <A>(effect: Effect.Effect<A, InvalidRequest>): A => {
  const exit = Effect.runSyncExit(effect)
  if (Exit.isSuccess(exit)) return exit.value
  const error = Cause.findErrorOption(exit.cause)
  if (Option.isSome(error)) throw error.value
  throw new Error(Cause.pretty(exit.cause))
}

/**
 * Query strings each schema decoded lately, with what they decoded to: decoding is pure, and
 * clients repeat the same few (`per_page=100`, the next page). Only accepted ones are kept.
 */
const decodedQueries = new WeakMap<Schema.Top, ReturnType<typeof textMemo<unknown>>>()

/** Decodes the query string with a core schema: unknown parameters and bad values are 400s. */
export const decodeQuery = <S extends Schema.Codec<any, any, never, never>>(ctx: ParameterizedContext, schema: S): S["Type"] => {
  let decoded = decodedQueries.get(schema)
  if (decoded === undefined) decodedQueries.set(schema, (decoded = textMemo<unknown>(256, 512)))
  const querystring = ctx.querystring
  return decoded(querystring, () => {
    const fields = (schema as unknown as { fields?: Record<string, unknown> }).fields
    return Object.freeze(decodeNow(decodeInput(schema, strictQuery(querystring, Object.keys(fields ?? {})), "Query string")))
  }) as S["Type"]
}

const shown = (raw: string): string => (raw.length > 64 ? `${raw.slice(0, 64)}…` : raw)

/** Decodes a path id; an id that cannot exist is a 404 like any unknown id. */
export const decodePathId = (raw: string | undefined, resource: string): string => {
  if (raw !== undefined && isId(raw)) return raw
  throw new NotFound({ resource, id: shown(raw ?? "") })
}

/** Decodes a revision number in a path; anything but a positive integer is a 404. */
export const decodeRevisionNumber = (raw: string | undefined): number => {
  const exit = Effect.runSyncExit(decodeInput(RevisionNumberParam, raw ?? "", "Path"))
  if (Exit.isSuccess(exit) && /^[1-9]\d*$/.test(raw ?? "")) return exit.value
  throw new NotFound({ resource: "revision", id: shown(raw ?? "") })
}

/**
 * The request's media type without its parameters, in lower case: type and subtype are
 * case-insensitive (RFC 9110 8.3.1), and Koa's `request.type` keeps them as sent.
 */
export const mediaTypeOf = (ctx: ParameterizedContext): string => ctx.request.type.trim().toLowerCase()

const isJsonType = (ctx: ParameterizedContext): boolean => {
  const type = mediaTypeOf(ctx)
  if (type !== "application/json") return false
  const charset = ctx.request.charset
  return charset === "" || charset.toLowerCase() === "utf-8"
}

/** Reads at most `limit` bytes of the request body, refusing more while streaming (413). */
export const readBody = (ctx: ParameterizedContext, limit: number): Promise<Buffer> => {
  const declared = ctx.request.length
  // Refused before or while reading: the connection is closed after the answer (closeAfterUnreadBody).
  if (declared !== undefined && declared > limit) {
    return Promise.reject(new PayloadTooLarge({ detail: `The request body is larger than ${limit} bytes.` }))
  }
  return new Promise<Buffer>((resolve, reject) => {
    const req = ctx.req
    const chunks: Buffer[] = []
    let size = 0
    let refused = false
    const onData = (chunk: Buffer) => {
      if (refused) return
      size += chunk.length
      if (size > limit) {
        refused = true
        chunks.length = 0
        reject(new PayloadTooLarge({ detail: `The request body is larger than ${limit} bytes.` }))
        return
      }
      chunks.push(chunk)
    }
    const cleanup = () => {
      req.off("data", onData)
      req.off("end", onEnd)
      req.off("error", onError)
      req.off("aborted", onError)
    }
    const onEnd = () => {
      cleanup()
      if (!refused) resolve(Buffer.concat(chunks, size))
    }
    const onError = (err?: unknown) => {
      cleanup()
      // The client went away or timed out mid-body: nothing can be answered; it is noted as 499, client closed request (errorFunnel).
      if (!refused) {
        reject(
          new InvalidRequest({
            detail: "The request body was not received completely.",
            errors: [{ path: "(body)", message: err instanceof Error ? err.message : "aborted" }],
          }),
        )
      }
    }
    req.on("data", onData)
    req.on("end", onEnd)
    req.on("error", onError)
    req.on("aborted", onError)
  })
}

/**
 * Reads a JSON request body: `application/json` (UTF-8) only (415 otherwise), at most `limit`
 * bytes (413 while streaming), well-formed and not nested deeper than MAX_JSON_DEPTH (400).
 */
export const readJson = async (ctx: ParameterizedContext, limit: number): Promise<unknown> => {
  if (!isJsonType(ctx)) {
    // JSON in another charset: say so, rather than "not 'application/json'"
    const what = mediaTypeOf(ctx) === "application/json" ? `JSON in charset '${ctx.request.charset}'` : ctx.request.type === "" ? "" : `'${ctx.request.type}'`
    throw new UnsupportedMediaType({
      detail: `Send the body as JSON in UTF-8 with 'Content-Type: application/json'${what === "" ? "" : `, not ${what}`}.`,
    })
  }
  const bytes = await readBody(ctx, limit)
  // A large body is decoded and parsed in a turn of the event loop of its own, in its account's
  // rotation (ownTurn.ts); past its account's queue, 429 (503 past every account's).
  return parseInTurn(ctx, bytes.length, () => parseJsonBody(bytes))
}

/** Decodes, checks and parses a JSON body (UTF-8, not blank, nested at most MAX_JSON_DEPTH, at most MAX_JSON_TOKENS values and keys). */
const parseJsonBody = (bytes: Buffer): unknown => {
  let text: string
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes)
  } catch {
    throw new InvalidRequest({ detail: "The request body is not valid UTF-8.", errors: [{ path: "(body)", message: "Invalid UTF-8" }] })
  }
  if (text.trim() === "") {
    throw new InvalidRequest({ detail: "The request body is empty; send a JSON object.", errors: [{ path: "(body)", message: "Empty body" }] })
  }
  const passed = jsonBoundPassed(text, MAX_JSON_DEPTH, MAX_JSON_TOKENS)
  if (passed === "depth") {
    throw new InvalidRequest({
      detail: `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`,
      errors: [{ path: "(body)", message: "Nested too deeply" }],
    })
  }
  if (passed === "tokens") {
    throw new InvalidRequest({
      detail: `The JSON body holds more than ${MAX_JSON_TOKENS} values and keys.`,
      errors: [{ path: "(body)", message: "Too many values" }],
    })
  }
  try {
    return JSON.parse(text) as unknown
  } catch (err) {
    const message = err instanceof Error ? err.message : "Malformed JSON"
    throw new InvalidRequest({ detail: `The request body is not valid JSON: ${message}.`, errors: [{ path: "(body)", message }] })
  }
}

/**
 * One element of an `If-Match` list (RFC 9110 5.6.1, 8.8.3): an entity tag, weak or strong, with
 * optional whitespace around it, up to the next comma or the end. An element may be empty (`a, , b`).
 */
const LIST_ELEMENT = /[ \t]*(?:(W\/)?"([\x21\x23-\x7e\x80-\xff]*)")?[ \t]*(,|$)/y

const TAG = '(?:W/)?"[\\x21\\x23-\\x7e\\x80-\\xff]*"'

/**
 * What `If-Match` may be, as the OpenAPI document publishes it: blank (no condition), `*`, or a
 * comma-separated list of entity tags with at least one tag (empty elements allowed, RFC 9110
 * 5.6.1). Written without two adjacent quantifiers over the same characters, so matching is
 * linear in the header's length.
 */
export const IF_MATCH_PATTERN = new RegExp(
  `^[ \\t]*(?:\\*[ \\t]*|(?:,[ \\t]*)*${TAG}[ \\t]*(?:,[ \\t]*(?:${TAG}[ \\t]*)?)*)?$`,
  "u",
)

const notAnEntityTag = (articleId: string, header: "If-Match" | "If-None-Match" = "If-Match") =>
  new InvalidRequest({
    detail: `${header} must be * or a list of entity tags such as "${articleId}-r3" as sent in the ETag header.`,
    errors: [{ path: header, message: "Not an entity tag" }],
  })

/**
 * A header value without the spaces and tabs at either end (optional white space, RFC 9110 5.6.3).
 * One pass in from each end, linear in the header: `/^[ \t]+|[ \t]+$/g` would retry its `$` branch
 * from every space of a run inside the header (`"a"   ,"b"`), quadratic in the run.
 */
const trimOws = (header: string): string => {
  let start = 0
  let end = header.length
  while (start < end && (header[start] === " " || header[start] === "\t")) start++
  while (end > start && (header[end - 1] === " " || header[end - 1] === "\t")) end--
  return header.slice(start, end)
}

/**
 * Reads `If-Match` for an article: absent or `*` means no precondition (`undefined`); otherwise
 * the revisions its tags name, any of which may match (RFC 9110 13.1.1). Tags are compared
 * strongly: only a strong `"<article id>-r<n>"` names revision n, so a weak `W/` tag, another
 * article's tag or one naming no possible revision names none, and a list of only such tags is
 * empty: it never matches (412 `precondition_failed`). A header that is not a list of entity
 * tags is a 400.
 */
export const expectedRevisionsOf = (header: string | undefined, articleId: string): ReadonlyArray<number> | undefined => {
  if (header === undefined) return undefined
  if (!IF_MATCH_PATTERN.test(header)) throw notAnEntityTag(articleId)
  const trimmed = trimOws(header)
  if (trimmed === "" || trimmed === "*") return undefined
  const tags = entityTagsOf(header)
  if (tags === undefined || tags.length === 0) throw notAnEntityTag(articleId)
  return revisionsNamed(tags, articleId, "strong")
}

/**
 * The revisions of this article that entity tags name: `"<article id>-r<n>"` names revision n
 * (a weak `W/` one too when compared weakly); any other tag names none.
 */
const revisionsNamed = (
  tags: ReadonlyArray<{ readonly weak: boolean; readonly opaque: string }>,
  articleId: string,
  comparison: "strong" | "weak",
): ReadonlyArray<number> => {
  const prefix = `${articleId}-r`
  const revisions: Array<number> = []
  for (const { weak, opaque } of tags) {
    const digits = opaque.startsWith(prefix) ? opaque.slice(prefix.length) : ""
    // The ETag writes the revision in plain decimal; any other spelling is another tag.
    const revision = /^[1-9]\d*$/.test(digits) ? Number(digits) : Number.NaN
    if ((comparison === "weak" || !weak) && Number.isSafeInteger(revision)) revisions.push(revision)
  }
  return revisions
}

/**
 * Reads a write's `If-None-Match` for an article (RFC 9110 13.1.2): absent or blank means no
 * precondition (`undefined`); `*` refuses the write wherever the article exists; otherwise the
 * revisions its tags name, compared weakly (`W/"<article id>-r3"` names revision 3), none of
 * which the article may be at (412 `precondition_failed`). Tags naming no revision of this
 * article are left out: a list of only such tags never refuses. A header that is not a list of
 * entity tags is a 400, as for If-Match.
 */
export const unexpectedRevisionsOf = (header: string | undefined, articleId: string): ReadonlyArray<number> | "*" | undefined => {
  if (header === undefined) return undefined
  if (!IF_MATCH_PATTERN.test(header)) throw notAnEntityTag(articleId, "If-None-Match")
  const trimmed = trimOws(header)
  if (trimmed === "") return undefined
  if (trimmed === "*") return "*"
  const tags = entityTagsOf(header)
  if (tags === undefined || tags.length === 0) throw notAnEntityTag(articleId, "If-None-Match")
  return revisionsNamed(tags, articleId, "weak")
}

/**
 * The entity tags of a list header (`If-Match`, `If-None-Match`) in order, empty elements left
 * out; undefined where an element is not an entity tag. One pass over the header, one element at
 * a time: as many steps as it has commas, its length bounded by Node's 16 KiB of headers.
 */
const entityTagsOf = (header: string): ReadonlyArray<{ readonly weak: boolean; readonly opaque: string }> | undefined => {
  const tags: Array<{ readonly weak: boolean; readonly opaque: string }> = []
  for (let at = 0; ; ) {
    LIST_ELEMENT.lastIndex = at
    const element = LIST_ELEMENT.exec(header)
    if (element === null) return undefined
    const [, weak, opaque, end] = element
    if (opaque !== undefined) tags.push({ weak: weak !== undefined, opaque })
    if (end === "") return tags
    at = LIST_ELEMENT.lastIndex
  }
}

/**
 * Whether a GET's `If-None-Match` names the answer's entity tag (RFC 9110 13.1.2): `*`, or a list
 * holding the tag, compared weakly (`W/"x"` names `"x"`). The caller then answers 304 Not
 * Modified. A header that is not a list of entity tags names nothing: the full answer is sent (a
 * cache's odd header costs it nothing but bytes).
 */
export const noneMatchNames = (header: string | undefined, etag: string): boolean => {
  if (header === undefined || !IF_MATCH_PATTERN.test(header)) return false
  if (trimOws(header) === "*") return true
  const wanted = etag.slice(1, -1)
  return entityTagsOf(header)?.some((tag) => tag.opaque === wanted) ?? false
}

/** The ETag of an article at a revision. */
export const etagOf = (articleId: string, revision: number): string => `"${articleId}-r${revision}"`

/** Splits at each `separator` outside quoted strings (backslash escapes honoured). */
const splitOutsideQuotes = (text: string, separator: string): Array<string> => {
  const parts: Array<string> = []
  let start = 0
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === "\\") i++
      else if (c === '"') quoted = false
    } else if (c === '"') quoted = true
    else if (c === separator) {
      parts.push(text.slice(start, i))
      start = i + 1
    }
  }
  parts.push(text.slice(start))
  return parts
}

/**
 * The preferences of a `Prefer` header (RFC 7240) in the order sent: each name in lower case
 * with its value unquoted ("" when it has none); parameters after `;` are dropped.
 */
export const preferencesOf = (header: string): Array<{ readonly name: string; readonly value: string }> =>
  splitOutsideQuotes(header, ",").flatMap((element) => {
    const head = splitOutsideQuotes(element, ";")[0] ?? ""
    const eq = head.indexOf("=")
    const name = (eq === -1 ? head : head.slice(0, eq)).trim().toLowerCase()
    if (name === "") return []
    const raw = eq === -1 ? "" : head.slice(eq + 1).trim()
    const value = /^".*"$/s.test(raw) ? raw.slice(1, -1).replace(/\\(.)/gs, "$1") : raw
    return [{ name, value }]
  })

/**
 * Whether a `Prefer` header asks for `return=minimal`. As RFC 7240 says, only the first `return`
 * preference counts and unknown preferences are ignored; the value is compared case-insensitively.
 */
export const prefersMinimal = (header: string): boolean =>
  preferencesOf(header).find((p) => p.name === "return")?.value.toLowerCase() === "minimal"
