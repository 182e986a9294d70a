import { Effect } from "effect"
import { ArticleRepository } from "../ports/Repositories.ts"
import type { Caller } from "./Caller.ts"
import { articleView } from "./views.ts"

/** One article with its full HTML body; another account's article is NotFound (every GET runs it: a chain). */
export const getArticle = (caller: Caller, articleId: string) =>
  ArticleRepository.use((articles) => Effect.map(articles.get(caller.accountId, articleId), articleView))
