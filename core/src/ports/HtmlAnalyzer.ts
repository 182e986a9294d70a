import { Context, type Effect } from "effect"
import type { Unavailable } from "../errors.ts"
import type { AnalyzedHtml, HtmlRefusal } from "../html/sanitizeArticleHtml.ts"
import type { ArticleMerge, MergeSide } from "../html/mergeArticle.ts"

/**
 * Where the article-HTML policy runs. `analyze` answers exactly what the pure
 * `analyzeArticleHtml` answers for the same body (sanitised HTML, report, protected blocks, word
 * count, or the same refusal); an implementation chooses only where the work happens, e.g. in
 * the calling thread (tests, embedders) or on a pool of worker threads (a server, so that one big
 * body does not hold up every other request). It fails with Unavailable only when it cannot take
 * the work now (every worker busy and the queue full): the caller may retry later.
 */
export class HtmlAnalyzer extends Context.Service<HtmlAnalyzer, {
  readonly analyze: (html: string) => Effect.Effect<AnalyzedHtml, HtmlRefusal | Unavailable>
  /** Answers exactly what the pure `mergeArticle` answers for the same three sides (sanitised bodies). */
  readonly merge: (base: MergeSide, theirs: MergeSide, mine: MergeSide) => Effect.Effect<ArticleMerge, Unavailable>
}>()("core/HtmlAnalyzer") {}
