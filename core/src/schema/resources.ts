import { Schema } from "effect"
import { Actor, ArticleStatus, BacklinkCategory, CalendarDate, Channel, Count, HttpUrl, Id, Ordinal, Origin, ArticleId, SiteId, Timestamp } from "./common.ts"

/** A website of the account. */
export const Website = Schema.Struct({
  id: SiteId,
  name: Schema.String,
  url: HttpUrl,
  created_at: Timestamp,
  article_count: Count,
  backlink_count: Count,
}).annotate({ title: "Website", description: "A website on the account." })
/** A website of the account. */
export type Website = typeof Website.Type

/** An article's featured image, or null. */
export const FeaturedImage = Schema.NullOr(
  Schema.Struct({ url: Schema.String, alt: Schema.String }).annotate({ title: "FeaturedImage" }),
)
/** An article's featured image, or null. */
export type FeaturedImage = typeof FeaturedImage.Type

const articleListFields = {
  id: ArticleId,
  site_id: SiteId,
  title: Schema.String,
  url: HttpUrl,
  status: ArticleStatus,
  published_at: Schema.NullOr(Timestamp),
  "target keyword": Schema.String,
  "word count": Count,
  "featured image": FeaturedImage,
}

/** An article as listed: never carries the body. */
export const ArticleListItem = Schema.Struct(articleListFields).annotate({
  title: "ArticleListItem",
  description: "An article without its body.",
})
/** An article as listed: never carries the body. */
export type ArticleListItem = typeof ArticleListItem.Type

/** One element of a body that carries `data-service-protected`, as an agent needs to know it. */
export const ProtectedLink = Schema.Struct({
  type: Schema.String.annotate({ description: "The value of `data-service-protected`, e.g. `backlink` or `internal`." }),
  href: Schema.NullOr(Schema.String).annotate({ description: "The element's `href` (or the first inside it); null when it has none." }),
  text: Schema.String.annotate({ description: "The element's text, whitespace collapsed." }),
}).annotate({
  title: "ProtectedLink",
  description: "An element carrying `data-service-protected`: every edit must keep it exactly as it is (it may move).",
})
/** One protected element of a body. */
export type ProtectedLink = typeof ProtectedLink.Type

/** One article with its full HTML body; protected links carry `data-service-protected`. */
export const Article = Schema.Struct({
  ...articleListFields,
  body: Schema.String,
  updated_at: Timestamp,
  revision: Ordinal,
  protected_links: Schema.Array(ProtectedLink).annotate({
    description: "Every element of the body carrying `data-service-protected`, in document order: keep each exactly as it is.",
  }),
}).annotate({
  title: "Article",
  description:
    "One article with its full HTML body. Links carrying `data-service-protected` are inserted backlinks or internal links and must be kept unchanged by edits; `protected_links` lists them.",
})
/** One article with its full HTML body. */
export type Article = typeof Article.Type

const { body: _body, ...articleFieldsWithoutBody } = Article.fields
/**
 * An article without its body: what a write answers when a minimal answer was asked for. Made
 * from the single article's fields; `body` is declared absent, so the two shapes never overlap.
 */
export const ArticleWithoutBody = Schema.Struct({
  ...articleFieldsWithoutBody,
  body: Schema.optionalKey(Schema.Never.annotate({ description: "Never present: the minimal answer leaves the body out." })),
}).annotate({
  title: "ArticleWithoutBody",
  description:
    "The article as a write answers it when a minimal answer was asked for (`Prefer: return=minimal`, MCP `response: \"minimal\"`): every field of the single article but `body`.",
})
/** An article without its body. */
export type ArticleWithoutBody = typeof ArticleWithoutBody.Type

/** The article of a write's answer: in full, or without its body when a minimal answer was asked for. */
const WrittenArticle = Schema.Union([Article, ArticleWithoutBody]).annotate({
  description:
    "The article after the write: in full by default; without `body` (an ArticleWithoutBody) when asked for with `Prefer: return=minimal` (MCP: `response: \"minimal\"`).",
})

