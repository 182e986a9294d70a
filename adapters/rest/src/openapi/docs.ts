import type Router from "@koa/router"
import type Koa from "koa"
import type { HttpDeps } from "../http/deps.ts"
import { openApiDocument } from "./openapi.ts"

/** Serves `/api/v1/openapi.json` (on the API router) and the reference page `/api/docs`. */
export const mountDocs = (router: Router, app: Koa, deps: HttpDeps): void => {
  let json: string | undefined
  router.get("/openapi.json", (ctx) => {
    json ??= JSON.stringify(openApiDocument(deps.publicUrl))
    ctx.set("Cache-Control", "no-store")
    ctx.set("Access-Control-Allow-Origin", "*")
    ctx.type = "application/json"
    ctx.body = json
  })
  void app
}
