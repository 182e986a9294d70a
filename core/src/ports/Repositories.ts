import { Context, type Effect, type Option } from "effect"
import type { NotFound, Unavailable } from "../errors.ts"
import type { Website } from "../schema/resources.ts"
import type {
  AccountRecord,
  ActivityFilter,
  ActivityRecord,
  ApiKeyRecord,
  ArticleFilter,
  ArticleLocation,
  ArticleRecord,
  ArticleSearchFilter,
  ArticleSearchRecord,
  ArticleSummaryRecord,
  BacklinkFilter,
  BacklinkRecord,
  RevisionRecord,
  RevisionSummaryRecord,
  Slice,
  SliceResult,
} from "./records.ts"

/** Accounts and their sign-in secrets. */
export class AccountRepository extends Context.Service<AccountRepository, {
  readonly findByEmail: (email: string) => Effect.Effect<Option.Option<AccountRecord>, Unavailable>
  readonly get: (id: string) => Effect.Effect<AccountRecord, NotFound | Unavailable>
  readonly insert: (account: AccountRecord) => Effect.Effect<void, Unavailable>
  /** Whether any account exists: the demo is seeded only into an empty database. */
  readonly hasAny: Effect.Effect<boolean, Unavailable>
}>()("core/AccountRepository") {}

/** API keys, looked up by the hash of their secret. */
export class ApiKeyRepository extends Context.Service<ApiKeyRepository, {
  readonly findByHash: (hash: string) => Effect.Effect<Option.Option<ApiKeyRecord>, Unavailable>
  /** Newest first (created_at descending), then id ascending. */
  readonly list: (accountId: string) => Effect.Effect<ReadonlyArray<ApiKeyRecord>, Unavailable>
  /** Stores the key, and `activity` (the entry of the call that made it) with it, atomically. */
  readonly insert: (key: ApiKeyRecord, activity?: ActivityRecord) => Effect.Effect<void, Unavailable>
  /**
   * Marks the key revoked at `at` unless it is revoked already, in one step (of two revocations at
   * once, on any instance, exactly one revokes it): the revocation time it holds, and whether this
   * call made it (`already`: it was revoked before, its time kept). Another account's key is NotFound.
   * `activity` (the entry of the call) is written atomically with the revocation, only by the call
   * that made it.
   */
  readonly revoke: (
    accountId: string,
    keyId: string,
    at: string,
    activity?: ActivityRecord,
  ) => Effect.Effect<{ readonly revokedAt: string; readonly already: boolean }, NotFound | Unavailable>
  /** Records a use; best effort, at most about once a minute per key is enough. */
  readonly touch: (keyId: string, at: string) => Effect.Effect<void, Unavailable>
}>()("core/ApiKeyRepository") {}

/** Websites of accounts, with their article and backlink counts. */
export class SiteRepository extends Context.Service<SiteRepository, {
  readonly list: (accountId: string, slice: Slice) => Effect.Effect<SliceResult<Website>, Unavailable>
  /** Another account's site is NotFound, exactly like a missing one. */
  readonly get: (accountId: string, siteId: string) => Effect.Effect<Website, NotFound | Unavailable>
  /** Succeeds when the account owns the site, without counting anything; otherwise NotFound. */
  readonly require: (accountId: string, siteId: string) => Effect.Effect<void, NotFound | Unavailable>
}>()("core/SiteRepository") {}

/** Articles: reads. Writes go through the ArticleWriter unit of work. */
export class ArticleRepository extends Context.Service<ArticleRepository, {
  /** Without bodies; ordered by published_at descending (nulls last), then id ascending; `slice` absent means all. */
  readonly list: (
    accountId: string,
    filter: ArticleFilter,
    slice: Slice | undefined,
  ) => Effect.Effect<SliceResult<ArticleSummaryRecord>, Unavailable>
  readonly get: (accountId: string, articleId: string) => Effect.Effect<ArticleRecord, NotFound | Unavailable>
  /**
   * Full-text search over the account's articles (title, target keyword, body text as
   * `searchTextOfHtml` reads it), case and accents ignored. Best first: a title that holds any of
   * the query's positive terms (`titleTermsQuery`) above one that holds none, then by relevance, ties by published_at descending (nulls
   * last), then id. A committed change is found by its new words at once. `slice` absent means all.
   */
  readonly search: (
    accountId: string,
    filter: ArticleSearchFilter,
    slice: Slice | undefined,
  ) => Effect.Effect<SliceResult<ArticleSearchRecord>, Unavailable>
  /**
   * Up to `limit` of the account's articles (optionally of one site) whose id starts with
   * `prefix`, or whose title does ignoring case, for argument completion: the id matches first in
   * id order, then the title matches by title and id. An empty prefix matches every article.
   */
  readonly complete: (
    accountId: string,
    prefix: string,
    limit: number,
    siteId?: string,
  ) => Effect.Effect<ReadonlyArray<{ readonly id: string; readonly title: string }>, Unavailable>
  /**
   * Which account and site an article belongs to (no body read): for the platform's own jobs, and
   * for an activity entry's site once the account is compared with the caller's; never to answer a
   * caller's request.
   */
  readonly locate: (articleId: string) => Effect.Effect<Option.Option<ArticleLocation>, Unavailable>
}>()("core/ArticleRepository") {}

/** Backlinks: read only through the interface. */
export class BacklinkRepository extends Context.Service<BacklinkRepository, {
  /** Ordered by date_acquired descending, then id ascending; `slice` absent means all. */
  readonly list: (
    accountId: string,
    filter: BacklinkFilter,
    slice: Slice | undefined,
  ) => Effect.Effect<SliceResult<BacklinkRecord>, Unavailable>
}>()("core/BacklinkRepository") {}

/** Article revisions. */
export class RevisionRepository extends Context.Service<RevisionRepository, {
  /**
   * Newest first, without bodies: a list never reads one (a page of 100 revisions of a 1 MiB
   * article would read 100 MiB to show their titles); `get` reads one revision whole.
   */
  readonly list: (
    accountId: string,
    articleId: string,
    slice: Slice,
  ) => Effect.Effect<SliceResult<RevisionSummaryRecord>, Unavailable>
  readonly get: (
    accountId: string,
    articleId: string,
    number: number,
  ) => Effect.Effect<RevisionRecord, NotFound | Unavailable>
}>()("core/RevisionRepository") {}

/** The activity log. */
export class ActivityLog extends Context.Service<ActivityLog, {
  /**
   * Idempotent by `request_id` and channel: an entry already written with a change is not written
   * twice. A call refused at the gate names its source (`refusedBy`, see `refusalSourceOf`): past
   * REFUSED_ENTRIES_PER_MINUTE of the source in a minute, it is not an entry of its own but adds
   * one to the `count` of the minute's summary entry (`entryToWrite`), so a flood costs a few rows.
   */
  readonly record: (entry: ActivityRecord, refusedBy?: string) => Effect.Effect<void, Unavailable>
  /**
   * Whether a call of source `refusedBy` refused at `atMs` would only add to the count of a
   * summary entry this instance has begun already (`RefusalBudget.folds`): its own fields, the
   * article's site among them, would not be written, so they need not be looked up.
   */
  readonly folds: (refusedBy: string, atMs: number) => boolean
  /** Newest first; the account's own entries only. */
  readonly list: (
    accountId: string,
    filter: ActivityFilter,
    slice: Slice,
  ) => Effect.Effect<SliceResult<ActivityRecord>, Unavailable>
}>()("core/ActivityLog") {}
