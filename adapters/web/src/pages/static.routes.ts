/** Routes: The static files (styles, the small script and the visual editor bundle), and the problem types' pages. */
import type Router from "@koa/router"
import { NotFound } from "@content-site/core"
import { strictQuery } from "@content-site/http"
import { send, type PageKit } from "../pageKit.ts"
import { problemDoc, problemPage, problemsPage } from "./problems.ts"

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
  // The `type` of every problem the API and MCP answer: a page a person can open (RFC 9457 3.1.1).
  router.get("/problems", async (ctx) => {
    strictQuery(ctx.querystring, [])
    // The same page for everyone, cached: no sign-in form, so no CSRF cookie is set. (After
    // `send`, which marks every page `no-store`.)
    send(ctx, 200, problemsPage())
    ctx.set("Cache-Control", "public, max-age=3600")
  })
  router.get("/problems/:code", async (ctx) => {
    const code = ctx.params["code"] ?? ""
    const doc = problemDoc(code)
    // (the 404 page holds no form: no CSRF cookie either)
    if (doc === undefined) return kit.renderFailure(ctx, new NotFound({ resource: "problem type", id: code.slice(0, 100) }), null, "")
    strictQuery(ctx.querystring, [])
    send(ctx, 200, problemPage(doc))
    ctx.set("Cache-Control", "public, max-age=3600")
  })
}
