/** Routes: The static files (styles, the small script and the visual editor bundle), and the problem types' pages. */
import type Router from "@koa/router"
import { notesOf, requestIdOf, sendProblem, strictQuery } from "@content-site/http"
import { send, type PageKit } from "../pageKit.ts"
import { problemDoc, problemPage, problemsPage, unknownProblemPage } from "./problems.ts"

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
  // A static file takes GET and HEAD only: any other method is a 405 problem saying so (OPTIONS a
  // 204), as for every other resource; an unknown file stays a 404.
  router.all("/static/:file", async (ctx, next) => {
    if (ctx.method === "GET" || ctx.method === "HEAD" || !staticFiles.has(ctx.path)) return next()
    ctx.set("Allow", "GET, HEAD")
    if (ctx.method === "OPTIONS") {
      ctx.status = 204
      return
    }
    sendProblem(ctx, {
      type: `${kit.deps.publicUrl}/problems/method_not_allowed`,
      title: "Method not allowed",
      status: 405,
      code: "method_not_allowed",
      detail: `${ctx.method.slice(0, 20)} is not allowed on this path; use GET or HEAD.`,
      request_id: requestIdOf(ctx),
    })
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
    // (the 404 page holds no form: no CSRF cookie either; it concerns no account, and says what is missing)
    if (doc === undefined) {
      notesOf(ctx).problemCode = "not_found"
      return send(ctx, 404, unknownProblemPage(code.slice(0, 100), requestIdOf(ctx)))
    }
    strictQuery(ctx.querystring, [])
    send(ctx, 200, problemPage(doc))
    ctx.set("Cache-Control", "public, max-age=3600")
  })
}
