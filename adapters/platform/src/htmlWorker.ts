/**
 * The task a worker thread of `workerHtmlAnalyzer` runs: the core's pure `analyzeArticleHtml`,
 * unchanged, with its answer as plain data (errors do not cross threads as their classes).
 */
import { analyzeArticleHtml, type AnalyzedHtml, type ArticleMerge, type HtmlRefusal, mergeArticle, type MergeSide } from "@content-site/core"
import { Effect } from "effect"

/** What a worker answers for one body. */
export type HtmlWorkerAnswer =
  | { readonly ok: true; readonly value: AnalyzedHtml }
  | { readonly ok: false; readonly error: { readonly _tag: HtmlRefusal["_tag"] } & Record<string, unknown> }

/** Analyses one body (piscina calls the default export with the task). */
export default function analyze(html: string): HtmlWorkerAnswer {
  return Effect.runSync(
    Effect.match(analyzeArticleHtml(html), {
      onSuccess: (value): HtmlWorkerAnswer => ({ ok: true, value }),
      onFailure: (error): HtmlWorkerAnswer => ({ ok: false, error: { ...error, _tag: error._tag } }),
    }),
  )
}

/** Merges three sides of an article (piscina calls it by name: `{ name: "merge" }`). */
export function merge(task: { readonly base: MergeSide; readonly theirs: MergeSide; readonly mine: MergeSide }): ArticleMerge {
  return mergeArticle(task.base, task.theirs, task.mine)
}
