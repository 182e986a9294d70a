/** Routes: full-text search over the person's articles (`/search?q=...&site_id=...`). */
import type Router from "@koa/router"
import { decodeInput, InvalidRequest, SearchArticlesQuery, searchArticles, toProblem } from "@content-site/core"
import { requestIdOf } from "@content-site/http"
import { Effect, Result } from "effect"
import { runCore } from "../call.ts"
import { searchContent } from "./search.ts"
import { defined, isId, notFound, pageNumber, queryOf, type PageKit } from "../pageKit.ts"

/** The results' page number, a refusal (not a defect) when it is not one. */
const pageOf = (s: string | undefined): Effect.Effect<number, InvalidRequest> =>
  Effect.try({ try: () => pageNumber(s), catch: (e) => (e instanceof InvalidRequest ? e : new InvalidRequest({ detail: "The page number is not valid: it is a whole number from 1.", errors: [{ path: "page", message: "Expected a whole number from 1" }] })) })

export const mountSearchRoutes = (router: Router, kit: PageKit): void => {
  const { deps, perPage, findSite, render, signedIn } = kit
  router.get(
    "/search",
    signedIn("GET /search", async (ctx, s) => {
      const query = queryOf(ctx, ["q", "site_id", "page"])
      const siteId = query["site_id"]
      if (siteId !== undefined && !isId(siteId)) throw notFound("website", siteId)
      const site = siteId === undefined ? null : await findSite(s.caller, siteId)
      if (siteId !== undefined && site === null) throw notFound("website", siteId)
      const q = query["q"]
      if (q === undefined) {
        render(ctx, 200, s, "sites", "Search", searchContent({ q: "", site, results: null, query, error: null }))
        return
      }
      const searched = await runCore(
        deps,
        Effect.flatMap(decodeInput(SearchArticlesQuery, { q, ...defined({ site_id: siteId }) }, "Search"), (input) =>
          // a page number that is not one is refused like the words: on the search page, the words kept
          Effect.flatMap(pageOf(query["page"]), (page) =>
            Effect.flatMap(Effect.promise(() => perPage(20)), (per_page) => searchArticles(s.caller, { ...input, page, per_page })),
          ),
        ),
      )
      if (Result.isFailure(searched)) {
        if (searched.failure._tag !== "InvalidRequest") throw searched.failure
        const error = toProblem(searched.failure, requestIdOf(ctx), deps.publicUrl).detail
        render(ctx, 400, s, "sites", "Error: Search", searchContent({ q, site, results: null, query, error }))
        return
      }
      render(ctx, 200, s, "sites", `Search: ${q}`, searchContent({ q, site, results: searched.success, query, error: null }))
    }),
  )
}