/** A write's answer (as JSON) made minimal: its article without `body`, everything else as it was. */
export const minimalWriteAnswer = <R extends { readonly article: object }>(answer: R): R => {
  const { body: _dropped, ...article } = answer.article as { body?: unknown }
  return { ...answer, article }
}

/** A backlink acquired for a website. */
export const Backlink = Schema.Struct({
  id: Id,
  site_id: SiteId,
  date_acquired: CalendarDate,
  source_domain: Schema.String,
  source_url: HttpUrl,
  target_url: HttpUrl,
  anchor_text: Schema.String,
  anchor_type: Schema.String,
  category: BacklinkCategory,
}).annotate({ title: "Backlink" })
/** A backlink acquired for a website. */
export type Backlink = typeof Backlink.Type

/** The period a summary covers. */
export const PeriodRange = Schema.Struct({ key: Schema.String, from: CalendarDate, to: CalendarDate }).annotate({
  title: "PeriodRange",
  description: "The period's key as requested and its inclusive UTC dates.",
})

/** Articles and backlinks of one period, for a monthly report. */
export const PeriodSummary = Schema.Struct({
  site_id: SiteId,
  period: PeriodRange,
  articles: Schema.Struct({ count: Count, "word count": Count, items: Schema.Array(ArticleListItem) }),
  backlinks: Schema.Struct({
    count: Count,
    industry: Count,
    local: Count,
    items: Schema.Array(Backlink),
  }),
}).annotate({
  title: "PeriodSummary",
  description: "Published articles and acquired backlinks whose dates fall in the period.",
})
/** Articles and backlinks of one period. */
export type PeriodSummary = typeof PeriodSummary.Type

const revisionFields = {
  id: Id,
  article_id: ArticleId,
  number: Ordinal,
  origin: Origin,
  title: Schema.String,
  "featured image": FeaturedImage,
  reason: Schema.NullOr(Schema.String),
  actor: Actor,
  restored_from: Schema.NullOr(Ordinal),
  created_at: Timestamp,
}

/** A stored version of an article, without its body (as listed). */
export const RevisionSummary = Schema.Struct(revisionFields).annotate({ title: "RevisionSummary" })
/** A stored version of an article, without its body. */
export type RevisionSummary = typeof RevisionSummary.Type

/** A stored version of an article, with its body. */
export const Revision = Schema.Struct({ ...revisionFields, body: Schema.String }).annotate({ title: "Revision" })
/** A stored version of an article, with its body. */
export type Revision = typeof Revision.Type

/** One recorded call. */
export const ActivityEntry = Schema.Struct({
  id: Id,
  account_id: Schema.NullOr(Id),
  at: Timestamp,
  channel: Channel,
  actor: Schema.NullOr(Actor),
  action: Schema.String,
  site_id: Schema.NullOr(SiteId),
  article_id: Schema.NullOr(ArticleId),
  status: Schema.Union([Schema.Int, Schema.Literals(["ok", "error"])]),
  error_code: Schema.NullOr(Schema.String),
  duration_ms: Count,
  request_id: Schema.String,
  count: Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(1))).annotate({
    description:
      "How many calls the entry stands for: 1, or, for the entry that sums one address's or key's calls refused for authentication or a limit past 30 in one minute, how many there were (it names the first of them; `at` is the minute's start).",
  }),
}).annotate({ title: "ActivityEntry" })
/** One recorded call. */
export type ActivityEntry = typeof ActivityEntry.Type

/** Pagination facts of a list response. */
export const Pagination = Schema.Struct({
  page: Ordinal,
  per_page: Ordinal,
  total: Count,
  total_pages: Count,
}).annotate({ title: "Pagination" })
/** Pagination facts of a list response. */
export type Pagination = typeof Pagination.Type

/** The list envelope `{ data, pagination }` around items of one schema. */
export const Paginated = <S extends Schema.Top>(item: S, title: string) =>
  Schema.Struct({ data: Schema.Array(item), pagination: Pagination }).annotate({ title })

