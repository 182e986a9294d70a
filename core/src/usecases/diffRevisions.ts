import { Effect } from "effect"
import { HtmlAnalyzer } from "../ports/HtmlAnalyzer.ts"
import { ArticleRepository, RevisionRepository } from "../ports/Repositories.ts"
import type { FeaturedImage, RevisionDiff } from "../schema/resources.ts"
import type { Caller } from "./Caller.ts"

const sameImage = (a: FeaturedImage, b: FeaturedImage): boolean => (a === null || b === null ? a === b : a.url === b.url && a.alt === b.alt)

/**
 * What changed from revision `from` to revision `to` (default: the current one) of an article:
 * both titles when they differ, both featured images when they differ (a restore brings the image
 * back too), and the core's body diff (one block element a line, with the
 * words added and removed). `from` may be the newer one: the diff then shows the way back.
 * One comparison with one budget of work, run where the HtmlAnalyzer runs (off the event loop on
 * a server); past the budget the body diff is coarser and says so (`granularity`, `note`).
 */
export const diffRevisions = (caller: Caller, articleId: string, from: number, to: number | undefined) =>
  Effect.gen(function* () {
    const revisions = yield* RevisionRepository
    const toNumber = to ?? (yield* (yield* ArticleRepository).get(caller.accountId, articleId)).revision
    const [older, newer] = yield* Effect.all([revisions.get(caller.accountId, articleId, from), revisions.get(caller.accountId, articleId, toNumber)])
    const { diff } = yield* (yield* HtmlAnalyzer).compare(older.body, newer.body, { labels: { from: `revision ${from}`, to: `revision ${toNumber}` } }, caller.accountId)
    const result: RevisionDiff = {
      from,
      to: toNumber,
      title: older.title === newer.title ? null : { from: older.title, to: newer.title },
      "featured image": sameImage(older.featured_image, newer.featured_image) ? null : { from: older.featured_image, to: newer.featured_image },
      body: diff,
    }
    return result
  })
