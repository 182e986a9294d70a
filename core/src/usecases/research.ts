import { Effect } from "effect"
import { proseOfHtml } from "../policy/search.ts"
import { Settings } from "../ports/Platform.ts"
import type { ResearchDocument, ResearchResults } from "../schema/research.ts"
import type { Caller } from "./Caller.ts"
import { getArticle } from "./getArticle.ts"
import { searchArticles } from "./searchArticles.ts"

/** How many results the research connectors' `search` answers (it takes no page), or the operator's MAX_PER_PAGE if lower. */
export const RESEARCH_RESULTS = 20

/**
 * The research connectors' `search`: the best articles of the caller's account for one query
 * string, RESEARCH_RESULTS of them or the operator's page size if lower (the caller sends no
 * page size, so none it did not send can be refused).
 */
export const researchSearch = (caller: Caller, query: string) =>
  Settings.use((settings) =>
    Effect.map(
      searchArticles(caller, { q: query, per_page: Math.min(RESEARCH_RESULTS, settings.limits.maxPerPage) }),
      (page): ResearchResults => ({ results: page.data.map((a) => ({ id: a.id, title: a.title, url: a.url })) }),
    ),
  )

/** The research connectors' `fetch`: one of the caller's articles as prose with its facts; another account's is NotFound. */
export const researchFetch = (caller: Caller, id: string) =>
  Effect.map(
    getArticle(caller, id),
    (a): ResearchDocument => ({
      id: a.id,
      title: a.title,
      text: proseOfHtml(a.body),
      url: a.url,
      metadata: {
        site_id: a.site_id,
        status: a.status,
        published_at: a.published_at,
        updated_at: a.updated_at,
        "target keyword": a["target keyword"],
        "word count": a["word count"],
        revision: a.revision,
      },
    }),
  )
