import { Schema } from "effect"
import { ArticleId, characterCount, Id, isCharacterCountBetween, isMaxCharacters, MAX_REVISION_NUMBER, STORABLE_TEXT_PATTERN, StorableString, storableText } from "./common.ts"

/** Largest accepted body, in UTF-8 bytes (1 MiB). */
export const MAX_BODY_BYTES = 1024 * 1024
/** Largest title, in characters after trimming. */
export const MAX_TITLE_LENGTH = 300
/** Largest reason, in characters. */
export const MAX_REASON_LENGTH = 500
/** Largest accepted image, in bytes (10 MiB). */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024
/** Largest accepted image side, in pixels. */
export const MAX_IMAGE_SIDE = 8000

/**
 * UTF-8 length of a string (as `TextEncoder` writes it: a lone surrogate becomes U+FFFD, three
 * bytes), counted without encoding it: one pass over the code units, nothing allocated.
 */
export const utf8Length = (s: string): number => {
  let n = s.length
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) continue
    if (c < 0x800) n += 1
    // (past the end charCodeAt is NaN, which no mask makes a low surrogate)
    else if (c >= 0xd800 && c <= 0xdbff && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2 // a surrogate pair: two units, four bytes
      i++
    } else n += 2 // the rest of the BMP, and a lone surrogate written as U+FFFD: three bytes
  }
  return n
}

const encoder = new TextEncoder()
// Where a long body is encoded to be measured: the limit's size, made once a thread when first
// needed and written over each time (1 MiB a thread, nothing allocated a call).
let scratch: Uint8Array | undefined

/**
 * Whether an HTML body is within the body limit, 1 MiB of UTF-8 (a PUT's body, a PATCH's edited
 * body, a sanitised body). A string of at most a third of the limit in code units fits whatever
 * it holds (at most three bytes a unit), and one of more code units than the limit has bytes does
 * not; one between is encoded into a buffer of the limit's size (`encodeInto`, which writes what
 * `TextEncoder` writes and stops before a character that does not fit): it fits when every code
 * unit was read. One native pass, about ten times faster than `utf8Length`'s loop on 1 MiB.
 */
export const isWithinBodyLimit = (s: string): boolean => {
  if (s.length <= MAX_BODY_BYTES / 3) return true
  if (s.length > MAX_BODY_BYTES) return false
  scratch ??= new Uint8Array(MAX_BODY_BYTES)
  return encoder.encodeInto(s, scratch).read === s.length
}

/** The message of a body over the body limit. */
export const BODY_LIMIT_MESSAGE = "Expected at most 1 MiB of HTML"

/** What `String.prototype.trim` removes (ECMA-262 WhiteSpace and LineTerminator), as a class. */
const TRIMMED = "[\\u0009-\\u000D\\u0020\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000\\uFEFF]"
const KEPT = TRIMMED.replace("[", "[^")

/**
 * A title as JSON Schema can say it exactly: optional whitespace, then 1 to 300 characters that
 * begin and end with a non-space, then optional whitespace. The `u` flag counts code points as
 * `characterCount` does. Matching backtracks at most 300 characters per start: linear.
 */
export const TITLE_PATTERN = new RegExp(`^${TRIMMED}*(?:${KEPT}|${KEPT}[\\s\\S]{0,${MAX_TITLE_LENGTH - 2}}${KEPT})${TRIMMED}*$`, "u")

/** An article title: 1 to 300 characters (code points, see `characterCount`) after trimming. */
// Annotations go on the base string: JSON Schema generation drops those set after a custom filter.
export const Title = Schema.String.annotate({ description: `The new title, 1 to ${MAX_TITLE_LENGTH} characters after trimming.` }).pipe(
  Schema.check(
    Schema.makeFilter(
      (s: string) => {
        const n = characterCount(s.trim())
        return n >= 1 && n <= MAX_TITLE_LENGTH ? undefined : `Expected 1 to ${MAX_TITLE_LENGTH} characters after trimming`
      },
      // Whitespace around the title is not counted, so no maxLength: the pattern says it exactly.
      { toJsonSchema: () => ({ minLength: 1, pattern: TITLE_PATTERN.source }) },
    ),
    storableText,
  ),
)

