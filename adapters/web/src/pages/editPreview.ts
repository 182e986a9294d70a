import type { ProtectedBlockViolation } from "@content-site/core"

/** What the article page's editor shows before a save: the server's dry run of the edit. */
export interface EditPreview {
  /** Whether saving makes a new revision. */
  readonly changed: boolean
  readonly title_changed: boolean
  readonly body_changed: boolean
  /** What sanitising removes from the proposed body. */
  readonly removed: ReadonlyArray<{ readonly what: string; readonly count: number }>
  /** The protected-links verdict: how many the article has, and how the edit breaks them. */
  readonly protected: { readonly ok: boolean; readonly count: number; readonly violations: ReadonlyArray<ProtectedBlockViolation> }
  /** Why saving would be refused for another reason (invalid input, limits), else null. */
  readonly refused: string | null
  /**
   * Someone saved since the page was opened: saving merges with their revision (`with` names it
   * and who made it), keeping `kept` of their changes, or opens the conflict page for `conflicts` parts.
   */
  readonly merge: { readonly with: string; readonly kept: number; readonly conflicts: number } | null
  /** No preview was made: the request was over a limit (429) or the service busy (503); `refused` says when to retry. */
  readonly limited: boolean
}

/** The JSON answer of `POST /articles/{id}/preview`. */
export const editPreview = (v: {
  titleChanged: boolean
  bodyChanged: boolean
  removed: ReadonlyArray<{ what: string; count: number }>
  protectedOk: boolean
  protectedCount: number
  violations: ReadonlyArray<ProtectedBlockViolation>
  refused: string | null
  merge: EditPreview["merge"]
  limited?: boolean
}): EditPreview => ({
  changed: v.titleChanged || v.bodyChanged,
  title_changed: v.titleChanged,
  body_changed: v.bodyChanged,
  removed: v.removed,
  protected: { ok: v.protectedOk, count: v.protectedCount, violations: v.violations },
  refused: v.refused,
  merge: v.merge,
  limited: v.limited ?? false,
})
