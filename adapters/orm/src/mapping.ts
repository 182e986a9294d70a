/** Maps persistence rows to and from the core's record types. */
import type {
  AccountRecord,
  ActivityRecord,
  ApiKeyRecord,
  ArticleRecord,
  ArticleSummaryRecord,
  BacklinkRecord,
  RevisionRecord,
  RevisionSummaryRecord,
  SiteRecord,
} from "@content-site/core"
import type { Actor, ArticleStatus, Channel, KeyScope, Origin } from "@content-site/core"

/** PostgreSQL's text form of a UTC timestamptz, e.g. `2026-11-19 09:45:00.25+00`. */
const PG_UTC = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?\+00$/

/**
 * An instant as RFC 3339 UTC with milliseconds (`toISOString()`). The text PostgreSQL sends for a
 * UTC session is rewritten directly (list pages convert many); any other form goes through Date.
 */
export const iso = (d: Date | string): string => {
  if (typeof d === "string") {
    const m = PG_UTC.exec(d)
    if (m !== null) return `${m[1]}T${m[2]}.${(m[3] ?? "").slice(0, 3).padEnd(3, "0")}Z`
  }
  return (d instanceof Date ? d : new Date(d)).toISOString()
}
const isoOrNull = (d: Date | string | null | undefined): string | null => (d === null || d === undefined ? null : iso(d))
const date = (s: string): Date => new Date(s)
const dateOrNull = (s: string | null): Date | null => (s === null ? null : new Date(s))

type Row<T> = { -readonly [K in keyof T]: T[K] }

type Widen<V> = V extends Date ? Date | string : V
/** A row as an entity or as hand-written SQL returns it (timestamps as the driver's text). */
export type Wire<T> = { [K in keyof T]: Widen<T[K]> }

export interface AccountRow { id: string; email: string; name: string; passwordHash: string; createdAt: Date }
export const accountOf = (r: Wire<AccountRow>): AccountRecord => ({
  id: r.id,
  email: r.email,
  name: r.name,
  password_hash: r.passwordHash,
  created_at: iso(r.createdAt),
})
export const accountRow = (a: AccountRecord): Row<AccountRow> => ({
  id: a.id,
  email: a.email,
  name: a.name,
  passwordHash: a.password_hash,
  createdAt: date(a.created_at),
})

export interface ApiKeyRow {
  id: string; accountId: string; name: string; scope: string; keyHash: string
  createdAt: Date; lastUsedAt?: Date | null; revokedAt?: Date | null
}
export const apiKeyOf = (r: Wire<ApiKeyRow>): ApiKeyRecord => ({
  id: r.id,
  account_id: r.accountId,
  name: r.name,
  scope: r.scope as KeyScope,
  key_hash: r.keyHash,
  created_at: iso(r.createdAt),
  last_used_at: isoOrNull(r.lastUsedAt),
  revoked_at: isoOrNull(r.revokedAt),
})
export const apiKeyRow = (k: ApiKeyRecord): Row<ApiKeyRow> => ({
  id: k.id,
  accountId: k.account_id,
  name: k.name,
  scope: k.scope,
  keyHash: k.key_hash,
  createdAt: date(k.created_at),
  lastUsedAt: dateOrNull(k.last_used_at),
  revokedAt: dateOrNull(k.revoked_at),
})

export interface SiteRow { id: string; accountId: string; name: string; url: string; createdAt: Date }
export const siteRow = (s: SiteRecord): Row<SiteRow> => ({
  id: s.id,
  accountId: s.account_id,
  name: s.name,
  url: s.url,
  createdAt: date(s.created_at),
})

type Image = { url: string; alt: string } | null

export interface ArticleRow {
  id: string; accountId: string; siteId: string; title: string; url: string; status: string
  publishedAt?: Date | null; targetKeyword: string; wordCount: number; featuredImage?: Image | undefined
  body: string; updatedAt: Date; revision: number
}
/** An article row without its body (lists). */
export const articleSummaryOf = (r: Omit<Wire<ArticleRow>, "body">): ArticleSummaryRecord => ({
  id: r.id,
  account_id: r.accountId,
  site_id: r.siteId,
  title: r.title,
  url: r.url,
  status: r.status as ArticleStatus,
  published_at: isoOrNull(r.publishedAt),
  target_keyword: r.targetKeyword,
  word_count: r.wordCount,
  featured_image: r.featuredImage ?? null,
  updated_at: iso(r.updatedAt),
  revision: r.revision,
})
export const articleOf = (r: Wire<ArticleRow>): ArticleRecord => ({ ...articleSummaryOf(r), body: r.body })
export const articleRow = (a: ArticleRecord): Row<ArticleRow> => ({
  id: a.id,
  accountId: a.account_id,
  siteId: a.site_id,
  title: a.title,
  url: a.url,
  status: a.status,
  publishedAt: dateOrNull(a.published_at),
  targetKeyword: a.target_keyword,
  wordCount: a.word_count,
  featuredImage: a.featured_image ? { url: a.featured_image.url, alt: a.featured_image.alt } : null,
  body: a.body,
  updatedAt: date(a.updated_at),
  revision: a.revision,
})