/** An article body: HTML, at most 1 MiB of UTF-8. */
export const Body = Schema.String.annotate({
  description:
    "The new full HTML body: at most 1 MiB (1 048 576 bytes) once encoded as UTF-8, which `maxLength` can only bound from above. It is sanitised like the editor does; every element carrying `data-service-protected` in the current body must be kept unchanged (it may move).",
}).pipe(
  Schema.check(
    // Every character is at least one byte: maxLength is the bound JSON Schema can state.
    Schema.makeFilter((s: string) => (isWithinBodyLimit(s) ? undefined : BODY_LIMIT_MESSAGE), { toJsonSchema: () => ({ maxLength: MAX_BODY_BYTES }) }),
    storableText,
  ),
)

/** Why the change was made, kept on the revision: at most 500 characters (code points). */
export const Reason = Schema.String.annotate({
  description: `Why the change was made (at most ${MAX_REASON_LENGTH} characters); kept on the revision.`,
}).pipe(Schema.check(isMaxCharacters(MAX_REASON_LENGTH), storableText))

const needsTitleOrBody = (published: boolean) =>
  Schema.makeFilter(
    (o: { title?: string; body?: string }) => (o.title !== undefined || o.body !== undefined ? undefined : "Expected at least one of title, body"),
    // Published in the OpenAPI document; not in a tool's input schema, where some model APIs
    // refuse `anyOf` at the top (the tool's description says it).
    published ? { toJsonSchema: () => ({ anyOf: [{ required: ["title"] }, { required: ["body"] }] }) } : undefined,
  )

/** The revision an edit was written against, for a three-way merge with what changed since. */
export const BaseRevision = Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: MAX_REVISION_NUMBER }))).annotate({
  description:
    "The revision your title and body were written against (the `revision` you read). If the article has moved on since, your change is merged three ways with the newer one, block by block: blocks only one side changed take that side, and the answer's `merge` says what was kept; blocks both changed differently are a 409 `edit_conflict` listing `conflicts`, and nothing is written. At most the article's current revision (a larger one is a 400). Not together with If-Match / if_revision (a 400).",
})

/** The JSON body of `PUT /articles/{id}`: at least one of `title` and `body`; nothing else may change. */
export const UpdateArticleBody = Schema.Struct({
  title: Schema.optionalKey(Title),
  body: Schema.optionalKey(Body),
  reason: Schema.optionalKey(Reason),
  base_revision: Schema.optionalKey(BaseRevision),
})
  .pipe(Schema.check(needsTitleOrBody(true)))
  .annotate({ title: "UpdateArticleBody", description: "Edit an article's title and/or body." })
/** The JSON body of `PUT /articles/{id}`. */
export type UpdateArticleBody = typeof UpdateArticleBody.Type

/** Largest alt text of a featured image, in characters. */
export const MAX_ALT_LENGTH = 500

/** Alt text of a featured image: at most 500 characters (code points). */
export const Alt = Schema.String.annotate({
  description: `Alternative text of the image (at most ${MAX_ALT_LENGTH} characters).`,
}).pipe(Schema.check(isMaxCharacters(MAX_ALT_LENGTH), storableText))

/** The JSON body of `POST /articles/{id}/featured-image`: an https URL to fetch. */
export const FeaturedImageUrlBody = Schema.Struct({
  url: Schema.String.annotate({
    description: "An https URL of a JPEG, PNG, WebP, GIF or AVIF image on a public host.",
  }).pipe(Schema.check(isMaxCharacters(2048), storableText)),
  alt: Schema.optionalKey(Alt),
}).annotate({ title: "FeaturedImageUrlBody" })
/** The JSON body of `POST /articles/{id}/featured-image`. */
export type FeaturedImageUrlBody = typeof FeaturedImageUrlBody.Type

/** Image types the service accepts (judged by decoding, never by name). */
export const ImageMimeType = Schema.Literals(["image/jpeg", "image/png", "image/webp", "image/gif", "image/avif"])

/** Largest API key name, in characters. */
export const MAX_KEY_NAME_LENGTH = 100

/** The name of an API key, as its owner gives it. */
export const ApiKeyName = Schema.String.annotate({
  description: `A name for the key (at most ${MAX_KEY_NAME_LENGTH} characters).`,
}).pipe(Schema.check(isMaxCharacters(MAX_KEY_NAME_LENGTH), storableText))

