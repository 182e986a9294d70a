import { Schema } from "effect"
import { PERIOD_MONTH, parseDateBound } from "../policy/time.ts"
import { ArticleStatus, Channel, Id, SiteId, isCharacterCountBetween, MAX_REVISION_NUMBER, storableText } from "./common.ts"

/** The contract's hard ceiling for `per_page`; operators may lower it with MAX_PER_PAGE. */
export const PER_PAGE_CEILING = 100
/** Default page size. */
export const DEFAULT_PER_PAGE = 20

/**
 * A whole number in a query string or path, written in decimal digits only: `1e1`, `+2`, `0x10`,
 * `2.0`, ` 3` and the empty string are refused rather than read as numbers. Digits too many to be
 * in range (more than 16 once leading zeros are left out) are refused as out of range, which they
 * are, before they are read as a number that has lost its last digits.
 */
const intFromString = (description: string, minimum: number, maximum: number, byDefault?: number) =>
  Schema.String.pipe(
    Schema.check(
      Schema.makeFilter((s: string) =>
        !/^[0-9]+$/.test(s)
          ? "Expected a whole number written in decimal digits only"
          : s.length - (/^0*/.exec(s)?.[0].length ?? 0) > 16
            ? `Expected a value between ${minimum} and ${maximum}`
            : undefined,
      ),
    ),
    Schema.decodeTo(Schema.NumberFromString),
    Schema.decodeTo(Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum, maximum }))).annotate(byDefault === undefined ? { description } : { description, default: byDefault })),
  )

/** `page`: 1-based page number, at least 1; never clamped. */
export const PageParam = intFromString("1-based page number (default 1).", 1, Number.MAX_SAFE_INTEGER, 1)
/** `per_page`: items per page, 1 to 100; never clamped. */
export const PerPageParam = intFromString(`Items per page, 1 to ${PER_PAGE_CEILING} (default ${DEFAULT_PER_PAGE}).`, 1, PER_PAGE_CEILING, DEFAULT_PER_PAGE)

/**
 * A `from`/`to` as far as a pattern can say it (published as is in JSON Schema): four-digit
 * years (0000 too: `0000-12-31T23:00:00-01:00` is the first instant of 0001 in UTC), months 01 to 12, days 01 to 31, hours 00 to 23, minutes and seconds 00 to 59, an offset of
 * at most 23:59. What a pattern cannot say (a day its month lacks, an instant outside the years
 * once its offset is applied) is in the description and refused by `parseDateBound`.
 */
const DATE_OR_DATETIME = new RegExp(
  `^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])(?:[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]{1,9})?(?:[Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9]))?$`,
  "u",
)

const DATE_BOUND_RULES =
  "`YYYY-MM-DD` or an RFC 3339 date-time, inclusive, from 0001-01-01 to 9999-12-31 in UTC once its offset is applied (else a 400). A date its month lacks (`2026-02-30`) is a 400."

/** `from`/`to` described by `description`, checked as `DateBound` is. */
// Annotations go on the base string: JSON Schema generation drops those set after a custom filter.
const dateBound = (description: string) =>
  Schema.String.annotate({ description }).pipe(
  Schema.check(
    Schema.makeFilter((s: string) => {
      if (!DATE_OR_DATETIME.test(s)) return "Expected a date YYYY-MM-DD or an RFC 3339 date-time such as 2026-11-02T10:00:00Z"
      // The one reading of these values (resolveDateRange reads them so too): a date that does
      // not exist or an instant outside years 0001 to 9999 UTC never reaches storage.
      const bound = parseDateBound(s, false)
      return "refused" in bound ? bound.refused : undefined
    }, { toJsonSchema: () => ({ pattern: DATE_OR_DATETIME.source }) }),
  ),
)

/** `from`/`to` of an instant's field: a `YYYY-MM-DD` date or an RFC 3339 date-time; both ends inclusive. */
export const DateBound = dateBound(`${DATE_BOUND_RULES} A bare date for \`to\` means the end of that UTC day; \`from\` after \`to\` is a 400.`)

/**
 * `from`/`to` of a date's field (a backlink's `date_acquired`): an instant counts its whole UTC
 * day, however late in it a `from` falls (`resolveDateSpan`).
 */
export const DateSpanBound = dateBound(
  `${DATE_BOUND_RULES} \`date_acquired\` is a date: a date-time counts its whole UTC day (a \`from\` of 2026-10-05T18:00:00Z includes backlinks acquired on 2026-10-05). \`from\` after \`to\` is a 400.`,
)

/**
 * What `per_page` allows under an operator's `MAX_PER_PAGE` (at most the ceiling): its maximum, its
 * default (20, or the maximum if lower) and the sentence that says both, for the OpenAPI document
 * and the MCP tool schemas, which must say what the server checks with that setting.
 */
export const perPageFacts = (maxPerPage: number): { readonly maximum: number; readonly default: number; readonly description: string } => {
  const maximum = Math.min(PER_PAGE_CEILING, maxPerPage)
  const byDefault = Math.min(DEFAULT_PER_PAGE, maximum)
  return { maximum, default: byDefault, description: `Items per page, 1 to ${maximum} (default ${byDefault}).` }
}

const pageFields = {
  page: Schema.optionalKey(PageParam),
  per_page: Schema.optionalKey(PerPageParam),
}
const rangeFields = {
  from: Schema.optionalKey(DateBound),
  to: Schema.optionalKey(DateBound),
}

