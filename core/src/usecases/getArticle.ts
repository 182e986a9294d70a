import { Effect } from "effect"
import { ArticleRepository } from "../ports/Repositories.ts"
import type { Caller } from "./Caller.ts"
import { articleView } from "./views.ts"

/** One article with its full HTML body; another account's article is NotFound. */
export const getArticle = (caller: Caller, articleId: string) =>
  Effect.gen(function* () {
    const articles = yield* ArticleRepository
    return articleView(yield* articles.get(caller.accountId, articleId))
  })
