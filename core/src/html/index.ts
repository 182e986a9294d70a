/** The pure HTML policy of article bodies: sanitiser, protected blocks and word count. */
export { ALLOWED_URL_SCHEMES, MAX_NESTING_DEPTH, SAFE_URL, articleSchema } from "./articleSchema.ts"
export { MAX_PARSED_NODES } from "./parseHtmlFragment.ts"
export { applyEditPolicy, type EditPolicyResult } from "./applyEditPolicy.ts"
export { checkProtectedBlocks, compareProtectedBlocks } from "./compareProtectedBlocks.ts"
export { countWords } from "./countWords.ts"
export {
  extractProtectedBlocks,
  knownProtectedBlocks,
  PROTECTED_BLOCKS_MEMO_CHARS,
  protectedBlocksMemoUse,
  readStoredBody,
  rememberProtectedBlocks,
  type StoredBody,
} from "./extractProtectedBlocks.ts"
export type { ProtectedBlock } from "./protectedBlock.ts"
export {
  analyzeArticleHtml,
  analyzeSmallArticleHtml,
  MAX_REPORTED_KINDS,
  NOT_SMALL,
  sanitizeArticleHtml,
  sanitizeEachPart,
  type SmallWork,
  type AnalyzedHtml,
  type HtmlRefusal,
  type SanitizedHtml,
  type SanitizeReport,
} from "./sanitizeArticleHtml.ts"
export { bodyUnits, mergeArticle, settleMerge, type ArticleMerge, type ConflictChoice, type MergeChunk, type MergeConflict, type MergeSide } from "./mergeArticle.ts"
export {
  bodyLines,
  compareBodies,
  diffBodies,
  diffLines,
  diffWords,
  GRANULARITY_NOTES,
  lineText,
  type BodyComparison,
  type BodyDiff,
  type CompareOptions,
  type ComparisonFor,
  type DiffGranularity,
  type DiffLine,
  type ReadingComparison,
  type ReadingRow,
  type WordChange,
} from "./diffBodies.ts"
export { DIFF_BUDGET, makeDiffBudget, type DiffBudget } from "./diffBudget.ts"
