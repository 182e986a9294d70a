/**
 * The task a worker thread of `workerHtmlAnalyzer` runs: the core's pure `analyzeArticleHtml`,
 * unchanged, with its answer as plain data (errors do not cross threads as their classes); and,
 * by name, the core's `compareBodies` and `readStoredBody`, whose answers are plain data.
 */
import {
  analyzeArticleHtml,
  type ArticleMerge,
  mergeArticle,
  type MergeSide,
  applyTextEdits,
  type TextEditsResult,
  type AnalyzedHtml,
  type BodyComparison,
  compareBodies,
  type CompareOptions,
  type HtmlRefusal,
  makeDiffBudget,
  proseOfHtml,
  readStoredBody,
  sanitizeEachPart,
  type StoredBody,
} from "@content-site/core"
import { Effect } from "effect"
import { isWorkerThread } from "piscina"
import { BELOW_EVENT_LOOP_NICE, lowerThisThread } from "./helperThreads.ts"

/** The scheduler priority of the pool's threads: below the server's event loop, as the image processes. */
export const HTML_WORKER_NICE = BELOW_EVENT_LOOP_NICE

// Below the server in the scheduler (nice 10, this thread only): sanitising a 1 MiB body keeps a
// core busy for up to a second, and on a machine with fewer cores than runnable threads it then
// took the time the event loop needed to answer `/healthz` and other accounts' small requests
// (their sanitising stays in the calling thread). Where a thread cannot be lowered (not Linux, or
// refused) it runs as before, and the fair queue still holds. Only in a pool's thread: the tests
// import these functions into their own.
if (isWorkerThread) lowerThisThread(HTML_WORKER_NICE)

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

/** What a worker is given to merge three sides of an article (piscina calls `merge` by name). */
export interface MergeTask {
  readonly base: MergeSide
  readonly theirs: MergeSide
  readonly mine: MergeSide
}

/** Merges three sides of an article: the core's pure `mergeArticle`, unchanged. */
export function merge(task: MergeTask): ArticleMerge {
  return mergeArticle(task.base, task.theirs, task.mine)
}

/** What a worker is given to compare two bodies (piscina calls `compare` by name). */
export interface CompareTask {
  readonly fromHtml: string
  readonly toHtml: string
  readonly options: CompareOptions
}

/** Compares two bodies with a fresh budget: the core's pure `compareBodies`, unchanged. */
export function compare(task: CompareTask): BodyComparison {
  return compareBodies(task.fromHtml, task.toHtml, task.options, makeDiffBudget())
}

/** Reads a stored body's protected blocks and word count: the core's pure `readStoredBody`, unchanged. */
export function readStored(html: string): StoredBody {
  return readStoredBody(html)
}

/** A stored body as prose: the core's pure `proseOfHtml`, unchanged. */
export function prose(html: string): string {
  return proseOfHtml(html)
}

/** Sanitises each part on its own: the core's pure `sanitizeEachPart`, unchanged. */
export function sanitizeEach(parts: ReadonlyArray<string>): Array<string | null> {
  return sanitizeEachPart(parts)
}

/** What a worker is given to apply find-and-replace edits (piscina calls `applyEdits` by name). */
export interface EditsTask {
  readonly text: string
  readonly edits: ReadonlyArray<{ readonly find: string; readonly replace: string }>
}

/** Applies find-and-replace edits: the core's pure `applyTextEdits`, unchanged. */
export function applyEdits(task: EditsTask): TextEditsResult {
  return applyTextEdits(task.text, task.edits)
}