/** An email address typed at sign-in (looked up, never stored as typed). */
export const SignInEmail = Schema.String.pipe(Schema.check(isMaxCharacters(320), storableText))

/**
 * The name of an account, as the operator gives it: shown on pages and copied into the activity
 * entries of the person's calls, so at most as long as a key's or an agent's name.
 */
export const AccountName = Schema.String.annotate({
  description: `The account's name (at most ${MAX_KEY_NAME_LENGTH} characters).`,
}).pipe(Schema.check(isMaxCharacters(MAX_KEY_NAME_LENGTH), storableText))

/** The fewest characters (code points) a password chosen with `account create` may have. */
export const MIN_PASSWORD_CHARACTERS = 8

/**
 * A new account's password as an import file gives it: not empty, storable, otherwise as given.
 * An import carries accounts that exist elsewhere (a migration, a test's fixture: the contract's
 * own example has `"secret"`), so it is not held to the length `account create` asks of a new one.
 */
export const NewPassword = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter((s: string) => (s.length > 0 ? undefined : "Expected a password")),
    storableText,
  ),
)

/** A new account's email, password and name (admin command line, import). */
export const NewAccount = Schema.Struct({
  email: Schema.String.pipe(Schema.check(isMaxCharacters(320), storableText)),
  password: StorableString,
  name: Schema.optionalKey(AccountName),
  id: Schema.optionalKey(Id),
})

/** An `Idempotency-Key`: 1 to 255 visible ASCII characters, chosen by the client (a UUID is typical). */
export const IdempotencyKey = Schema.String.annotate({
  description:
    "A key of your choosing (1 to 255 visible ASCII characters, a UUID is typical) that makes a retry safe: the same key with the same request within 24 hours answers the first answer again and changes nothing; with a different request it is refused (`idempotency_key_reused`). Keys are per account.",
}).pipe(
  Schema.check(
    // published as checked, so that a tool's input schema refuses what the tool refuses
    Schema.makeFilter((s: string) => (/^[\x21-\x7e]{1,255}$/.test(s) ? undefined : "Expected 1 to 255 visible ASCII characters"), {
      toJsonSchema: () => ({ minLength: 1, maxLength: 255, pattern: "^[\\x21-\\x7e]+$" }),
    }),
  ),
)

/** What a write answers: `"full"` (the default) or `"minimal"`, the article without its body. */
export const ResponseShape = Schema.Literals(["full", "minimal"]).annotate({
  title: "ResponseShape",
  description:
    "\"minimal\" answers the article without its body (everything else is kept: title, word count, revision, protected_links, what the sanitiser removed); use it when you do not need to read the body back, for example after edit_article. Default \"full\".",
})
const responseArg = Schema.optionalKey(ResponseShape)

/** Arguments of the MCP tool `update_article`. */
export const UpdateArticleArgs = Schema.Struct({
  article_id: ArticleId,
  title: Schema.optionalKey(Title),
  body: Schema.optionalKey(Body),
  reason: Schema.optionalKey(Reason),
  dry_run: Schema.optionalKey(Schema.Boolean.annotate({ description: "true: validate and show the result, write nothing." })),
  if_revision: Schema.optionalKey(
    Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: MAX_REVISION_NUMBER }))).annotate({
      description: "Apply only if the article is still at this revision (from get_article); otherwise precondition_failed. Not together with base_revision (invalid_request).",
    }),
  ),
  base_revision: Schema.optionalKey(BaseRevision),
  idempotency_key: Schema.optionalKey(IdempotencyKey),
  response: responseArg,
})
  .pipe(Schema.check(needsTitleOrBody(false)))
  .annotate({ title: "UpdateArticleArgs" })

/** Base64's letters for a 10 MiB image. */
const MAX_IMAGE_BASE64 = Math.ceil(MAX_IMAGE_BYTES / 3) * 4 + 4

/**
 * The most base64 text a 10 MiB image takes, as the tool's schema publishes it (`maxLength`),
 * wrapped as MIME wraps it (a CR LF after every 76 letters). Longer text is an image over 10 MiB,
 * which the tool refuses as a REST upload is refused: 413 `payload_too_large` (the inspector judges
 * the decoded bytes' size first), not the 400 of a bad argument; the connector's request size
 * bounds the text meanwhile.
 */
