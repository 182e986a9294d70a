import { Context, type Effect } from "effect"
import type { Unavailable } from "../errors.ts"
import type { BodyComparison, CompareOptions } from "../html/diffBodies.ts"
import type { StoredBody } from "../html/extractProtectedBlocks.ts"
import type { AnalyzedHtml, HtmlRefusal } from "../html/sanitizeArticleHtml.ts"
import type { ArticleMerge, MergeSide } from "../html/mergeArticle.ts"
import type { TextEditsResult } from "../policy/textEdits.ts"

/**
 * Where the article-HTML policy runs. `analyze` answers exactly what the pure
 * `analyzeArticleHtml` answers for the same body (sanitised HTML, report, protected blocks, word
 * count, or the same refusal); an implementation chooses only where the work happens, e.g. in
 * the calling thread (tests, embedders) or on a pool of worker threads (a server, so that one big
 * body does not hold up every other request). It fails with Unavailable only when it cannot take
 * the work now (every worker busy and the queue full): the caller may retry later.
 *
 * The same holds for the other work on bodies that can grow with a 1 MiB body: `readStored`
 * answers the pure `readStoredBody` (a stored body's protected blocks and word count: restores)
 * and `compare` the pure `compareBodies` with a fresh budget (diffs: REST, MCP, the revision page),
 * `applyEdits` the pure `applyTextEdits` (PATCH, `edit_article`: up to 100 linear searches of the
 * body).
 */
export class HtmlAnalyzer extends Context.Service<HtmlAnalyzer, {
  readonly analyze: (html: string) => Effect.Effect<AnalyzedHtml, HtmlRefusal | Unavailable>
  /** Answers exactly what the pure `mergeArticle` answers for the same three sides (sanitised bodies). */
  readonly merge: (base: MergeSide, theirs: MergeSide, mine: MergeSide) => Effect.Effect<ArticleMerge, Unavailable>
  readonly readStored: (html: string) => Effect.Effect<StoredBody, Unavailable>
  readonly compare: (fromHtml: string, toHtml: string, options: CompareOptions) => Effect.Effect<BodyComparison, Unavailable>
  readonly applyEdits: (
    text: string,
    edits: ReadonlyArray<{ readonly find: string; readonly replace: string }>,
  ) => Effect.Effect<TextEditsResult, Unavailable>
}>()("core/HtmlAnalyzer") {}
