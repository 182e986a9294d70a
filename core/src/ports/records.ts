import type { Actor, ArticleStatus, Channel, KeyScope, Origin } from "../schema/common.ts"
import type { ActivityEntry, Article, Backlink, FeaturedImage, Revision, Website } from "../schema/resources.ts"

/** A stored account; `password_hash` never leaves the core's adapters and use cases. */
export interface AccountRecord {
  readonly id: string
  readonly email: string
  readonly name: string
  readonly password_hash: string
  readonly created_at: string
}

/** A stored API key: only the hash of the secret is kept. */
export interface ApiKeyRecord {
  readonly id: string
  readonly account_id: string
  readonly name: string
  readonly scope: KeyScope
  readonly key_hash: string
  readonly created_at: string
  readonly last_used_at: string | null
  readonly revoked_at: string | null
}

/** A stored site with its owner. */
export interface SiteRecord extends Omit<Website, "article_count" | "backlink_count"> {
  readonly account_id: string
}

/**
 * A stored article with its owner. Stored names are snake_case; the public resource spells three of
 * them as the seed's words (`"target keyword"`, `"word count"`, `"featured image"`), mapped in views;
 * `protected_links` is derived from the body in the view.
 */
export interface ArticleRecord extends Omit<Article, "target keyword" | "word count" | "featured image" | "protected_links"> {
  readonly account_id: string
  readonly target_keyword: string
  readonly word_count: number
  readonly featured_image: FeaturedImage
}

/** A stored article without its body, as lists carry it. */
export type ArticleSummaryRecord = Omit<ArticleRecord, "body">

/** A stored backlink with its owner. */
export interface BacklinkRecord extends Backlink {
  readonly account_id: string
}

/** A stored revision (stored names, see `ArticleRecord`). */
export interface RevisionRecord extends Omit<Revision, "featured image"> {
  readonly account_id: string
  readonly featured_image: FeaturedImage
}

/** A stored revision without its body, as a list of revisions reads it. */
export type RevisionSummaryRecord = Omit<RevisionRecord, "body">

/** A stored activity entry. */
export type ActivityRecord = ActivityEntry

/** Offset paging as repositories take it. */
export interface Slice {
  readonly offset: number
  readonly limit: number
}

/** A slice of rows and the total that matched. */
export interface SliceResult<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
}

/** Filter of an article query; instants are RFC 3339 UTC strings, both ends inclusive. */
export interface ArticleFilter {
  readonly siteId: string
  readonly from?: string
  readonly to?: string
  readonly status?: ArticleStatus
}

/**
 * Filter of a full-text search: `query` in web-search syntax (words all required, `"a phrase"`,
 * `OR`, `-word`), case and accents ignored; optionally one site, a status and a publication range.
 */
export interface ArticleSearchFilter {
  readonly query: string
  readonly siteId?: string
  readonly from?: string
  readonly to?: string
  readonly status?: ArticleStatus
  /** Whether each hit needs its headline (a snippet); lists that show none skip its cost. */
  readonly headlines: boolean
}

/**
 * A search hit: the article without its body, and its headlines (every word of the query marked
 * between the search marks, `HighlightAll` as PostgreSQL's `ts_headline` reads it), or "" when not
 * asked for: the body's searched text from `HEADLINE_BEFORE` characters before its first mark, at
 * most `HEADLINE_CHARACTERS` of it (`headlineWindow`), the title's and the target keyword's whole.
 */
export interface ArticleSearchRecord extends ArticleSummaryRecord {
  readonly headline: string
  readonly titleHeadline: string
  readonly keywordHeadline: string
}

/** Filter of a backlink query; dates are `YYYY-MM-DD`, both ends inclusive. */
export interface BacklinkFilter {
  readonly siteId: string
  readonly fromDate?: string
  readonly toDate?: string
}

/** Filter of an activity query. */
export interface ActivityFilter {
  readonly from?: string
  readonly to?: string
  readonly channel?: Channel
  readonly articleId?: string
  /** `ok`: entries without an error code; `error`: entries with one (refused or failed calls). */
  readonly outcome?: "ok" | "error"
  /** Only entries whose `action` is one of these (an empty list matches nothing); an action followed by a name (`POST /connect/keys “ci”`) counts as its action. */
  readonly actions?: ReadonlyArray<string>
}

/** The new state of an article that a change writes, with its revision and activity entry. */
export interface ArticleChange {
  readonly title: string
  readonly body: string
  readonly word_count: number
  readonly featured_image: FeaturedImage
  readonly updated_at: string
  readonly revision: {
    readonly id: string
    readonly origin: Origin
    readonly reason: string | null
    readonly actor: Actor
    readonly restored_from: number | null
    readonly created_at: string
  }
  /** The activity entry of the call that made the change, written in the same transaction. */
  readonly activity: ActivityRecord | null
  /** The rewrite job's line that made the change, recorded in the same transaction (see RewriteLedger). */
  readonly rewrite_id?: string
  /**
   * The idempotency key of the call that made the change (held, pending): marked applied, with the
   * change's revision, in the same transaction (see IdempotencyStore's `applied`); the key is then
   * this call's (`token`), whoever held it: the answer kept for it is that of the call that made its change.
   */
  readonly idempotency?: { readonly key: string; readonly fingerprint: string; readonly token: string }
}

/** The daily edit budget a change is counted against, checked in the same transaction. */
export interface EditBudget {
  /** UTC day `YYYY-MM-DD`. */
  readonly day: string
  readonly limit: number
  /** Seconds until the next UTC midnight, for `Retry-After`. */
  readonly retryAfterSeconds: number
}

/** What a committed change produced. */
export interface CommittedChange {
  readonly article: ArticleRecord
  readonly revision: RevisionRecord
  /** Edits still allowed today after this one; null when the change was not counted (no budget). */
  readonly editsRemaining: number | null
}

/** A line of the platform's rewrite job that was applied, kept so that it is applied once. */
export interface AppliedRewriteRecord {
  readonly rewrite_id: string
  readonly account_id: string
  readonly article_id: string
  /** The revision the line made, or null when the article already read as the line asked. */
  readonly revision: number | null
  readonly applied_at: string
}

/** Where an article lives: its account and site. */
export interface ArticleLocation {
  readonly account_id: string
  readonly site_id: string
}
