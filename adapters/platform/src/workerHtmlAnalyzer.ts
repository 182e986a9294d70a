import {
  type AnalyzedHtml,
  analyzeSmallArticleHtml,
  type ArticleMerge,
  type BodyComparison,
  type CompareOptions,
  type ComparisonFor,
  HtmlAnalyzer,
  type HtmlRefusal,
  InvalidRequest,
  MAX_BODY_BYTES,
  NOT_SMALL,
  PayloadTooLarge,
  RateLimited,
  proseOfHtml,
  readStoredBody,
  type SmallWork,
  type StoredBody,
  type TextEditsResult,
  Unavailable,
} from "@content-site/core"
import { Effect, Layer } from "effect"
import { availableParallelism } from "node:os"
import { Piscina } from "piscina"
import { fairQueue } from "./fairQueue.ts"
import type { CompareTask, EditsTask, HtmlWorkerAnswer, MergeTask } from "./htmlWorker.ts"

/**
 * A body this small is sanitised in the calling thread: at most 32 Ki characters (each later
 * round's input, and each round's text and attribute values, at most twice that), each parse at
 * most 2 048 elements and attributes (a 20 KB article builds about 500, so a whole article of the
 * usual size is small). Its worst case is measured in `docs/security-resource-limits.md`; past
 * any bound the body goes to the pool, having cost at most that.
 */
export const SMALL_BODY: SmallWork = { chars: 32 * 1024, nodes: 2048 }

/**
 * A stored body this small is read (its protected blocks and word count) in the calling thread:
 * at most 32 Ki characters, so at most 32 Ki elements parsed, a few milliseconds. Reads of many
 * small articles at once then never wait for, or are refused by, the account's share of the pool.
 */
export const STORED_INLINE = 32 * 1024

/**
 * How long a place `admits` promised to a large body is kept for it (while the body is read,
 * parsed and its article looked up): the account's next job in the pool takes the place; one
 * that never comes (the request refused meanwhile: 404, 412, bad JSON) gives it back after this.
 */
export const ADMITTED_HOLD_MS = 5_000

/** How the worker pool is sized and shared. */
export interface HtmlWorkerOptions {
  /** Worker threads at most (default: the cores but one, at least 1, at most 4). */
  readonly maxThreads?: number
  /**
   * Bodies waiting for a worker at most, over every account; past it an edit is answered 503
   * `unavailable` (default 64, 64 MiB of bodies).
   */
  readonly maxQueue?: number
  /**
   * Bodies one account may have sanitised and waiting at once (default 4); past it that account's
   * edit is answered 429 `rate_limited`, `Retry-After: 1`.
   */
  readonly perAccount?: number
  /** Heap of one worker, in MiB (default 512): a worker past it is ended, not the process. */
  readonly maxHeapMb?: number
  /** Bodies sanitised in the calling thread (default `SMALL_BODY`). */
  readonly small?: SmallWork
  /** Handed the pool's load (jobs running and waiting, every account), for the metrics to read. */
  readonly watch?: (load: () => { readonly running: number; readonly waiting: number }) => void
  /** Told when a worker failed a task (ended past its heap, crashed): piscina replaces it. */
  readonly onWorkerLost?: (error: unknown) => void
  /** The clock the places promised by `admits` expire by (default `Date.now`). */
  readonly now?: () => number
}

/** The other tasks of the pool, by the name of their function in htmlWorker.ts, with their tasks and answers. */
export interface NamedTasks {
  readonly compare: readonly [CompareTask, BodyComparison]
  readonly readStored: readonly [string, StoredBody]
  readonly prose: readonly [string, string]
  readonly applyEdits: readonly [EditsTask, TextEditsResult]
  readonly merge: readonly [MergeTask, ArticleMerge]
  readonly sanitizeEach: readonly [ReadonlyArray<string>, Array<string | null>]
}

/** Where the pooled work runs: a worker task per body (or named task), and how many run at once. */
export interface HtmlPool {
  readonly run: (html: string) => Promise<HtmlWorkerAnswer>
  readonly runNamed: <K extends keyof NamedTasks>(name: K, task: NamedTasks[K][0]) => Promise<NamedTasks[K][1]>
  readonly threads: number
}

const rebuild = (error: HtmlWorkerAnswer & { ok: false }): HtmlRefusal => {
  const fields = error.error as unknown as { detail: string; errors: ReadonlyArray<{ path: string; message: string }> }
  return error.error._tag === "InvalidRequest"
    ? new InvalidRequest({ detail: fields.detail, errors: fields.errors })
    : new PayloadTooLarge({ detail: fields.detail })
}

