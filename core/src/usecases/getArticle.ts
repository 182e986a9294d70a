import { Effect } from "effect"
import type { RateLimited, Unavailable } from "../errors.ts"
import { knownProtectedBlocks, rememberProtectedBlocks } from "../html/index.ts"
import { HtmlAnalyzer } from "../ports/HtmlAnalyzer.ts"
import { ArticleRepository } from "../ports/Repositories.ts"
import type { Caller } from "./Caller.ts"
import { articleView } from "./views.ts"

/**
 * Makes the protected blocks of a stored body known (`knownProtectedBlocks`) by reading it where
 * the HtmlAnalyzer runs, off the event loop on a server, unless they are known already: the
 * views that list them then parse nothing in the calling thread.
 */
export const learnProtectedBlocks = (html: string, owner: string): Effect.Effect<void, RateLimited | Unavailable, HtmlAnalyzer> =>
  knownProtectedBlocks(html) !== undefined
    ? Effect.void
    : HtmlAnalyzer.use((analyzer) => Effect.map(analyzer.readStored(html, owner), (body) => rememberProtectedBlocks(html, body.blocks)))

/**
 * One article with its full HTML body; another account's article is NotFound (every GET runs it:
 * a chain). Its protected links are read off the event loop (`learnProtectedBlocks`).
 */
export const getArticle = (caller: Caller, articleId: string) =>
  // every GET runs this: a chain, not a generator
  ArticleRepository.use((articles) =>
    Effect.flatMap(articles.get(caller.accountId, articleId), (article) => Effect.map(learnProtectedBlocks(article.body, caller.accountId), () => articleView(article))),
  )
