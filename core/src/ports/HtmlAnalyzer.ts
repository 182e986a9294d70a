import { Context, type Effect } from "effect"
import type { RateLimited, Unavailable } from "../errors.ts"
import type { CompareOptions, ComparisonFor } from "../html/diffBodies.ts"
import type { StoredBody } from "../html/extractProtectedBlocks.ts"
import type { AnalyzedHtml, HtmlRefusal } from "../html/sanitizeArticleHtml.ts"
import type { ArticleMerge, MergeSide } from "../html/mergeArticle.ts"
import type { TextEditsResult } from "../policy/textEdits.ts"

/**
 * Where the article-HTML policy runs. `analyze` answers exactly what the pure
 * `analyzeArticleHtml` answers for the same body (sanitised HTML, report, protected blocks, word
 * count, or the same refusal); an implementation chooses only where the work happens, e.g. in
 * the calling thread (tests, embedders) or on a pool of worker threads (a server, so that one big
 * body does not hold up every other request).
 *
 * The same holds for the other work on bodies that can grow with a 1 MiB body: `readStored`
 * answers the pure `readStoredBody` (a stored body's protected blocks and word count: restores),
 * `compare` the pure `compareBodies` with a fresh budget (diffs: REST, MCP, the revision page),
 * `applyEdits` the pure `applyTextEdits` (PATCH, `edit_article`: up to 100 linear searches of the
 * body), `merge` the pure `mergeArticle` (edits with `base_revision`, the conflict page),
 * `sanitizeEach` the pure `sanitizeEachPart` (the parts typed on the conflict page, each on its own)
 * and `prose` the pure `proseOfHtml` (a stored body as the research connector's `fetch` reads it).
 *
 * Every method names the account the work is done for (`owner`, last): a shared pool serves
 * accounts fairly by it (each account a cap of running and queued jobs, turns taken in rotation).
 * It fails with RateLimited when that account alone has too much work running or waiting, and
 * with Unavailable when the pool cannot take any more work now: either way the caller may retry
 * later (`retryAfterSeconds`).
 */
export class HtmlAnalyzer extends Context.Service<HtmlAnalyzer, {
  readonly analyze: (html: string, owner: string) => Effect.Effect<AnalyzedHtml, HtmlRefusal | RateLimited | Unavailable>
  /**
   * Fails with RateLimited when `owner` has its cap of work running and waiting already and a
   * body of `length` characters (unknown: any) would have to wait for the pool: a transport asks
   * before it reads a large body, so that a refused one costs no parse. An admitted body is
   * promised a place for a few seconds (the pool's own bound), taken by the account's next job in
   * the pool: bodies admitted at once count against the cap before any of them reaches the pool.
   * Succeeds with a release, which the caller calls once its request is done: a place not taken
   * (the request refused on the way) is given back at once (calling it more than once is harmless).
   */
  readonly admits: (owner: string, length?: number) => Effect.Effect<() => void, RateLimited>
  readonly merge: (base: MergeSide, theirs: MergeSide, mine: MergeSide, owner: string) => Effect.Effect<ArticleMerge, RateLimited | Unavailable>
  /**
   * Each part sanitised on its own (`sanitizeEachPart`: its HTML, or null where it is refused), in
   * a bounded number of jobs however many parts there are (a pool sends them together, not one
   * job each).
   */
  readonly sanitizeEach: (parts: ReadonlyArray<string>, owner: string) => Effect.Effect<ReadonlyArray<string | null>, RateLimited | Unavailable>
  readonly readStored: (html: string, owner: string) => Effect.Effect<StoredBody, RateLimited | Unavailable>
  /** A stored body as prose (`proseOfHtml`): a dozen passes over it, up to 0.4 s for 1 MiB of `<pre>`. */
  readonly prose: (html: string, owner: string) => Effect.Effect<string, RateLimited | Unavailable>
  /** A page's comparison (`reading`) answers its line diff and rows (`ComparisonFor`). */
  readonly compare: <const O extends CompareOptions>(fromHtml: string, toHtml: string, options: O, owner: string) => Effect.Effect<ComparisonFor<O>, RateLimited | Unavailable>
  readonly applyEdits: (
    text: string,
    edits: ReadonlyArray<{ readonly find: string; readonly replace: string }>,
    owner: string,
  ) => Effect.Effect<TextEditsResult, RateLimited | Unavailable>
}>()("core/HtmlAnalyzer") {}
