import { Effect } from "effect"
import { relaxedSearchQueries } from "../policy/search.ts"
import { HtmlAnalyzer } from "../ports/HtmlAnalyzer.ts"
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
 * page size, so none it did not send can be refused). A query in web-search syntax is searched as
 * written; one that found nothing and reads as a question ("Which articles talk about compost?",
 * what chat assistants send) is tried again with its own words, all of them, then any
 * (`relaxedSearchQueries`): three searches at most.
 */
export const researchSearch = (caller: Caller, query: string) =>
  Settings.use((settings) => {
    const perPage = Math.min(RESEARCH_RESULTS, settings.limits.maxPerPage)
    const tries = [query, ...relaxedSearchQueries(query)]
    const first = (at: number): ReturnType<typeof searchArticles> =>
      Effect.flatMap(searchArticles(caller, { q: tries[at]!, per_page: perPage }, { snippets: false }), (page) =>
        page.data.length > 0 || at === tries.length - 1 ? Effect.succeed(page) : first(at + 1),
      )
    return Effect.map(first(0), (page): ResearchResults => ({ results: page.data.map((a) => ({ id: a.id, title: a.title, url: a.url })) }))
  })

/**
 * The research connectors' `fetch`: one of the caller's articles as prose with its facts; another
 * account's is NotFound. The prose is made where the HtmlAnalyzer works (`prose`: a server's pool,
 * in the account's share, for a body over a few KiB), not on the event loop: a dozen passes over
 * a stored body of 1 MiB or more.
 */
export const researchFetch = (caller: Caller, id: string) =>
  Effect.flatMap(Effect.zip(getArticle(caller, id), HtmlAnalyzer), ([a, analyzer]) =>
    Effect.map(analyzer.prose(a.body, caller.accountId), (text): ResearchDocument => ({
      id: a.id,
      title: a.title,
      text,
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
    })),
  )
