import { Context, type Effect } from "effect"
import type { RateLimited, Unavailable } from "../errors.ts"
import type { AnalyzedHtml, HtmlRefusal } from "../html/sanitizeArticleHtml.ts"

/**
 * Where the article-HTML policy runs. `analyze` answers exactly what the pure
 * `analyzeArticleHtml` answers for the same body (sanitised HTML, report, protected blocks, word
 * count, or the same refusal); an implementation chooses only where the work happens, e.g. in
 * the calling thread (tests, embedders) or on a pool of worker threads (a server, so that one big
 * body does not hold up every other request).
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
   * before it reads a large body, so that a refused one costs no parse. A check, not a reservation.
   */
  readonly admits: (owner: string, length?: number) => Effect.Effect<void, RateLimited>
}>()("core/HtmlAnalyzer") {}
