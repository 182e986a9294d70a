import {
  type AnalyzedHtml,
  type ArticleMerge,
  type BodyComparison,
  type CompareOptions,
  HtmlAnalyzer,
  type HtmlRefusal,
  InvalidRequest,
  PayloadTooLarge,
  type StoredBody,
  type TextEditsResult,
  Unavailable,
} from "@content-site/core"
import { Effect, Layer } from "effect"
import { availableParallelism } from "node:os"
import { Piscina } from "piscina"
import type { CompareTask, EditsTask, HtmlWorkerAnswer } from "./htmlWorker.ts"

/** How the worker pool is sized. */
export interface HtmlWorkerOptions {
  /** Worker threads at most (default: the cores but one, at least 1, at most 4). */
  readonly maxThreads?: number
  /** Bodies waiting for a worker at most; past it an edit is answered 503 `unavailable` (default 64, 64 MiB of bodies). */
  readonly maxQueue?: number
  /** Heap of one worker, in MiB (default 512): a worker past it is ended, not the process. */
  readonly maxHeapMb?: number
}

const rebuild = (error: HtmlWorkerAnswer & { ok: false }): HtmlRefusal => {
  const fields = error.error as unknown as { detail: string; errors: ReadonlyArray<{ path: string; message: string }> }
  return error.error._tag === "InvalidRequest"
    ? new InvalidRequest({ detail: fields.detail, errors: fields.errors })
    : new PayloadTooLarge({ detail: fields.detail })
}

/**
 * The article-HTML policy on a pool of worker threads (piscina), each running the core's pure
 * `analyzeArticleHtml` unchanged: sanitising a body, up to a second of work for the largest,
 * never holds the event loop, so health checks and other requests are answered meanwhile. The
 * same pool, and its queue, runs the comparisons of two bodies (`compareBodies`), the reading
 * of a stored body (`readStoredBody`), the find-and-replace edits (`applyTextEdits`) and the
 * three-way merges (`mergeArticle`) of diffs, restores, PATCHes and edits with `base_revision`. The pool is closed with the runtime.
 */
export const workerHtmlAnalyzer = (options: HtmlWorkerOptions = {}): Layer.Layer<HtmlAnalyzer> =>
  Layer.effect(
    HtmlAnalyzer,
    Effect.gen(function* () {
      const maxThreads = options.maxThreads ?? Math.min(4, Math.max(1, availableParallelism() - 1))
      const pool = yield* Effect.acquireRelease(
        Effect.sync(
          () =>
            new Piscina({
              filename: new URL("./htmlWorker.ts", import.meta.url).href,
              minThreads: 1,
              maxThreads,
              maxQueue: options.maxQueue ?? 64,
              idleTimeout: 60_000,
              resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb ?? 512 },
            }),
        ),
        (pool) => Effect.promise(() => pool.destroy()),
      )
      const busy = new Unavailable({ detail: "Too many article bodies are being sanitised right now; retry in a moment." })
      // Another task of the pool, by the name of its function in htmlWorker.ts.
      const runNamed = <A>(name: "compare" | "readStored" | "applyEdits" | "merge", task: unknown): Effect.Effect<A, Unavailable> =>
        Effect.flatMap(
          Effect.promise(() =>
            pool.run(task, { name }).then(
              (answer: A) => ({ answer }),
              (thrown: unknown) => ({ thrown }),
            ),
          ),
          (outcome): Effect.Effect<A, Unavailable> => {
            if ("answer" in outcome) return Effect.succeed(outcome.answer)
            if (outcome.thrown instanceof Error && /queue is at limit/i.test(outcome.thrown.message)) return Effect.fail(busy)
            return Effect.die(outcome.thrown)
          },
        )
      return {
        readStored: (html: string) => runNamed<StoredBody>("readStored", html),
        compare: (fromHtml: string, toHtml: string, options: CompareOptions) =>
          runNamed<BodyComparison>("compare", { fromHtml, toHtml, options } satisfies CompareTask),
        applyEdits: (text: string, edits: ReadonlyArray<{ readonly find: string; readonly replace: string }>) =>
          runNamed<TextEditsResult>("applyEdits", { text, edits } satisfies EditsTask),
        analyze: (html: string) =>
          Effect.flatMap(
            Effect.promise(() =>
              pool.run(html).then(
                (answer: HtmlWorkerAnswer) => ({ answer }),
                (thrown: unknown) => ({ thrown }),
              ),
            ),
            (outcome): Effect.Effect<AnalyzedHtml, HtmlRefusal | Unavailable> => {
              if ("answer" in outcome) return outcome.answer.ok ? Effect.succeed(outcome.answer.value) : Effect.fail(rebuild(outcome.answer))
              if (outcome.thrown instanceof Error && /queue is at limit/i.test(outcome.thrown.message)) return Effect.fail(busy)
              // A worker that failed otherwise (ended past its heap, crashed) is a defect, not a refusal.
              return Effect.die(outcome.thrown)
            },
          ),
        merge: (base, theirs, mine) => runNamed<ArticleMerge>("merge", { base, theirs, mine }),
      }
    }),
  )
