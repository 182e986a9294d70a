/** Routes: The activity page: the account's history in words, with its filters. */
import type Router from "@koa/router"
import { decodeInput, listActivity, ListActivityQuery, listArticles, listSites, type Caller } from "@content-site/core"
import { Effect, Result } from "effect"
import { runCore, runCoreOrThrow } from "../call.ts"
import { CHANGE_ACTIONS } from "../activityWords.ts"
import { activityContent } from "./activity.ts"
import { takeFlash } from "@content-site/http"
import { InvalidFilter, defined, isId, queryOf, sentences, type PageKit } from "../pageKit.ts"

export const mountActivityRoutes = (router: Router, kit: PageKit): void => {
  const { deps, perPage, render, signedIn, titlesOf } = kit
  /** The account's articles for the article filter, by title (the first 100 of each site). */
  const articleChoices = async (caller: Caller): Promise<ReadonlyArray<{ id: string; title: string }>> => {
    const size = await perPage(100)
    const sites = await runCoreOrThrow(deps, listSites(caller, { page: 1, per_page: size }))
    const lists = await runCoreOrThrow(
      deps,
      Effect.all(sites.data.map((site) => listArticles(caller, site.id, { page: 1, per_page: size })), { concurrency: 4 }),
    )
    return lists.flatMap((l) => l.data.map((a) => ({ id: a.id, title: a.title }))).sort((x, y) => x.title.localeCompare(y.title))
  }

  router.get(
    "/activity",
    signedIn("GET /activity", async (ctx, s) => {
      const query = queryOf(ctx, ["channel", "status", "from", "to", "page", "article", "changes"])
      const status = query["status"]
      const article = query["article"]
      const size = await perPage(25)
      const outcome = await runCore(
        deps,
        Effect.gen(function* () {
          const q = yield* decodeInput(ListActivityQuery, defined({ channel: query["channel"], from: query["from"], to: query["to"], page: query["page"] }), "Filters")
          if (status !== undefined && status !== "ok" && status !== "error") {
            return yield* Effect.fail(new InvalidFilter("The result filter must be “Done” or “Refused or failed”.", "status"))
          }
          if (article !== undefined && !isId(article)) return yield* Effect.fail(new InvalidFilter("That article id is not valid.", "article"))
          return yield* listActivity(s.caller, {
            ...q,
            per_page: size,
            ...(status === "ok" || status === "error" ? { outcome: status } : {}),
            ...(article !== undefined ? { article_id: article } : {}),
            ...(query["changes"] === "1" ? { actions: CHANGE_ACTIONS } : {}),
          })
        }),
      )
      let error: string | null = null
      let invalid: ReadonlyArray<string> = []
      if (Result.isFailure(outcome)) {
        const e = outcome.failure
        if (e instanceof InvalidFilter) {
          error = e.message
          invalid = [e.field]
        } else if (e._tag === "InvalidRequest") {
          error = sentences(e.errors).join(" ")
          invalid = e.errors.map((x) => x.path.split("/").pop() ?? "")
        } else throw e
      }
      const entries = Result.isSuccess(outcome) ? outcome.success : null
      const [titles, articles] = await Promise.all([
        titlesOf(s.caller, [...(entries?.data ?? []), ...(article !== undefined && isId(article) ? [{ article_id: article }] : [])]),
        articleChoices(s.caller),
      ])
      render(
        ctx,
        error === null ? 200 : 400,
        s,
        "activity",
        error === null ? "Activity" : "Error: Activity",
        activityContent({ entries, titles, articles, query, error, invalid }),
        await takeFlash(deps, s.session),
        true,
      )
    }),
  )
}
