/**
 * Persistence models: one MikroORM entity per table, defined with `defineEntity` (no decorators).
 * They never leave this adapter: `mapping.ts` turns them into the core's record types.
 * Longer than 300 lines: every table of the schema, one after another, as the database sees it.
 */
import type { Actor } from "@content-site/core"
import { defineEntity, p, type TriggerDef } from "@mikro-orm/core"
import { TERMS_RECOUNTED_PER_ROW } from "../migrations/Migration20261128120000_termChangesPerRow.ts"

/**
 * A row-level trigger that announces a change of the row on the event bus's channel (`cs_events`,
 * see `bus.ts`) as `<prefix><old id>`, delivered on commit. The service publishes the same events
 * itself (PostgreSQL delivers one of identical notifications sent in one transaction); the
 * triggers make a change made by hand in SQL, or by any other tool, reach every instance's
 * in-process copy too. A session with `session_replication_role = replica` skips them. A `when`
 * condition is written as PostgreSQL prints it back, so the schema diff finds nothing to change.
 */
const announceChange = (name: string, prefix: string, events: TriggerDef["events"], when?: string): TriggerDef => ({
  name,
  timing: "after",
  events,
  forEach: "row",
  body: `perform pg_notify('cs_events', '${prefix}' || old.id); return null;`,
  ...(when !== undefined ? { when } : {}),
})

export const AccountEntity = defineEntity({
  name: "Account",
  tableName: "accounts",
  triggers: [announceChange("changed", "account:", ["update", "delete"])],
  properties: {
    id: p.string().length(128).primary(),
    email: p.string().length(320).unique("accounts_email_unique"),
    name: p.text(),
    passwordHash: p.text(),
    createdAt: p.datetime(3),
  },
})

export const ApiKeyEntity = defineEntity({
  name: "ApiKey",
  tableName: "api_keys",
  triggers: [
    // a use (`last_used_at`) alone is not announced: it changes nothing a cache answers from
    announceChange("changed", "key:", ["update"], `((to_jsonb(old.*) - 'last_used_at'::text) IS DISTINCT FROM (to_jsonb(new.*) - 'last_used_at'::text))`),
    announceChange("deleted", "key:", ["delete"]),
  ],
  properties: {
    id: p.string().length(128).primary(),
    accountId: p.string().length(128).index("api_keys_account_id_index"),
    name: p.text(),
    scope: p.string().length(16),
    keyHash: p.string().length(128).unique("api_keys_key_hash_unique"),
    createdAt: p.datetime(3),
    lastUsedAt: p.datetime(3).nullable(),
    revokedAt: p.datetime(3).nullable(),
  },
})

export const SiteEntity = defineEntity({
  name: "Site",
  tableName: "sites",
  indexes: [{ name: "sites_account_name_index", properties: ["accountId", "name", "id"] }],
  properties: {
    id: p.string().length(128).primary(),
    accountId: p.string().length(128),
    name: p.text(),
    url: p.string().length(2048),
    createdAt: p.datetime(3),
  },
})

/**
 * Statement triggers on `articles` keep `article_counts` (articles per account, site, status and
 * UTC day of publication, `''` when unpublished) in step with every insert, update and delete, in
 * the same transaction; an article list's `total` is read from it. An edit that changes neither
 * status nor publication day writes no count. Raw DDL (transition tables): the schema diff only
 * checks that they exist.
 */
const articleTrigger = (name: string, event: "insert" | "update" | "delete", tables: string) => ({
  name,
  timing: "after" as const,
  events: [event],
  forEach: "statement" as const,
  expression: `create trigger "${name}" after ${event} on "articles" referencing ${tables} for each statement execute function "articles_${name}_fn"()`,
})

/**
 * The columns full-text search matches (migrations articleSearch and articleTitleSearch), with
 * their generation expressions as PostgreSQL prints them back: stored generated columns the
 * database computes in the statement of every write of an article, the whole article's vector
 * (title, target keyword and body's text, weighted A, B, C) and the title's. They are not properties
 * of the entity: MikroORM reads a generated property back after every insert and update
 * (`returning`), which sent both vectors (kilobytes for a long article) to the service on every
 * edit for nothing. The schema diff checks them by hand (`schemaDiff` in `index.ts`); only
 * search's hand-written SQL reads them.
 */
