import { Schema } from "effect"
import { API_KEY_PATTERN, ArticleStatus, HttpUrl, Id, isMaxCharacters, KeyScope, StorableString, storableText } from "./common.ts"
import { Backlink } from "./resources.ts"
import { parseDateBound } from "../policy/time.ts"
import { DateBound } from "./queries.ts"
import { AccountName, Alt, ApiKeyName, BODY_LIMIT_MESSAGE, isWithinBodyLimit, NewPassword, Title } from "./writes.ts"

/** Largest target keyword of an imported article, in characters: it is kept in every answer about the article (idempotency records included). */
export const MAX_TARGET_KEYWORD_LENGTH = 200

/** Largest site name in an import file, in characters: it is shown in lists and pages. */
export const MAX_SITE_NAME_LENGTH = 200

/** An article in an import file. */
export const ImportArticle = Schema.Struct({
  id: Schema.optionalKey(Id),
  // The same rule as an edit's title: 1 to 300 characters after trimming (the title is stored trimmed).
  title: Title,
  url: HttpUrl,
  status: ArticleStatus,
  published_at: Schema.optionalKey(Schema.NullOr(DateBound)),
  "target keyword": Schema.optionalKey(StorableString.pipe(Schema.check(isMaxCharacters(MAX_TARGET_KEYWORD_LENGTH)))),
  // at most 1 MiB of UTF-8, as an edit's: an article imported larger could never be edited as a whole again
  body: Schema.String.pipe(Schema.check(Schema.makeFilter((b: string) => (isWithinBodyLimit(b) ? undefined : BODY_LIMIT_MESSAGE)), storableText)),
  // the alt text an edit may set, at most as long
  "featured image": Schema.optionalKey(Schema.NullOr(Schema.Struct({ url: HttpUrl, alt: Schema.optionalKey(Alt) }))),
})

/** Largest source domain of an imported backlink, in characters: the longest name DNS allows. */
export const MAX_SOURCE_DOMAIN_LENGTH = 253

/** Largest anchor text of an imported backlink, in characters (as an image's alt text): it is in every backlink list and report. */
export const MAX_ANCHOR_TEXT_LENGTH = 500

/** Largest anchor type of an imported backlink (`exact`, `branded`, ...), in characters. */
export const MAX_ANCHOR_TYPE_LENGTH = 100

/**
 * A backlink in an import file. Every text is bounded (its URLs by HttpUrl, its category by its
 * values): an import is the only way backlinks are made, and each is in every list and report of
 * its site.
 */
export const ImportBacklink = (() => {
  // The resource's own fields, less the ones the file's nesting gives (site) or the service may make (id).
  const { id: _id, site_id: _site, ...fields } = Backlink.fields
  return Schema.Struct({
    id: Schema.optionalKey(Id),
    ...fields,
    // A date that exists and PostgreSQL stores (years 0001 to 9999), as for `from`/`to`.
    date_acquired: fields.date_acquired.pipe(
      Schema.check(Schema.makeFilter((s: string) => {
        const bound = parseDateBound(s, false)
        return "refused" in bound ? bound.refused : undefined
      })),
    ),
    source_domain: StorableString.pipe(Schema.check(isMaxCharacters(MAX_SOURCE_DOMAIN_LENGTH))),
    anchor_text: StorableString.pipe(Schema.check(isMaxCharacters(MAX_ANCHOR_TEXT_LENGTH))),
    anchor_type: StorableString.pipe(Schema.check(isMaxCharacters(MAX_ANCHOR_TYPE_LENGTH))),
  })
})()

/** A site in an import file. */
export const ImportSite = Schema.Struct({
  id: Schema.optionalKey(Id),
  name: Schema.String.pipe(Schema.check(Schema.isNonEmpty(), isMaxCharacters(MAX_SITE_NAME_LENGTH), storableText)),
  url: HttpUrl,
  articles: Schema.optionalKey(Schema.Array(ImportArticle)),
  backlinks: Schema.optionalKey(Schema.Array(ImportBacklink)),
})

/** An API key in an import file; `key` sets a known plaintext (stored hashed). */
export const ImportApiKey = Schema.Struct({
  id: Schema.optionalKey(Id),
  name: ApiKeyName,
  key: Schema.optionalKey(Schema.String.pipe(Schema.check(Schema.isPattern(API_KEY_PATTERN)))),
  scope: KeyScope,
})

/** An account in an import file. */
export const ImportAccount = Schema.Struct({
  id: Schema.optionalKey(Id),
  email: Schema.String.pipe(Schema.check(Schema.isPattern(/^[^\s@]+@[^\s@]+$/), isMaxCharacters(320), storableText)),
  password: NewPassword,
  name: Schema.optionalKey(AccountName),
  api_keys: Schema.optionalKey(Schema.Array(ImportApiKey)),
  sites: Schema.optionalKey(Schema.Array(ImportSite)),
})

/** The admin import file: accounts with their keys, sites, articles and backlinks. */
export const ImportFile = Schema.Struct({ accounts: Schema.Array(ImportAccount) }).annotate({ title: "ImportFile" })
/** The admin import file. */
export type ImportFile = typeof ImportFile.Type
