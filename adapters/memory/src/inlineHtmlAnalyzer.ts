import { analyzeArticleHtml, HtmlAnalyzer } from "@content-site/core"
import { Effect, Layer } from "effect"

/** The article-HTML policy run in the calling thread: for tests and embedders without worker threads. */
export const inlineHtmlAnalyzer: Layer.Layer<HtmlAnalyzer> = Layer.succeed(HtmlAnalyzer, {
  analyze: analyzeArticleHtml,
  // No pool to share: every body is taken.
  admits: () => Effect.void,
})