export const SEARCH_COLUMNS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  articles: {
    search_vector:
      "((setweight(to_tsvector('cs_search'::regconfig, cs_search_plain(title)), 'A'::\"char\") || setweight(to_tsvector('cs_search'::regconfig, cs_search_plain(target_keyword)), 'B'::\"char\")) || setweight(to_tsvector('cs_search'::regconfig, cs_search_text(body)), 'C'::\"char\"))",
    title_vector: "to_tsvector('cs_search'::regconfig, cs_search_plain(title))",
  },
}

export const ArticleEntity = defineEntity({
  name: "Article",
  tableName: "articles",
  triggers: [
    articleTrigger("counted", "insert", "new table as new_rows"),
    articleTrigger("recounted", "update", "old table as old_rows new table as new_rows"),
    articleTrigger("uncounted", "delete", "old table as old_rows"),
    // `article_term_counts` (migration articleTermCounts): a one-word search's total
    articleTrigger("terms_counted", "insert", "new table as new_rows"),
    // an edit's added and removed words, per updated row (migration termChangesPerRow)
    { name: "terms_recounted", timing: "after" as const, events: ["update" as const], forEach: "row" as const, expression: TERMS_RECOUNTED_PER_ROW },
    articleTrigger("terms_uncounted", "delete", "old table as old_rows"),
  ],
  // A site's list in its order (newest published first, then id), covering its filters, so a page
  // far down is found in the index alone before the rows are read (`repositories.ts`, deferred join).
  indexes: [
    {
      name: "articles_site_list_index",
      properties: ["siteId", "publishedAt", "id"],
      columns: [{ name: "site_id" }, { name: "published_at", sort: "desc", nulls: "last" }, { name: "id" }],
      include: ["accountId", "status"],
    },
    // full-text search (migration articleSearch): `@@` on the generated vector (SEARCH_COLUMNS)
    { name: "articles_search_index", expression: `create index "articles_search_index" on "articles" using gin ("search_vector")` },
    // the title tier of a search (migration articleTitleSearch): `@@` on the title's own vector
    { name: "articles_title_search_index", expression: `create index "articles_title_search_index" on "articles" using gin ("title_vector")` },
  ],
  properties: {
    id: p.string().length(128).primary(),
    accountId: p.string().length(128).index("articles_account_id_index"),
    siteId: p.string().length(128),
    title: p.text(),
    url: p.string().length(2048),
    status: p.string().length(16),
    publishedAt: p.datetime(3).nullable(),
    targetKeyword: p.text(),
    wordCount: p.integer(),
    featuredImage: p.json<{ url: string; alt: string }>().nullable(),
    body: p.text(),
    updatedAt: p.datetime(3),
    revision: p.integer(),
    // `search_vector` and `title_vector`, what full-text search matches: generated columns that are
    // not properties (SEARCH_COLUMNS; checked by `schemaDiff` in `index.ts`), so no write reads them back.
  },
})

export const BacklinkEntity = defineEntity({
  name: "Backlink",
  tableName: "backlinks",
  indexes: [{ name: "backlinks_site_date_index", properties: ["siteId", "dateAcquired", "id"] }],
  properties: {
    id: p.string().length(128).primary(),
    accountId: p.string().length(128).index("backlinks_account_id_index"),
    siteId: p.string().length(128),
    dateAcquired: p.string().length(10),
    sourceDomain: p.text(),
    sourceUrl: p.string().length(2048),
    targetUrl: p.string().length(2048),
    anchorText: p.text(),
    anchorType: p.text(),
    category: p.string().length(16),
  },
})

export const RevisionEntity = defineEntity({
  name: "Revision",
  tableName: "revisions",
  uniques: [{ name: "revisions_article_number_unique", properties: ["articleId", "number"] }],
  properties: {
    id: p.string().length(128).primary(),
    accountId: p.string().length(128),
    articleId: p.string().length(128),
    number: p.integer(),
    origin: p.string().length(16),
    title: p.text(),
    body: p.text(),
    featuredImage: p.json<{ url: string; alt: string }>().nullable(),
    reason: p.text().nullable(),
    actor: p.json<Actor>(),
    restoredFrom: p.integer().nullable(),
    createdAt: p.datetime(3),
  },
})

