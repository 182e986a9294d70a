/**
 * The web pages, mounted room by room: each page's routes live beside the page
 * (`pages/*.routes.ts`) and share the kit in `pageKit.ts`; this file lists them, then answers
 * every other page address with the site's own 404 page.
 */
import Router from "@koa/router"
import type { HttpDeps } from "@content-site/http"
import { readSession, requestIdOf, signedInAccount } from "@content-site/http"
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

  // Nothing else answered a page address: the site's own 404 page, with a way back.
  app.use(async (ctx, next) => {
    if ((ctx.method !== "GET" && ctx.method !== "HEAD") || NOT_PAGES.test(ctx.path)) return next()
    const session = await readSession(ctx, deps)
    const account = session === null ? null : await signedInAccount(ctx, deps)
    send(
      ctx,
      404,
      errorPage({
        status: 404,
        title: "Page not found",
        message: "There is no page at this address. It may have moved, or the link may be mistyped.",
        requestId: requestIdOf(ctx),
        account,
        csrf: session?.csrf ?? "",
      }),
    )
  })
}

