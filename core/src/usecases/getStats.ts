import { Effect } from "effect"
import { resolvePeriod } from "../policy/time.ts"
import { Clock } from "../ports/Platform.ts"
import { ArticleRepository, BacklinkRepository, SiteRepository } from "../ports/Repositories.ts"
import type { StatsQuery } from "../schema/queries.ts"
import type { PeriodSummary } from "../schema/resources.ts"
import type { Caller } from "./Caller.ts"
import { articleListView, backlinkView } from "./views.ts"

/** The period summary: published articles and acquired backlinks whose dates fall in the period. */
export const getStats = (caller: Caller, siteId: string, query: StatsQuery) =>
  Effect.gen(function* () {
    const now = yield* (yield* Clock).now
    const period = yield* resolvePeriod(query.period ?? "this_month", now)
    yield* (yield* SiteRepository).require(caller.accountId, siteId)
    const [articles, backlinks] = yield* Effect.all(
      [
        ArticleRepository.use((repo) =>
          repo.list(caller.accountId, { siteId, status: "published", from: period.fromInstant, to: period.toInstant }, undefined),
        ),
        BacklinkRepository.use((repo) =>
          repo.list(caller.accountId, { siteId, fromDate: period.from, toDate: period.to }, undefined),
        ),
      ],
      { concurrency: 2 },
    )
    const summary: PeriodSummary = {
      site_id: siteId,
      period: { key: period.key, from: period.from, to: period.to },
      articles: {
        count: articles.total,
        "word count": articles.items.reduce((n, a) => n + a.word_count, 0),
        items: articles.items.map(articleListView),
      },
      backlinks: {
        count: backlinks.total,
        industry: backlinks.items.filter((b) => b.category === "industry").length,
        local: backlinks.items.filter((b) => b.category === "local").length,
        items: backlinks.items.map(backlinkView),
      },
    }
    return summary
  })