const base64OfMaxImage = Schema.makeFilter((_: string) => undefined, { toJsonSchema: () => ({ maxLength: MAX_IMAGE_BASE64 + Math.ceil(MAX_IMAGE_BASE64 / 76) * 2 }) })

/** Whether a character code is ASCII white space (space, tab, line feed, vertical tab, form feed, carriage return). */
const isAsciiSpace = (c: number): boolean => c === 0x20 || (c >= 0x09 && c <= 0x0d)

/**
 * Whether `s` is standard base64 as the tool reads it: ASCII white space (MIME line breaks)
 * ignored, at most two `=` and only at the end, never a length of 4n+1. One pass over the text,
 * nothing copied: a 13 MiB argument of spaces between letters costs about as much as plain base64
 * (a regex replace of its white space took 0.5 s on the event loop, twice).
 */
const isStandardBase64 = (s: string): boolean => {
  // base64 on one line, the usual case: the regex engine's one anchored pass is the faster
  if (/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return s.length % 4 !== 1
  let data = 0
  let padding = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (isAsciiSpace(c)) continue
    if (c === 0x3d) {
      if (++padding > 2) return false
    } else if (padding > 0) return false
    else if (!((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2f)) return false
    data++
  }
  return data % 4 !== 1
}

/**
 * Standard base64 (`isStandardBase64`). The schema publishes all but the length (a pattern counting
 * it overflows a regex engine's stack on a 10 MiB image), so a client sees a data: URL refused.
 */
const standardBase64 = Schema.makeFilter(
  (s: string) => (isStandardBase64(s) ? undefined : "Expected standard base64 (A-Z, a-z, 0-9, +, /, = padding at the end), not a data: URL"),
  { toJsonSchema: () => ({ pattern: "^[A-Za-z0-9+/\\t\\n\\u000b\\f\\r ]*(?:=[\\t\\n\\u000b\\f\\r ]*){0,2}$" }) },
)

const ifRevisionArg = Schema.optionalKey(
  Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: MAX_REVISION_NUMBER }))).annotate({
    description: "Apply only if the article is still at this revision (from get_article); otherwise precondition_failed.",
  }),
)

/** Arguments of the MCP tool `replace_featured_image`: `url`, or `image_base64` with `mime_type`. */
export const ReplaceFeaturedImageArgs = Schema.Struct({
  article_id: ArticleId,
  url: Schema.optionalKey(FeaturedImageUrlBody.fields.url),
  image_base64: Schema.optionalKey(
    Schema.String.pipe(Schema.check(base64OfMaxImage, standardBase64)).annotate({
      description: "The image bytes, standard base64 (line breaks allowed; not a data: URL; at most 10 MiB decoded). Give either this with mime_type, or url (exactly one of the two).",
    }),
  ),
  mime_type: Schema.optionalKey(
    ImageMimeType.annotate({
      description: "The type of the image_base64 bytes: required with image_base64, not used with url. The service judges the image by decoding its bytes, never by this value alone: bytes that are none of these types are unsupported_image.",
    }),
  ),
  alt: Schema.optionalKey(Alt),
  if_revision: ifRevisionArg,
  idempotency_key: Schema.optionalKey(IdempotencyKey),
  response: responseArg,
})
  .pipe(
    Schema.check(
      Schema.makeFilter((o: { url?: string; image_base64?: string; mime_type?: string }) =>
        (o.url !== undefined) !== (o.image_base64 !== undefined)
          ? o.image_base64 !== undefined && o.mime_type === undefined
            ? "Expected mime_type with image_base64"
            : undefined
          : "Expected exactly one of url, image_base64",
      ),
    ),
  )
  .annotate({ title: "ReplaceFeaturedImageArgs" })

/** Most find-and-replace edits one PATCH may carry. */
export const MAX_EDITS = 100

/**
 * The storable-text rule of an edit's `find` and `replace` as the documents publish it (the
 * `pattern` of `storableText`). It is enforced by `editArticle` for every transport
 * (`unstorableEditTexts`), which names the edit as `edit_not_applicable` does
 * (`edits/<index>/replace`); the decode leaves it to that check.
 */
const editTextStorable = Schema.makeFilter((_: string) => undefined, { toJsonSchema: () => ({ pattern: STORABLE_TEXT_PATTERN }) })

