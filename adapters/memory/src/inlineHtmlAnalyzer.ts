import { analyzeArticleHtml, applyTextEdits, compareBodies, HtmlAnalyzer, makeDiffBudget, mergeArticle, proseOfHtml, readStoredBody, sanitizeEachPart } from "@content-site/core"
import { Effect, Layer } from "effect"

/** The article-HTML policy run in the calling thread: for tests and embedders without worker threads. */
export const inlineHtmlAnalyzer: Layer.Layer<HtmlAnalyzer> = Layer.succeed(HtmlAnalyzer, {
  analyze: analyzeArticleHtml,
  merge: (base, theirs, mine) => Effect.sync(() => mergeArticle(base, theirs, mine)),
  sanitizeEach: (parts) => Effect.sync(() => sanitizeEachPart(parts)),
  readStored: (html) => Effect.sync(() => readStoredBody(html)),
  prose: (html) => Effect.sync(() => proseOfHtml(html)),
  compare: (fromHtml, toHtml, options) => Effect.sync(() => compareBodies(fromHtml, toHtml, options, makeDiffBudget())),
  applyEdits: (text, edits) => Effect.sync(() => applyTextEdits(text, edits)),
  // No pool to share: every body is taken.
  admits: () => Effect.succeed(() => undefined),
})