/**
 * The characters of parts `sanitizeEach` sends to the pool in one job: a job is closed once its
 * parts reach this many, so it holds at most this plus its last part, and the jobs of one call
 * are at most (its parts' characters / PARTS_JOB_CHARS) + 1, whatever the number of parts. The
 * conflict page's typed parts come in a form of at most 4 MiB: at most 5 jobs, each about the
 * work of one body of 1 MiB (one part over 1 MiB is refused by its size, at once), against one
 * job a part (thousands for a 1 MiB body of thousands of conflicts).
 */
export const PARTS_JOB_CHARS = MAX_BODY_BYTES

/**
 * The `HtmlAnalyzer` over a pool of threads, shared fairly between accounts (`fairQueue`): small
 * bodies in the calling thread, the rest through each account's own queue, taken in rotation. A
 * new method of the port sends its work through the same `pooled` so it shares the same queue.
 */
export const pooledHtmlAnalyzer = (pool: HtmlPool, options: HtmlWorkerOptions = {}): HtmlAnalyzer["Service"] => {
  const perAccount = options.perAccount ?? 4
  const queue = fairQueue({
    slots: pool.threads,
    perOwner: perAccount,
    // With more than one thread, one account never holds them all: a free one stays for the others.
    perOwnerRunning: Math.max(1, pool.threads - 1),
    maxWaiting: options.maxQueue ?? 64,
  })
  options.watch?.(() => queue.load())
  const small = options.small ?? SMALL_BODY
  const busy = new Unavailable({ detail: "Too many article bodies are being sanitised right now; retry in a moment." })
  const ownLimit = new RateLimited({ limit: perAccount, retryAfterSeconds: 1, counted: "article bodies of this account being sanitised at once" })

  const now = options.now ?? Date.now
  // Places `admits` promised to large bodies not yet in the pool (being read and parsed), per
  // account, oldest first, at most `perAccount` an account. Without them the twenty bodies an
  // account sends at once would all be admitted (none is in the pool yet), all read and parsed on
  // the event loop, and sixteen refused only then. A place is taken by the account's next job in
  // the pool (the oldest place), given back by its request when it ends without one (413, 404,
  // bad JSON: the release `admits` answers), and lapses after ADMITTED_HOLD_MS whatever happens.
  interface Place {
    readonly until: number
  }
  const promised = new Map<string, Array<Place>>()
  const livePlaces = (owner: string): Array<Place> | undefined => {
    const places = promised.get(owner)
    if (places === undefined) return undefined
    const t = now()
    while (places.length > 0 && places[0]!.until <= t) places.shift()
    if (places.length === 0) {
      promised.delete(owner)
      return undefined
    }
    return places
  }
  const drop = (owner: string, place?: Place): void => {
    const places = livePlaces(owner)
    if (places === undefined) return
    const at = place === undefined ? 0 : places.indexOf(place)
    if (at >= 0) places.splice(at, 1)
    if (places.length === 0) promised.delete(owner)
  }
  // A job of the account takes the oldest place promised to it, if any.
  const takePromise = (owner: string): void => drop(owner)

  const pooled = <A>(owner: string, job: () => Promise<A>): Effect.Effect<A, RateLimited | Unavailable> =>
    Effect.flatMap(
      Effect.promise(() => {
        takePromise(owner)
        return queue.run(owner, job).then((outcome) => ({ outcome }), (thrown: unknown) => ({ thrown }))
      }),
      (settled): Effect.Effect<A, RateLimited | Unavailable> => {
        if ("thrown" in settled) return Effect.die(settled.thrown)
        const { outcome } = settled
        if ("value" in outcome) return Effect.succeed(outcome.value)
        return Effect.fail(outcome.refused === "owner" ? ownLimit : busy)
      },
    )

  return {
    // A body that may need the pool is promised a place (see `promised`), counted with the
    // account's jobs running and waiting: one account's concurrent bodies past its cap are refused
    // here, before they are read, not after their parse. At most `perAccount` places an account.
    admits: (owner: string, length?: number) =>
      Effect.suspend((): Effect.Effect<() => void, RateLimited> => {
        if (length !== undefined && length <= small.chars) return Effect.succeed(() => undefined)
        const { running, waiting } = queue.load(owner)
        const places = livePlaces(owner)
        if (running + waiting + (places?.length ?? 0) >= perAccount) return Effect.fail(ownLimit)
        // (accounts whose places all lapsed are forgotten now and then: the map stays small)
        if (promised.size > 1024) for (const other of [...promised.keys()]) livePlaces(other)
        const place: Place = { until: now() + ADMITTED_HOLD_MS }
        if (places === undefined) promised.set(owner, [place])
        else places.push(place)
        return Effect.succeed(() => drop(owner, place))
      }),
    // Diffs, restores, PATCH edits and merges wait in the same account's queue as its bodies.
    // A stored body is in its sanitised form, which parses to the tree it was written from (at
    // most one element per character): one of at most STORED_INLINE characters is read here.
    readStored: (html: string, owner: string) =>
      html.length <= STORED_INLINE ? Effect.sync(() => readStoredBody(html)) : pooled(owner, () => pool.runNamed("readStored", html)),
    // The same bound for a stored body's prose (research fetch): a dozen linear passes, at worst
    // 0.4 s for 1 MiB of `<pre>` white space, so about 12 ms for STORED_INLINE characters here.
    prose: (html: string, owner: string) =>
      html.length <= STORED_INLINE ? Effect.sync(() => proseOfHtml(html)) : pooled(owner, () => pool.runNamed("prose", html)),
    // (the worker runs the core's `compareBodies` with these options: its answer is the one they ask for)
    compare: <const O extends CompareOptions>(fromHtml: string, toHtml: string, options: O, owner: string) =>
      pooled(owner, () => pool.runNamed("compare", { fromHtml, toHtml, options }) as Promise<ComparisonFor<O>>),
    applyEdits: (text: string, edits: ReadonlyArray<{ readonly find: string; readonly replace: string }>, owner: string) =>
      pooled(owner, () => pool.runNamed("applyEdits", { text, edits })),
    merge: (base, theirs, mine, owner: string) => pooled(owner, () => pool.runNamed("merge", { base, theirs, mine })),
    // Parts of at most `small` characters together are sanitised here, as a small body is; the
    // rest go to the pool together, in jobs of about PARTS_JOB_CHARS (see there for the bound).
    sanitizeEach: (parts: ReadonlyArray<string>, owner: string) =>
      Effect.gen(function* () {
        const out: Array<string | null> = parts.map(() => null)
        const jobs: Array<Array<number>> = []
        let job: Array<number> = []
        let jobChars = 0
        let inlineChars = 0
        for (const [i, part] of parts.entries()) {
          if (inlineChars + part.length <= small.chars) {
            inlineChars += part.length
            const here = yield* Effect.match(analyzeSmallArticleHtml(part, small), {
              onSuccess: (inline) => (inline === NOT_SMALL ? undefined : inline.html),
              onFailure: () => null,
            })
            if (here !== undefined) {
              out[i] = here
              continue
            }
          }
          job.push(i)
          jobChars += part.length
          if (jobChars >= PARTS_JOB_CHARS) {
            jobs.push(job)
            job = []
            jobChars = 0
          }
        }
        if (job.length > 0) jobs.push(job)
        for (const indexes of jobs) {
          const answers = yield* pooled(owner, () => pool.runNamed("sanitizeEach", indexes.map((i) => parts[i]!)))
          indexes.forEach((i, k) => (out[i] = answers[k] ?? null))
        }
        return out
      }),
    analyze: (html: string, owner: string) =>
      Effect.flatMap(analyzeSmallArticleHtml(html, small), (inline): Effect.Effect<AnalyzedHtml, HtmlRefusal | RateLimited | Unavailable> => {
        if (inline !== NOT_SMALL) return Effect.succeed(inline)
        return Effect.flatMap(pooled(owner, () => pool.run(html)), (answer) =>
          answer.ok ? Effect.succeed(answer.value) : Effect.fail(rebuild(answer)),
        )
      }),
  }
}