/** Query of `GET /sites`. */
export const ListSitesQuery = Schema.Struct({ ...pageFields }).annotate({ title: "ListSitesQuery" })
/** Query of `GET /sites`. */
export type ListSitesQuery = typeof ListSitesQuery.Type

/** The longest search query, in characters (code points). */
export const MAX_SEARCH_QUERY_CHARACTERS = 200

/**
 * `q`: a full-text search in web-search syntax, 1 to 200 characters, storable text (no NUL, no
 * unpaired surrogate). Words must all match; `"a phrase"`, `OR` and `-word` work as in web search.
 */
// Annotations go on the base string: JSON Schema generation drops those set after a custom filter.
export const SearchText = Schema.String.annotate({
  description:
    'Full-text search, 1 to 200 characters, in web-search syntax: words (all must match), `"a phrase"`, `OR`, `-word`. Case and accents are ignored; title, target keyword and body text are searched.',
}).pipe(Schema.check(isCharacterCountBetween(1, MAX_SEARCH_QUERY_CHARACTERS), storableText))

/** Query of `GET /sites/{id}/articles`. */
export const ListArticlesQuery = Schema.Struct({
  ...rangeFields,
  status: Schema.optionalKey(ArticleStatus.annotate({ description: "Only articles in this status." })),
  q: Schema.optionalKey(SearchText),
  ...pageFields,
}).annotate({ title: "ListArticlesQuery" })
/** Query of `GET /sites/{id}/articles`. */
export type ListArticlesQuery = typeof ListArticlesQuery.Type

/** Query of `GET /search`: `q` over all the account's articles, or one site's (`site_id`). */
export const SearchArticlesQuery = Schema.Struct({
  q: SearchText,
  site_id: Schema.optionalKey(SiteId.annotate({ description: "Only articles of this website." })),
  ...rangeFields,
  status: Schema.optionalKey(ArticleStatus.annotate({ description: "Only articles in this status." })),
  ...pageFields,
}).annotate({ title: "SearchArticlesQuery" })
/** Query of `GET /search`. */
export type SearchArticlesQuery = typeof SearchArticlesQuery.Type

/** Query of `GET /sites/{id}/backlinks`. */
export const ListBacklinksQuery = Schema.Struct({ from: Schema.optionalKey(DateSpanBound), to: Schema.optionalKey(DateSpanBound), ...pageFields }).annotate({
  title: "ListBacklinksQuery",
})
/** Query of `GET /sites/{id}/backlinks`. */
export type ListBacklinksQuery = typeof ListBacklinksQuery.Type

const PERIOD_PATTERN = new RegExp(`^(this_month|last_month|last_30_days|${PERIOD_MONTH})$`)

/** `period`: `this_month`, `last_month`, `last_30_days` or `YYYY-MM` (UTC, 0001-01 to 9999-12). */
export const PeriodParam = Schema.String.annotate({
  default: "this_month",
  description: "`this_month` (default), `last_month`, `last_30_days` or a UTC month `YYYY-MM` from 0001-01 to 9999-12.",
}).pipe(
  Schema.check(
    Schema.makeFilter(
      (s: string) =>
        PERIOD_PATTERN.test(s) ? undefined : "Expected this_month, last_month, last_30_days or a month YYYY-MM from 0001-01 to 9999-12",
      { toJsonSchema: () => ({ pattern: PERIOD_PATTERN.source }) },
    ),
  ),
)

/** Query of `GET /sites/{id}/stats`. */
export const StatsQuery = Schema.Struct({ period: Schema.optionalKey(PeriodParam) }).annotate({ title: "StatsQuery" })
/** Query of `GET /sites/{id}/stats`. */
export type StatsQuery = typeof StatsQuery.Type

/** Query of `GET /articles/{id}/revisions`. */
export const ListRevisionsQuery = Schema.Struct({ ...pageFields }).annotate({ title: "ListRevisionsQuery" })
/** Query of `GET /articles/{id}/revisions`. */
export type ListRevisionsQuery = typeof ListRevisionsQuery.Type

/** Query of `GET /activity`. */
export const ListActivityQuery = Schema.Struct({
  ...rangeFields,
  channel: Schema.optionalKey(Channel.annotate({ description: "Only entries of calls made through this channel: `api` (REST), `mcp`, `web` (the pages) or `platform` (the service's own jobs)." })),
  ...pageFields,
}).annotate({ title: "ListActivityQuery" })
/** Query of `GET /activity`. */
export type ListActivityQuery = typeof ListActivityQuery.Type

/** Query of `PUT /articles/{id}`. */
export const UpdateArticleQuery = Schema.Struct({
  dry_run: Schema.optionalKey(
    Schema.Literals(["true", "false"]).annotate({ description: "`true`: validate and show the result, write nothing." }),
  ),
}).annotate({ title: "UpdateArticleQuery" })

/** A path id (site, article). */
export const PathId = Id
/** A revision number in a path. */
export const RevisionNumberParam = intFromString("Revision number (1, 2, ...).", 1, MAX_REVISION_NUMBER)

/** Query of `GET /articles/{id}/diff`: `from` required, `to` defaults to the current revision. */
export const DiffQuery = Schema.Struct({
  from: intFromString("The older revision number.", 1, MAX_REVISION_NUMBER),
  to: Schema.optionalKey(intFromString("The newer revision number (default: the current revision).", 1, MAX_REVISION_NUMBER)),
}).annotate({ title: "DiffQuery" })
/** Query of `GET /articles/{id}/diff`. */
export type DiffQuery = typeof DiffQuery.Type
