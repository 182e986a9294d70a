/** Routes: The static files: styles, the small script and the visual editor bundle. */
import type Router from "@koa/router"
import { strictQuery } from "@content-site/http"
import type { PageKit } from "../pageKit.ts"

export const mountStaticRoutes = (router: Router, kit: PageKit): void => {
  const { staticFiles } = kit
  router.get("/static/:file", async (ctx, next) => {
    const found = staticFiles.get(ctx.path)
    if (found === undefined) return next()
    strictQuery(ctx.querystring, [])
    ctx.set("Cache-Control", "public, max-age=3600")
    ctx.type = found.type
    ctx.body = found.body
  })
}
