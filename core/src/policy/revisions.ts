import type { ArticleChange, ArticleRecord, RevisionRecord } from "../ports/records.ts"

/**
 * The article and the revision a change produces: the revision is numbered one past the current
 * one (numbers stay gapless from 1) and records the new title, body and featured image.
 */
export const applyArticleChange = (
  current: ArticleRecord,
  change: ArticleChange,
): { readonly article: ArticleRecord; readonly revision: RevisionRecord } => {
  const number = current.revision + 1
  return {
    article: {
      ...current,
      title: change.title,
      body: change.body,
      word_count: change.word_count,
      featured_image: change.featured_image,
      updated_at: change.updated_at,
      revision: number,
    },
    revision: {
      id: change.revision.id,
      account_id: current.account_id,
      article_id: current.id,
      number,
      origin: change.revision.origin,
      title: change.title,
      body: change.body,
      featured_image: change.featured_image,
      reason: change.revision.reason,
      actor: change.revision.actor,
      restored_from: change.revision.restored_from,
      created_at: change.revision.created_at,
    },
  }
}
