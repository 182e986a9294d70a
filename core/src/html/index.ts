/** The pure HTML policy of article bodies: sanitiser, protected blocks and word count. */
export { ALLOWED_URL_SCHEMES, MAX_NESTING_DEPTH, SAFE_URL, articleSchema } from "./articleSchema.ts"
export { MAX_PARSED_NODES } from "./parseHtmlFragment.ts"
export { applyEditPolicy, type EditPolicyResult } from "./applyEditPolicy.ts"
export { checkProtectedBlocks, compareProtectedBlocks } from "./compareProtectedBlocks.ts"
export { countWords } from "./countWords.ts"
export { extractProtectedBlocks, knownProtectedBlocks, rememberProtectedBlocks } from "./extractProtectedBlocks.ts"
export type { ProtectedBlock } from "./protectedBlock.ts"
export {
  analyzeArticleHtml,
  analyzeSmallArticleHtml,
  NOT_SMALL,
  sanitizeArticleHtml,
  type SmallWork,
  type AnalyzedHtml,
  type HtmlRefusal,
  type SanitizedHtml,
  type SanitizeReport,
} from "./sanitizeArticleHtml.ts"
export { bodyLines, diffBodies, diffLines, diffWords, type BodyDiff, type DiffLine, type WordChange } from "./diffBodies.ts"