/**
 * Statement triggers on `activity` keep `activity_counts` (entries per account, channel and UTC day)
 * in step with every insert and delete, by the service or by hand, in the same transaction; the
 * activity API's `total` is read from it instead of counting millions of rows. Declared as raw DDL
 * (a transition table), so the schema diff only checks that they exist.
 */
const COUNTED = `create trigger "counted" after insert on "activity" referencing new table as new_rows for each statement execute function "activity_counted_fn"()`
const UNCOUNTED = `create trigger "uncounted" after delete on "activity" referencing old table as old_rows for each statement execute function "activity_uncounted_fn"()`

export const ActivityEntity = defineEntity({
  name: "Activity",
  tableName: "activity",
  // Partitioned by month of `at` (migration `partitionedActivity`, months made by `partitions.ts`):
  // every unique key holds `at`, so idempotence by (channel, request_id) is the journal's insert's.
  uniques: [{ name: "activity_channel_request_unique", properties: ["channel", "requestId", "at"] }],
  triggers: [
    { name: "counted", timing: "after", events: ["insert"], forEach: "statement", expression: COUNTED },
    { name: "uncounted", timing: "after", events: ["delete"], forEach: "statement", expression: UNCOUNTED },
  ],
  indexes: [
    { name: "activity_account_at_index", properties: ["accountId", "at", "id"] },
    { name: "activity_account_channel_at_index", properties: ["accountId", "channel", "at", "id"] },
  ],
  properties: {
    id: p.string().length(128).primary(),
    accountId: p.string().length(128).nullable(),
    at: p.datetime(3).primary(),
    channel: p.string().length(8),
    actor: p.json<Actor>().nullable(),
    action: p.text(),
    siteId: p.string().length(128).nullable(),
    articleId: p.string().length(128).nullable(),
    status: p.string().length(16),
    errorCode: p.text().nullable(),
    durationMs: p.integer(),
    /** Calls the entry stands for: 1, or the refused calls of one source and minute summed (`refusedCalls.ts`). */
    count: p.integer().default(1),
    requestId: p.string().length(200),
  },
})

/** Activity entries per account, channel and UTC day (kept by the triggers on `activity`). */
export const ActivityCountEntity = defineEntity({
  name: "ActivityCount",
  tableName: "activity_counts",
  properties: {
    accountId: p.string().length(128).primary(),
    channel: p.string().length(8).primary(),
    day: p.string().length(10).primary(),
    n: p.bigint("number"),
  },
})

/** Articles per account, site, status and UTC day of publication (kept by the triggers on `articles`). */
export const ArticleCountEntity = defineEntity({
  name: "ArticleCount",
  tableName: "article_counts",
  // A date-filtered list's total without a status sums a range of days over every status: the
  // primary key puts status before day, so this index reads just those days (index-only).
  indexes: [{ name: "article_counts_site_day_index", properties: ["accountId", "siteId", "day"], include: ["n"] }],
  properties: {
    accountId: p.string().length(128).primary(),
    siteId: p.string().length(128).primary(),
    status: p.string().length(16).primary(),
    day: p.string().length(10).primary(),
    n: p.bigint("number"),
  },
})

/**
 * Articles per account, search term (a lexeme of `search_vector`), site and status, as inserts and
 * deletes left them and housekeeping folded `article_term_changes` in (the `terms_*` triggers on
 * `articles`, in the transaction of every change): with those changes, a one-word search's exact
 * total without visiting its matches (migration articleTermCounts).
 */
export const ArticleTermCountEntity = defineEntity({
  name: "ArticleTermCount",
  tableName: "article_term_counts",
  properties: {
    accountId: p.string().length(128).primary(),
    term: p.text().primary(),
    siteId: p.string().length(128).primary(),
    status: p.string().length(16).primary(),
    n: p.bigint("number"),
  },
})

/**
 * The terms an update of articles added (`d` > 0) or removed (`d` < 0), per account, site and
 * status: at most two rows for an edit of one article, appended by the `terms_recounted` trigger
 * in the edit's transaction and folded into `article_term_counts` by housekeeping.
 */
export const ArticleTermChangeEntity = defineEntity({
  name: "ArticleTermChange",
  tableName: "article_term_changes",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    accountId: p.string().length(128).index("article_term_changes_account_id_index"),
    siteId: p.string().length(128),
    status: p.string().length(16),
    terms: p.array().columnType("text[]"),
    d: p.bigint("number"),
  },
})

