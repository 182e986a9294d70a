import { Schema } from "effect"

// An unpaired UTF-16 surrogate: a high one not followed by a low one, or a low one not after a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * Whether PostgreSQL can store a string as given: no NUL character (a `text` value cannot hold
 * one) and no unpaired UTF-16 surrogate (it has no UTF-8 encoding; the driver would store U+FFFD).
 */
export const isStorableText = (s: string): boolean => !s.includes("\u0000") && !LONE_SURROGATE.test(s)

const UNSTORABLE = new RegExp(`\\u0000|${LONE_SURROGATE.source}`, "g")

/** A string PostgreSQL can store: each NUL and unpaired surrogate written U+FFFD, the rest as given (`isStorableText` holds of it). Linear. */
export const toStorableText = (s: string): string => s.replace(UNSTORABLE, "\ufffd")

/** `isStorableText` as a JSON Schema pattern: no NUL, no unpaired surrogate. */
export const STORABLE_TEXT_PATTERN = "^[^\\u0000\\uD800-\\uDFFF]*$"

/** The message of a string refused by `storableText`. */
export const UNSTORABLE_TEXT_MESSAGE = "Expected text without NUL (U+0000) characters or unpaired surrogates"

/**
 * The one refinement every string that reaches storage carries (titles, bodies, reasons, alt
 * texts, key and account names, emails, import files): refused text is a 400, never a driver error.
 */
export const storableText = Schema.makeFilter((s: string) => (isStorableText(s) ? undefined : UNSTORABLE_TEXT_MESSAGE), {
  // The same rule as JSON Schema says it: its patterns match code points (ECMA-262 with the `u`
  // flag), so a surrogate in the class is one without its pair.
  toJsonSchema: () => ({ pattern: STORABLE_TEXT_PATTERN }),
})

/** A string PostgreSQL can store as given (see `storableText`). */
export const StorableString = Schema.String.pipe(Schema.check(storableText))

/**
 * How many characters a string holds, counted as the contract and JSON Schema's `minLength` and
 * `maxLength` count them: Unicode code points. JavaScript's `length` counts UTF-16 code units,
 * two for an emoji or any other character beyond U+FFFF; an unpaired surrogate counts one.
 */
export const characterCount = (s: string): number => {
  let pairs = 0
  for (let i = 0; i < s.length - 1; i++) {
    const unit = s.charCodeAt(i)
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = s.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        pairs++
        i++
      }
    }
  }
  return s.length - pairs
}

/**
 * At least `min` and at most `max` characters (code points, see `characterCount`). Its JSON Schema
 * is the exact `minLength`/`maxLength`, which count code points too; `Schema.isMaxLength` counts
 * code units, so it refused 151 emoji where the published schema allowed 300.
 */
export const isCharacterCountBetween = (min: number, max: number) =>
  Schema.makeFilter(
    // A string has no more code points than code units, and no fewer than half as many.
    (s: string) =>
      (s.length <= max || characterCount(s) <= max) && (s.length >= 2 * min || characterCount(s) >= min)
        ? undefined
        : min === 0
          ? `Expected at most ${max} characters`
          : `Expected ${min} to ${max} characters`,
    { toJsonSchema: () => (min === 0 ? { maxLength: max } : { minLength: min, maxLength: max }) },
  )

/** At most `max` characters (code points, see `characterCount`); JSON Schema `maxLength`. */
export const isMaxCharacters = (max: number) => isCharacterCountBetween(0, max)

// The `u` flag lets Effect publish a pattern in JSON Schema (whose patterns are Unicode-aware).
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/u

/** Longest id, in characters. */
export const MAX_ID_LENGTH = 128

/** An opaque object identifier (site, article, backlink, revision, account, key). */
export const Id = Schema.String.pipe(Schema.check(Schema.isPattern(ID_PATTERN), Schema.isMaxLength(MAX_ID_LENGTH))).annotate({
  title: "Id",
  description: "Opaque identifier: letters, digits, `_`, `.`, `:`, `-`; at most 128 characters.",
})

/** A website's id: an `Id` whose example is a website's (an article's would send a reader to a 404). */
export const SiteId = Id.annotate({ examples: ["site_1"] })

/** An article's id: an `Id` whose example is an article's. */
export const ArticleId = Id.annotate({ examples: ["art_1"] })

