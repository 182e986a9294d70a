import { InvalidRequest } from "../errors.ts"
import type { ProtectedBlock } from "./protectedBlock.ts"
import { analyzeHtml } from "./sanitizeArticleHtml.ts"

const marker = /data-service-protected/i

/**
 * The canonical protected blocks of a (sanitised, stored) body: its outermost elements carrying
 * `data-service-protected`, in document order, read from the body as the sanitiser keeps it so
 * they compare equal to the blocks `applyEditPolicy` reads from a proposed body. Throws (a
 * defect) on a body the sanitiser refuses, rather than report no blocks for it.
 */
export const extractProtectedBlocks = (html: string): ReadonlyArray<ProtectedBlock> => {
  // Attribute names cannot hold character references, so without this text there is no block.
  if (!marker.test(html)) return []
  const result = analyzeHtml(html)
  if (result instanceof InvalidRequest) throw new Error(`extractProtectedBlocks: ${result.detail}`)
  return result.blocks
}