export interface BacklinkRow {
  id: string; accountId: string; siteId: string; dateAcquired: string; sourceDomain: string; sourceUrl: string
  targetUrl: string; anchorText: string; anchorType: string; category: string
}
export const backlinkOf = (r: Wire<BacklinkRow>): BacklinkRecord => ({
  id: r.id,
  account_id: r.accountId,
  site_id: r.siteId,
  date_acquired: r.dateAcquired,
  source_domain: r.sourceDomain,
  source_url: r.sourceUrl,
  target_url: r.targetUrl,
  anchor_text: r.anchorText,
  anchor_type: r.anchorType,
  category: r.category as BacklinkRecord["category"],
})
export const backlinkRow = (b: BacklinkRecord): Row<BacklinkRow> => ({
  id: b.id,
  accountId: b.account_id,
  siteId: b.site_id,
  dateAcquired: b.date_acquired,
  sourceDomain: b.source_domain,
  sourceUrl: b.source_url,
  targetUrl: b.target_url,
  anchorText: b.anchor_text,
  anchorType: b.anchor_type,
  category: b.category,
})

type ActorJson = Actor

export interface RevisionRow {
  id: string; accountId: string; articleId: string; number: number; origin: string; title: string; body: string
  featuredImage?: Image | undefined; reason?: string | null; actor: ActorJson; restoredFrom?: number | null; createdAt: Date
}
/** A revision's row as a list reads it: every column but the body. */
export type RevisionSummaryRow = Omit<RevisionRow, "body">
export const revisionSummaryOf = (r: Wire<RevisionSummaryRow>): RevisionSummaryRecord => ({
  id: r.id,
  account_id: r.accountId,
  article_id: r.articleId,
  number: r.number,
  origin: r.origin as Origin,
  title: r.title,
  featured_image: r.featuredImage ?? null,
  reason: r.reason ?? null,
  actor: { type: r.actor.type, id: r.actor.id, name: r.actor.name },
  restored_from: r.restoredFrom ?? null,
  created_at: iso(r.createdAt),
})
export const revisionOf = (r: Wire<RevisionRow>): RevisionRecord => ({ ...revisionSummaryOf(r), body: r.body })
export const revisionRow = (r: RevisionRecord): Row<RevisionRow> => ({
  id: r.id,
  accountId: r.account_id,
  articleId: r.article_id,
  number: r.number,
  origin: r.origin,
  title: r.title,
  body: r.body,
  featuredImage: r.featured_image ? { url: r.featured_image.url, alt: r.featured_image.alt } : null,
  reason: r.reason,
  actor: { type: r.actor.type, id: r.actor.id, name: r.actor.name },
  restoredFrom: r.restored_from,
  createdAt: date(r.created_at),
})

export interface ActivityRow {
  id: string; accountId?: string | null; at: Date; channel: string; actor?: ActorJson | null; action: string
  siteId?: string | null; articleId?: string | null; status: string; errorCode?: string | null; durationMs: number; requestId: string
  /** Calls the entry stands for (the column defaults to 1; a journal line of a summary entry carries it). */
  count?: number
}
export const activityOf = (r: Wire<ActivityRow>): ActivityRecord => ({
  id: r.id,
  account_id: r.accountId ?? null,
  at: iso(r.at),
  channel: r.channel as Channel,
  actor: r.actor ? { type: r.actor.type, id: r.actor.id, name: r.actor.name } : null,
  action: r.action,
  site_id: r.siteId ?? null,
  article_id: r.articleId ?? null,
  status: /^\d+$/.test(r.status) ? Number(r.status) : (r.status as "ok" | "error"),
  error_code: r.errorCode ?? null,
  duration_ms: r.durationMs,
  request_id: r.requestId,
  count: r.count ?? 1,
})
/**
 * An entry as the activity journal keeps it: its time as the RFC 3339 text the core wrote (a
 * journal line, and the statement that ships it, take it as it is: no Date made and written back).
 */
export type JournalRow = Omit<ActivityRow, "at"> & {
  at: string
  /** A call added to its minute's summary entry (`count` calls): shipped by adding to the row's count. */
  summary?: true
}
export const journalRow = (e: ActivityRecord): JournalRow => ({
  id: e.id,
  accountId: e.account_id,
  at: e.at,
  channel: e.channel,
  actor: e.actor ? { type: e.actor.type, id: e.actor.id, name: e.actor.name } : null,
  action: e.action,
  siteId: e.site_id,
  articleId: e.article_id,
  status: String(e.status),
  errorCode: e.error_code,
  durationMs: e.duration_ms,
  requestId: e.request_id,
})
export const activityRow = (e: ActivityRecord): Row<ActivityRow> => ({ ...journalRow(e), at: date(e.at) })
