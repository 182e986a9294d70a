import type { MemoryIdempotencyEntry } from "./MemoryIdempotencyStore.ts"
import type {
  AccountRecord,
  ActivityRecord,
  ApiKeyRecord,
  AppliedRewriteRecord,
  ArticleRecord,
  BacklinkRecord,
  RevisionRecord,
  SiteRecord,
  StoredMedia,
  StoredPayload,
} from "@content-site/core"

/** One stored OAuth/session payload with its expiry. */
export interface MemoryPayload {
  readonly payload: StoredPayload
  readonly expiresAt: number | null
  consumed: boolean
}

/** The whole in-memory database, shared by the memory Layers of one instance. */
export interface MemoryState {
  readonly accounts: Map<string, AccountRecord>
  readonly apiKeys: Map<string, ApiKeyRecord>
  readonly sites: Map<string, SiteRecord>
  readonly articles: Map<string, ArticleRecord>
  readonly backlinks: Map<string, BacklinkRecord>
  /** Keyed by `${articleId}#${number}`. */
  readonly revisions: Map<string, RevisionRecord>
  readonly activity: Array<ActivityRecord>
  readonly activityRequestIds: Set<string>
  /** Keyed by `${accountId}#${day}`. */
  readonly editCounters: Map<string, number>
  /** Keyed by limit key: the window, as start and end, and its count. */
  readonly limitWindows: Map<string, { start: number; end: number; count: number }>
  /** Keyed by `${model}#${id}`. */
  readonly oauth: Map<string, MemoryPayload>
  readonly media: Map<string, StoredMedia>
  /** Keyed by `${accountId}#${key}`. */
  readonly idempotency: Map<string, MemoryIdempotencyEntry>
  /** Applied lines of the rewrite job, keyed by rewrite_id. */
  readonly rewrites: Map<string, AppliedRewriteRecord>
}

/** Above this many request counters (or edit counters), those of ended windows (past days) are dropped. */
export const MEMORY_COUNTERS_SWEEP_ABOVE = 10_000

/** A new, empty in-memory database. */
export const makeMemoryState = (): MemoryState => ({
  accounts: new Map(),
  apiKeys: new Map(),
  sites: new Map(),
  articles: new Map(),
  backlinks: new Map(),
  revisions: new Map(),
  activity: [],
  activityRequestIds: new Set(),
  editCounters: new Map(),
  limitWindows: new Map(),
  oauth: new Map(),
  media: new Map(),
  idempotency: new Map(),
  rewrites: new Map(),
})