/** A page of websites. */
export const WebsitePage = Paginated(Website, "WebsitePage")
/** A page of articles. */
export const ArticlePage = Paginated(ArticleListItem, "ArticlePage")
/** A page of backlinks. */
export const BacklinkPage = Paginated(Backlink, "BacklinkPage")
/** A page of revisions. */
export const RevisionPage = Paginated(RevisionSummary, "RevisionPage")
/** A page of activity entries. */
export const ActivityPage = Paginated(ActivityEntry, "ActivityPage")

/** A search result: the article as listed plus a snippet around its best match. */
export const SearchHit = Schema.Struct({
  ...articleListFields,
  snippet: Schema.String.annotate({
    description:
      "Plain text of at most 300 characters around the best match, HTML-escaped, each match wrapped in `<mark>` and `</mark>` (the only markup).",
  }),
}).annotate({ title: "SearchHit", description: "An article that matches a search, without its body, with a snippet." })
/** A search result. */
export type SearchHit = typeof SearchHit.Type
/** A page of search results, best first. */
export const SearchPage = Paginated(SearchHit, "SearchPage")

/** A generic page as returned by use cases. */
export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly pagination: Pagination
}

/** What the sanitiser removed from a body. */
export const SanitizeReportSchema = Schema.Struct({
  changed: Schema.Boolean,
  removed: Schema.Array(Schema.Struct({ what: Schema.String, count: Count })).annotate({
    description: "What was removed, by kind: at most 50 kinds, each named in at most 100 characters; past that, the kinds removed most often and one last entry, `<n> other kinds of markup`, counting the rest.",
  }),
}).annotate({ title: "SanitizeReport" })

/** One offending protected block. */
export const ProtectedBlockViolationSchema = Schema.Struct({
  kind: Schema.Literals(["removed", "changed", "forged", "hidden"]).annotate({
    description:
      "removed: not in the new body; changed: its href, text or an attribute differs; forged: a new element claims data-service-protected; hidden: moved into an element that hides or strikes it (del, s, a details outside its summary, [hidden], [aria-hidden=\"true\"]).",
  }),
  href: Schema.NullOr(Schema.String),
  text: Schema.String,
}).annotate({ title: "ProtectedBlockViolation" })

/** One unit two writers changed differently, in an `edit_conflict` after a three-way merge. */
export const MergeConflictSchema = Schema.Struct({
  unit: Schema.String.annotate({
    description:
      "`title`, or `body/<index>`: the 0-based index of the first top-level block of the base revision's body that the conflict covers (for an insertion, the block it comes before).",
  }),
  base: Schema.String.annotate({ description: "The unit in `base_revision` (HTML of its blocks, or the title); empty where it had none." }),
  theirs: Schema.String.annotate({ description: "The unit in the article's current revision." }),
  mine: Schema.String.annotate({ description: "The unit in the request (sanitised)." }),
}).annotate({ title: "MergeConflict" })

/** What a three-way merge (`base_revision` behind the current revision) did. */
export const MergeSummary = Schema.Struct({
  base: Ordinal.annotate({ description: "The revision the request was written against (`base_revision`)." }),
  theirs: Ordinal.annotate({ description: "The article's current revision, whose changes were merged in." }),
  merged_units: Count.annotate({
    description: "Changes kept from `theirs` that the request would otherwise have undone: the title, each body block only they replaced, and each run of blocks only they added or dropped.",
  }),
}).annotate({ title: "MergeSummary" })

/** The answer to a successful (or dry-run) article edit. */
export const UpdateArticleResult = Schema.Struct({
  article: WrittenArticle,
  revision: Schema.NullOr(RevisionSummary),
  sanitized: SanitizeReportSchema,
  dry_run: Schema.optionalKey(Schema.Boolean),
  merge: Schema.optionalKey(MergeSummary),
}).annotate({
  title: "UpdateArticleResult",
  description:
    "The article after the edit, the new revision (null when nothing changed or on a dry run) and what the sanitiser removed. A dry run (`dry_run: true`) answers what the same call would: this result where the edit would apply, the same error otherwise.",
})
/** The answer to a successful (or dry-run) article edit, as the use cases make it (the article in full; transports may make it minimal). */
export type UpdateArticleResult = Omit<typeof UpdateArticleResult.Type, "article"> & { readonly article: Article }

