import type { ActivityRecord, ArticleRecord, ArticleSummaryRecord, BacklinkRecord, RevisionRecord, RevisionSummaryRecord } from "../ports/records.ts"
import type { ActivityEntry, Article, ArticleListItem, Backlink, Revision, RevisionSummary } from "../schema/resources.ts"
import { isId } from "../schema/common.ts"
import type { LoggedCaller } from "./Caller.ts"
import { toTimestamp } from "../policy/time.ts"
import { extractProtectedBlocks } from "../html/extractProtectedBlocks.ts"

/** The list view of a stored article: never the body. */
export const articleListView = (a: ArticleSummaryRecord): ArticleListItem => ({
  id: a.id,
  site_id: a.site_id,
  title: a.title,
  url: a.url,
  status: a.status,
  published_at: a.published_at,
  "target keyword": a.target_keyword,
  "word count": a.word_count,
  "featured image": a.featured_image,
})

/**
 * The public single-article view of a stored article, with its protected links as the edit
 * policy reads them (the same extraction, so what an agent is told to keep is what is checked).
 */
export const articleView = (a: ArticleRecord): Article => ({
  ...articleListView(a),
  body: a.body,
  updated_at: a.updated_at,
  revision: a.revision,
  protected_links: extractProtectedBlocks(a.body).map((block) => ({ type: block.type, href: block.href, text: block.text })),
})

/** The public view of a stored backlink. */
export const backlinkView = (b: BacklinkRecord): Backlink => ({
  id: b.id,
  site_id: b.site_id,
  date_acquired: b.date_acquired,
  source_domain: b.source_domain,
  source_url: b.source_url,
  target_url: b.target_url,
  anchor_text: b.anchor_text,
  anchor_type: b.anchor_type,
  category: b.category,
})

/** A revision without its body, as listed and as returned by writes. */
export const revisionSummaryView = (r: RevisionSummaryRecord): RevisionSummary => ({
  id: r.id,
  article_id: r.article_id,
  number: r.number,
  origin: r.origin,
  title: r.title,
  "featured image": r.featured_image,
  reason: r.reason,
  actor: r.actor,
  restored_from: r.restored_from,
  created_at: r.created_at,
})

/** A revision with its body. */
export const revisionView = (r: RevisionRecord): Revision => ({ ...revisionSummaryView(r), body: r.body })

/** The public view of an activity entry. */
export const activityView = (e: ActivityRecord): ActivityEntry => e

/** The strong ETag of an article at a revision: `"<id>-r<revision>"`. */
export const etagOf = (a: { readonly id: string; readonly revision: number }): string => `"${a.id}-r${a.revision}"`

/** An id as given when it is one (`isId`), else null. */
export const validIdOrNull = (id: string | null | undefined): string | null => (id != null && isId(id) ? id : null)

/** The activity entry describing a call's outcome. */
export const activityFor = (
  caller: LoggedCaller,
  outcome: {
    readonly id: string
    readonly nowMs: number
    readonly ok: boolean
    readonly httpStatus?: number
    readonly errorCode?: string | null
    readonly siteId?: string | null
    readonly articleId?: string | null
  },
): ActivityRecord => ({
  id: outcome.id,
  account_id: caller.accountId,
  at: toTimestamp(outcome.nowMs),
  channel: caller.channel,
  actor: caller.actor,
  action: caller.action,
  // only an id as ids are written: a call with a malformed id argument (a NUL, 10 000 characters)
  // is logged, with no id (the database could not store it, and the call would go unlogged)
  site_id: validIdOrNull(outcome.siteId),
  article_id: validIdOrNull(outcome.articleId),
  // Calls over HTTP carry their status; tool calls and the platform's jobs say ok or error.
  status:
    caller.channel === "mcp" || caller.channel === "platform"
      ? outcome.ok ? "ok" : "error"
      : (outcome.httpStatus ?? (outcome.ok ? 200 : 500)),
  error_code: outcome.errorCode ?? null,
  duration_ms: Math.max(0, Math.round(outcome.nowMs - caller.startedAt)),
  request_id: caller.requestId,
  count: 1,
})