/** Article changes counted per account and UTC day (the daily edit budget). */
export const EditCounterEntity = defineEntity({
  name: "EditCounter",
  tableName: "edit_counters",
  properties: {
    accountId: p.string().length(128).primary(),
    day: p.string().length(10).primary(),
    count: p.integer(),
  },
})

/** How far each activity journal file's summary lines were added to their entries (`activityJournal.ts`). */
export const ActivityJournalMarkEntity = defineEntity({
  name: "ActivityJournalMark",
  tableName: "activity_journal_marks",
  properties: {
    file: p.string().length(200).primary(),
    bytes: p.bigint("number"),
    at: p.datetime(3),
  },
})

/** Fixed-window request counters shared by every instance. */
export const LimitCounterEntity = defineEntity({
  name: "LimitCounter",
  tableName: "limit_counters",
  properties: {
    key: p.string().length(300).primary(),
    windowStart: p.bigint("number"),
    count: p.integer(),
  },
})

/** Expiring payloads of the OAuth server's models and web sessions. */
export const OAuthPayloadEntity = defineEntity({
  name: "OAuthPayload",
  tableName: "oauth_payloads",
  // grants are kept in process (`oauth.ts`); the other models are read from the table each time
  triggers: [announceChange("grant_changed", "oauth:Grant:", ["update", "delete"], "((old.model)::text = 'Grant'::text)")],
  properties: {
    model: p.string().length(64).primary(),
    id: p.string().length(512).primary(),
    payload: p.json<Record<string, unknown>>(),
    uid: p.string().length(512).nullable().index("oauth_payloads_uid_index"),
    userCode: p.string().length(512).nullable().index("oauth_payloads_user_code_index"),
    grantId: p.string().length(512).nullable().index("oauth_payloads_grant_id_index"),
    accountId: p.string().length(128).nullable().index("oauth_payloads_account_id_index"),
    expiresAt: p.datetime(3).nullable(),
    consumedAt: p.datetime(3).nullable(),
  },
})

/**
 * Idempotency keys per account: the request's fingerprint and, once answered, the answer a retry
 * gets again. A pending row (no status yet) is held until `lease_until`; every row until `expires_at`.
 * A write's answer keeps its text without the article's body and names the revision the body is
 * read from (`revision_article_id`, `revision_number`); status 0 keeps nothing (a dry run, or a
 * refusal too large to keep: a retry runs again). `lease_token` is the token of the request that
 * holds the row (each reservation makes one): only it keeps its answer or frees it.
 */
export const IdempotencyKeyEntity = defineEntity({
  name: "IdempotencyKey",
  tableName: "idempotency_keys",
  indexes: [{ name: "idempotency_keys_expires_at_index", properties: ["expiresAt"] }],
  properties: {
    accountId: p.string().length(128).primary(),
    key: p.string().length(255).primary(),
    fingerprint: p.string().length(64),
    status: p.integer().nullable(),
    headers: p.json<Record<string, string>>().nullable(),
    body: p.text().nullable(),
    revisionArticleId: p.string().length(128).nullable(),
    revisionNumber: p.integer().nullable(),
    leaseToken: p.string().length(64).nullable(),
    leaseUntil: p.datetime(3),
    expiresAt: p.datetime(3),
  },
})

/** Applied lines of the platform's rewrite job, by rewrite_id: a batch run again applies nothing twice. */
export const AppliedRewriteEntity = defineEntity({
  name: "AppliedRewrite",
  tableName: "applied_rewrites",
  properties: {
    rewriteId: p.string().length(200).primary(),
    accountId: p.string().length(128),
    articleId: p.string().length(128),
    /** The revision the line made; null when the article already read as the line asked. */
    revision: p.integer().nullable(),
    appliedAt: p.datetime(3),
  },
})

export const entities = [
  AccountEntity,
  ApiKeyEntity,
  SiteEntity,
  ArticleEntity,
  BacklinkEntity,
  RevisionEntity,
  ActivityEntity,
  ActivityCountEntity,
  ArticleCountEntity,
  ArticleTermCountEntity,
  ArticleTermChangeEntity,
  EditCounterEntity,
  ActivityJournalMarkEntity,
  LimitCounterEntity,
  OAuthPayloadEntity,
  IdempotencyKeyEntity,
  AppliedRewriteEntity,
]