/**
 * The article-HTML policy on a pool of worker threads (piscina), each running the core's pure
 * `analyzeArticleHtml` unchanged: sanitising a body, up to a second of work for the largest,
 * never holds the event loop, so health checks and other requests are answered meanwhile. The
 * pool is shared fairly between accounts (`pooledHtmlAnalyzer`); a small body is sanitised where
 * it arrives. The same pool, and its queues, runs the comparisons of two bodies (`compareBodies`),
 * the reading of a stored body (`readStoredBody`), the find-and-replace edits (`applyTextEdits`)
 * and the three-way merges (`mergeArticle`). The pool is closed with the runtime.
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
              // The fair queue hands piscina at most one body per thread; its own queue stays empty.
              maxQueue: maxThreads,
              idleTimeout: 60_000,
              resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb ?? 512 },
            }),
        ),
        (pool) => Effect.promise(() => pool.destroy()),
      )
      // A worker that failed (ended past its heap, crashed) rejects: a defect, not a refusal.
      const lost = (error: unknown): never => {
        options.onWorkerLost?.(error)
        throw error
      }
      return pooledHtmlAnalyzer(
        {
          run: (html) => (pool.run(html) as Promise<HtmlWorkerAnswer>).catch(lost),
          runNamed: (name, task) => pool.run(task, { name }).catch(lost),
          threads: maxThreads,
        },
        options,
      )
    }),
  )
