/** Routes: The sites list and one site with its articles and backlinks (`/sites`, `/sites/{id}`). */
import type Router from "@koa/router"
import { type CoreError, decodeInput, getStats, ListArticlesQuery, listArticles, listBacklinks, ListBacklinksQuery, listSites, type PeriodSummary } from "@content-site/core"
import { Effect, Result } from "effect"
import { noteSubject, runCore, runCoreOrThrow } from "../call.ts"
import { queryParam } from "../forms.ts"
import { siteContent, sitesContent, type SiteTab } from "./sites.ts"
import { takeFlash } from "@content-site/http"
import { defined, isId, notFound, pageNumber, queryOf, sentences, type PageKit } from "../pageKit.ts"

export const mountSitesRoutes = (router: Router, kit: PageKit): void => {
  const { deps, perPage, findSite, render, signedIn } = kit
  router.get(
    "/sites",
    signedIn("GET /sites", async (ctx, s) => {
      const query = queryOf(ctx, ["page"])
      const sites = await runCoreOrThrow(deps, listSites(s.caller, { page: pageNumber(query["page"]), per_page: await perPage(30) }))
      const stats = new Map<string, PeriodSummary>()
      const summaries = await runCoreOrThrow(
        deps,
        Effect.all(sites.data.map((site) => getStats(s.caller, site.id, {})), { concurrency: 4 }),
      )
      for (const summary of summaries) stats.set(summary.site_id, summary)
      render(ctx, 200, s, "sites", "Your sites", sitesContent(sites, stats, query), await takeFlash(deps, s.session))
    }),
  )

  router.get(
    "/sites/:id",
    signedIn("GET /sites/{id}", async (ctx, s) => {
      const id = ctx.params["id"]
      if (!isId(id)) throw notFound("website", String(id))
      noteSubject(ctx, { siteId: id })
      const tab: SiteTab = queryParam(ctx, "tab") === "backlinks" ? "backlinks" : "articles"
      const query = queryOf(ctx, ["from", "to", "status", "page", "tab"])
      // getStats first: another account's site fails here as NotFound, before any listing.
      const stats = await runCoreOrThrow(deps, getStats(s.caller, id, {}))
      const site = await findSite(s.caller, id)
      if (site === null) throw notFound("website", id)
      const filters = defined({ from: query["from"], to: query["to"], page: query["page"] })
      const articles =
        tab === "articles"
          ? await runCore(deps, Effect.flatMap(decodeInput(ListArticlesQuery, { ...filters, ...defined({ status: query["status"] }) }, "Filters"), (q) => listArticles(s.caller, id, q)))
          : null
      const backlinks =
        tab === "backlinks"
          ? await runCore(deps, Effect.flatMap(decodeInput(ListBacklinksQuery, filters, "Filters"), (q) => listBacklinks(s.caller, id, q)))
          : null
      let error: string | null = null
      let invalid: ReadonlyArray<string> = []
      const failure: CoreError | null =
        articles !== null && Result.isFailure(articles) ? articles.failure : backlinks !== null && Result.isFailure(backlinks) ? backlinks.failure : null
      if (failure !== null) {
        if (failure._tag !== "InvalidRequest") throw failure
        // in the words the activity page's filters use, not the decoder's
        error = sentences(failure.errors).join(" ")
        invalid = failure.errors.map((e) => e.path.split("/").pop() ?? "")
      }
      const content = siteContent({
        site,
        stats,
        tab,
        query,
        articles: articles !== null && Result.isSuccess(articles) ? articles.success : null,
        backlinks: backlinks !== null && Result.isSuccess(backlinks) ? backlinks.success : null,
        error,
        invalid,
      })
      render(ctx, error === null ? 200 : 400, s, "sites", error === null ? site.name : `Error: ${site.name}`, content, await takeFlash(deps, s.session), true)
    }),
  )
}