/** One find-and-replace edit. */
export const TextEdit = Schema.Struct({
  find: Schema.String.annotate({
    description:
      "Exact text of the current body (the HTML as GET / get_article serves it) to replace; it must occur exactly once there.",
  }).pipe(Schema.check(isCharacterCountBetween(1, MAX_BODY_BYTES), editTextStorable)),
  replace: Schema.String.annotate({ description: "The text that takes its place (may be empty)." }).pipe(
    Schema.check(isMaxCharacters(MAX_BODY_BYTES), editTextStorable),
  ),
}).annotate({ title: "TextEdit" })
/** One find-and-replace edit. */
export type TextEdit = typeof TextEdit.Type

const Edits = Schema.Array(TextEdit)
  .annotate({
    description: `Find-and-replace edits (at most ${MAX_EDITS}), applied in order, each on the result of the one before.`,
  })
  .pipe(Schema.check(Schema.isMaxLength(MAX_EDITS)))

const needsEditsOrTitle = (published: boolean) =>
  Schema.makeFilter(
    (o: { edits?: ReadonlyArray<unknown>; title?: string }) =>
      (o.edits !== undefined && o.edits.length > 0) || o.title !== undefined ? undefined : "Expected a non-empty edits or a title",
    // as needsTitleOrBody: in the OpenAPI document only
    published ? { toJsonSchema: () => ({ anyOf: [{ required: ["edits"], properties: { edits: { minItems: 1 } } }, { required: ["title"] }] }) } : undefined,
  )

/** The JSON body of `PATCH /articles/{id}`: small edits of the body and/or a new title. */
export const EditArticleBody = Schema.Struct({
  edits: Schema.optionalKey(Edits),
  title: Schema.optionalKey(Title),
  reason: Schema.optionalKey(Reason),
})
  .pipe(Schema.check(needsEditsOrTitle(true)))
  .annotate({ title: "EditArticleBody", description: "Change parts of an article's body by find and replace, and/or its title." })
/** The JSON body of `PATCH /articles/{id}`. */
export type EditArticleBody = typeof EditArticleBody.Type

/** The optional JSON body of `POST /articles/{id}/revisions/{number}/restore`. */
export const RestoreRevisionBody = Schema.Struct({ reason: Schema.optionalKey(Reason) }).annotate({
  title: "RestoreRevisionBody",
  description: "Why the revision is restored (kept on the new revision; default `Restored revision N`).",
})
/** The optional JSON body of a restore. */
export type RestoreRevisionBody = typeof RestoreRevisionBody.Type

const dryRunArg = Schema.optionalKey(Schema.Boolean.annotate({ description: "true: validate and show the result, write nothing." }))
const idempotencyKeyArg = Schema.optionalKey(IdempotencyKey)
const revisionNumberArg = Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: MAX_REVISION_NUMBER }))).annotate({
  description: "A revision number (1, 2, ...), from list_revisions.",
})

/** Arguments of the MCP tool `edit_article`. */
export const EditArticleArgs = Schema.Struct({
  article_id: ArticleId,
  edits: Schema.optionalKey(Edits),
  title: Schema.optionalKey(Title),
  reason: Schema.optionalKey(Reason),
  dry_run: dryRunArg,
  if_revision: ifRevisionArg,
  idempotency_key: idempotencyKeyArg,
  response: responseArg,
})
  .pipe(Schema.check(needsEditsOrTitle(false)))
  .annotate({ title: "EditArticleArgs" })

/** Arguments of the MCP tool `restore_revision`. */
export const RestoreRevisionArgs = Schema.Struct({
  article_id: ArticleId,
  number: revisionNumberArg,
  reason: Schema.optionalKey(Reason),
  if_revision: ifRevisionArg,
  idempotency_key: idempotencyKeyArg,
  response: responseArg,
}).annotate({ title: "RestoreRevisionArgs" })

/** Arguments of the MCP tool `get_revision`. */
export const GetRevisionArgs = Schema.Struct({ article_id: ArticleId, number: revisionNumberArg }).annotate({ title: "GetRevisionArgs" })

/** Arguments of the MCP tool `diff_revisions`. */
export const DiffRevisionsArgs = Schema.Struct({
  article_id: ArticleId,
  from: revisionNumberArg.annotate({ description: "The older revision number." }),
  to: Schema.optionalKey(revisionNumberArg.annotate({ description: "The newer revision number (default: the current revision)." })),
}).annotate({ title: "DiffRevisionsArgs" })
