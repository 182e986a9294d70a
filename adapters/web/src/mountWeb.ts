/**
 * The web pages, mounted room by room: each page's routes live beside the page
 * (`pages/*.routes.ts`) and share the kit in `pageKit.ts`; this file lists them, then answers
 * every other page address with the site's own 404 page.
 */
import Router from "@koa/router"
import type { HttpDeps } from "@content-site/http"
import { notesOf, readSession, requestIdOf, signedInAccount } from "@content-site/http"
import type Koa from "koa"
import { makePageKit, NOT_PAGES, send } from "./pageKit.ts"
import { errorPage } from "./pages/errorPage.ts"
import { mountStaticRoutes } from "./pages/static.routes.ts"
import { mountSignInRoutes } from "./pages/signIn.routes.ts"
import { mountSitesRoutes } from "./pages/sites.routes.ts"
import { mountSearchRoutes } from "./pages/search.routes.ts"
import { mountArticleRoutes } from "./pages/article.routes.ts"
import { mountMergeRoutes } from "./pages/merge.routes.ts"
import { mountArticleImageRoutes } from "./pages/articleImage.routes.ts"
import { mountRevisionRoutes } from "./pages/revision.routes.ts"
import { mountActivityRoutes } from "./pages/activity.routes.ts"
import { mountConnectRoutes } from "./pages/connect.routes.ts"

export { PAGE_CSP } from "./pageKit.ts"

/**
 * Mounts the web pages: sign-in (`/`), `/sites`, `/sites/{id}`, `/articles/{id}` (edit, image,
 * revisions, diff, restore), `/activity`, `/connect` and `/static/*`. Every action goes through the
 * core use cases as the `editor` origin (channel `web`) and is written to the activity log.
 */
export const mountWeb = (app: Koa, deps: HttpDeps): void => {
  const router = new Router()
  const kit = makePageKit(deps)
  mountStaticRoutes(router, kit)
  mountSignInRoutes(router, kit)
  mountSitesRoutes(router, kit)
  mountSearchRoutes(router, kit)
  mountArticleRoutes(router, kit)
  mountMergeRoutes(router, kit)
  mountArticleImageRoutes(router, kit)
  mountRevisionRoutes(router, kit)
  mountActivityRoutes(router, kit)
  mountConnectRoutes(router, kit)

  app.use(router.routes())

  // Nothing else answered a page address: the site's own 404 page, with a way back; a page's
  // address asked with a method it does not take, its 405 page with `Allow`.
  app.use(async (ctx, next) => {
    if (NOT_PAGES.test(ctx.path)) return next()
    const matched = ctx.method === "GET" || ctx.method === "HEAD" ? [] : router.match(ctx.path, ctx.method).path
    const allowed = [...new Set(matched.flatMap((layer) => layer.methods))]
    // a page's address asked with another method is that page's: its template (`:id` written
    // `{id}`) names it in the access line and the metrics, as a known API path's 405 does
    const page = matched.find((layer) => layer.methods.length > 0)?.path
    if (allowed.length > 0 && typeof page === "string") notesOf(ctx).route = page.replace(/:(\w+)/g, "{$1}")
    const session = await readSession(ctx, deps)
    const account = session === null ? null : await signedInAccount(ctx, deps)
    // an error page, like every refusal, names its code in the access line and the refusals counted
    notesOf(ctx).problemCode = allowed.length > 0 ? "method_not_allowed" : "not_found"
    if (allowed.length > 0) ctx.set("Allow", allowed.join(", "))
    send(
      ctx,
      allowed.length > 0 ? 405 : 404,
      errorPage(
        allowed.length > 0
          ? { status: 405, title: "Not a way to use this page", message: `This page does not take ${ctx.method.slice(0, 20)}; open it in your browser instead.`, requestId: requestIdOf(ctx), account, csrf: session?.csrf ?? "" }
          : { status: 404, title: "Page not found", message: "There is no page at this address. It may have moved, or the link may be mistyped.", requestId: requestIdOf(ctx), account, csrf: session?.csrf ?? "" },
      ),
    )
  })
}