/** The answer to a featured-image replacement. */
export const FeaturedImageResult = Schema.Struct({
  article: WrittenArticle,
  revision: Schema.NullOr(RevisionSummary),
}).annotate({ title: "FeaturedImageResult" })
/** The answer to a featured-image replacement. */
export type FeaturedImageResult = Omit<typeof FeaturedImageResult.Type, "article"> & { readonly article: Article }

/** The answer to a restore: the article and the new revision (null when it already was that state). */
export const RestoreRevisionResult = Schema.Struct({
  article: WrittenArticle,
  revision: Schema.NullOr(RevisionSummary),
}).annotate({
  title: "RestoreRevisionResult",
  description: "The article after the restore and the new revision (`restored_from` set); `revision` is null when the article already was in that state.",
})
/** The answer to a restore. */
export type RestoreRevisionResult = Omit<typeof RestoreRevisionResult.Type, "article"> & { readonly article: Article }

/** What changed between two revisions of an article. */
export const RevisionDiff = Schema.Struct({
  from: Ordinal,
  to: Ordinal,
  title: Schema.NullOr(Schema.Struct({ from: Schema.String, to: Schema.String })).annotate({
    description: "The two titles, or null when the title did not change.",
  }),
  "featured image": Schema.NullOr(Schema.Struct({ from: FeaturedImage, to: FeaturedImage })).annotate({
    description: "The two featured images (each `{ url, alt }` or null), or null when the featured image did not change: a restore brings it back too.",
  }),
  body: Schema.Struct({
    unified: Schema.String.annotate({
      description:
        "A unified diff (3 lines of context) of the two bodies with one block element a line (a paragraph, heading, list item...); empty when the bodies are the same.",
    }),
    added_words: Count.annotate({ description: "Words of the newer body that the older lacks there." }),
    removed_words: Count.annotate({ description: "Words of the older body that the newer lacks there." }),
    granularity: Schema.Literals(["word", "block", "whole"]).annotate({
      description:
        "How finely the bodies were compared within one comparison's budget of work: word (lines and words aligned); block (lines aligned, the words of each changed line counted as removed and added whole); whole (only the lines both share at the start and the end kept, every line between shown removed and added). See note.",
    }),
    note: Schema.NullOr(Schema.String).annotate({
      description: "When granularity is not word: a sentence saying the comparison is coarser and what that means; else null.",
    }),
  }),
}).annotate({ title: "RevisionDiff", description: "What changed from revision `from` to revision `to`." })
/** What changed between two revisions. */
export type RevisionDiff = typeof RevisionDiff.Type

/** An RFC 9457 problem as every error response carries it. */
export const Problem = Schema.Struct({
  type: Schema.String.annotate({ description: "`{base_url}/problems/<code>`: a page saying what the problem means and what to do about it." }),
  title: Schema.String,
  status: Schema.Int,
  code: Schema.String,
  detail: Schema.String,
  request_id: Schema.String,
  errors: Schema.optionalKey(
    Schema.Array(
      Schema.Struct({
        path: Schema.String.annotate({
          description: "The field: its keys and 0-based indexes joined by `/` (`edits/0/find`), a `~` in a key written `~0` and a `/` `~1`; `(request)`, `(body)` or `(root)` for the whole request or body.",
        }),
        message: Schema.String,
        count: Schema.optionalKey(Count.annotate({ description: "`edit_not_applicable`: how many times the edit's `find` occurs, counted up to 2: 0, or 2 for \"2 or more\" (the search stops at the second occurrence)." })),
      }),
    ).annotate({ description: "The fields at fault: at most 20 for `invalid_request` (the detail then counts them all), a key or path shown cut at 100 characters." }),
  ),
  blocks: Schema.optionalKey(Schema.Array(ProtectedBlockViolationSchema)),
  conflicts: Schema.optionalKey(Schema.Array(MergeConflictSchema)),
  retry_after: Schema.optionalKey(Count),
}).annotate({ title: "Problem", description: "RFC 9457 problem details, `application/problem+json`." })
/** An RFC 9457 problem. */
export type Problem = typeof Problem.Type