/** Whether a string is an `Id`: the schema's own pattern, without the schema's parser (every path id is checked). */
export const isId = (s: string): boolean => ID_PATTERN.test(s)

const TIMESTAMP_PATTERN = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$/u

/** An RFC 3339 UTC timestamp with milliseconds, as every response writes it. */
/** A count or a size: a whole number, never negative (`minimum: 0` in the published schemas). */
export const Count = Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0)))

/** A number counted from 1: a revision's number, a page. */
export const Ordinal = Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(1)))

export const Timestamp = Schema.String.annotate({
  title: "Timestamp",
  description: "RFC 3339 UTC timestamp, e.g. `2026-11-02T10:00:00.000Z`.",
  format: "date-time",
}).pipe(Schema.check(Schema.isPattern(TIMESTAMP_PATTERN)))

const DATE_PATTERN = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/u

/** A calendar date `YYYY-MM-DD`. */
export const CalendarDate = Schema.String.annotate({
  title: "CalendarDate",
  description: "A UTC calendar date, `YYYY-MM-DD`.",
  format: "date",
}).pipe(Schema.check(Schema.isPattern(DATE_PATTERN)))

/**
 * An absolute http(s) URL as stored for articles, backlinks and images. It claims no JSON Schema
 * `format`: a stored URL may hold characters `uri` (RFC 3986, ASCII only) refuses, such as an
 * imported `https://bäckerei.example/brötchen`, and clients that check formats (the MCP SDK's
 * client checks every tool result so) would refuse the whole answer for it.
 */
export const HttpUrl = Schema.String.annotate({
  title: "HttpUrl",
  description: "An absolute `http` or `https` URL, as imported or given (it may hold characters outside ASCII, as an IRI does).",
}).pipe(
  Schema.check(Schema.isPattern(/^[Hh][Tt][Tt][Pp][Ss]?:\/\/\S+$/u), isMaxCharacters(2048), storableText),
)

/** Who made a call or a change. */
export const Actor = Schema.Struct({
  type: Schema.Literals(["api_key", "oauth_client", "user", "system", "platform"]),
  id: Schema.String,
  name: Schema.String,
}).annotate({ title: "Actor", description: "Who acted: an API key, an OAuth (MCP) client, a signed-in user, the import (`system`) or a platform job such as the rewrite job (`platform`)." })
/** Who made a call or a change. */
export type Actor = typeof Actor.Type

/** The channel a call came through: REST, MCP, the web pages, or a job of the platform itself (the rewrite job). */
export const Channel = Schema.Literals(["api", "mcp", "web", "platform"]).annotate({ title: "Channel" })
/** The channel a call came through. */
export type Channel = typeof Channel.Type

/** Where an article change came from. */
export const Origin = Schema.Literals(["api", "mcp", "editor", "rewrite"]).annotate({ title: "Origin" })
/** Where an article change came from. */
export type Origin = typeof Origin.Type

/** Article lifecycle states; set only by the platform (import, editor). */
export const ArticleStatus = Schema.Literals(["draft", "scheduled", "published", "archived"]).annotate({
  title: "ArticleStatus",
})
/** Article lifecycle states; set only by the platform (import, editor). */
export type ArticleStatus = typeof ArticleStatus.Type

/**
 * What may be an API key: `cs_` and up to 128 letters, digits or `_`. Keys the service makes are
 * `cs_` and 40 base62 characters; an import may set a known plaintext key for tests in this wider
 * shape (the contract's own example is `cs_test_known_plaintext`), and such a key must then work.
 * Anything else is refused before any lookup.
 */
export const API_KEY_PATTERN = /^cs_[A-Za-z0-9_]{1,128}$/

/** The scope of an API key. */
export const KeyScope = Schema.Literals(["write", "read-only"]).annotate({ title: "KeyScope" })
/** The scope of an API key. */
export type KeyScope = typeof KeyScope.Type

/** A backlink's category. */
export const BacklinkCategory = Schema.Literals(["industry", "local"]).annotate({ title: "BacklinkCategory" })

/** Largest revision number a request may name: PostgreSQL's integer, which stores them (2^31 - 1). */
export const MAX_REVISION_NUMBER = 2_147_483_647
