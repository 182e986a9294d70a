import { Effect } from "effect"
import type { ProtectedBlockViolation } from "../errors.ts"
import { compareProtectedBlocks } from "./compareProtectedBlocks.ts"
import type { ProtectedBlock } from "./protectedBlock.ts"
import { analyzeHtml, isRefusal, type HtmlRefusal, type SanitizeReport } from "./sanitizeArticleHtml.ts"

/** The verdict of the edit policy on one proposed body. */
export interface EditPolicyResult {
  /** The sanitised body, as it would be stored. */
  readonly html: string
  readonly report: SanitizeReport
  /** The protected blocks of the sanitised body. */
  readonly blocks: ReadonlyArray<ProtectedBlock>
  /** How the proposed body breaks the current protected blocks; empty when it does not. */
  readonly violations: ReadonlyArray<ProtectedBlockViolation>
  /** `"word count"` of the sanitised body. */
  readonly wordCount: number
}

/**
 * One-pass edit policy: sanitise the proposed body and check it against the current protected
 * blocks. Parses the proposed body once (twice when it is not already in stored form).
 */
export const applyEditPolicy = (
  currentBlocks: ReadonlyArray<ProtectedBlock>,
  proposedHtml: string,
): Effect.Effect<EditPolicyResult, HtmlRefusal> =>
  Effect.suspend(() => {
    const result = analyzeHtml(proposedHtml)
    if (isRefusal(result)) return Effect.fail(result)
    return Effect.succeed({
      html: result.html,
      report: result.report,
      blocks: result.blocks,
      violations: compareProtectedBlocks(currentBlocks, result.blocks),
      wordCount: result.wordCount,
    })
  })
