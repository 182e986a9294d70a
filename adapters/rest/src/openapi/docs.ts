import type Router from "@koa/router"
import { strictQuery } from "@content-site/http"
import type Koa from "koa"
import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import type { HttpDeps } from "@content-site/http"
import { openApiDocument } from "./openapi.ts"

/** The reference page's policy: its own scripts and styles only (Swagger UI sets inline styles). */
export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

const ASSETS: Record<string, string> = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
}

const distDir = (): string => dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"))

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Content-Site API reference</title>
<link rel="stylesheet" href="/api/docs/swagger-ui.css">
<link rel="icon" type="image/png" href="/api/docs/favicon-32x32.png">
</head>
<body>
<header style="background:#111827;padding:.6rem 1.25rem;font:600 1rem/1.5 system-ui,sans-serif"><nav aria-label="Content-Site"><a href="/" style="color:#fff">← Back to Content-Site</a> <span style="color:#d1d5db;font-weight:400">· API reference</span></nav></header>
<main id="swagger-ui"><noscript><p>The API reference needs JavaScript; the raw document is at <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.</p></noscript></main>
<script src="/api/docs/swagger-ui-bundle.js"></script>
<script src="/api/docs/init.js"></script>
</body>
</html>
`

const INIT = `window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({ url: "/api/v1/openapi.json", dom_id: "#swagger-ui", deepLinking: true, tryItOutEnabled: false });
});
`

/**
 * Serves `/api/v1/openapi.json` (on the API router) and the reference page `/api/docs`, rendered by
 * Swagger UI from the project's own `swagger-ui-dist` (no CDN), under a CSP that allows only it.
 */
export const mountDocs = (router: Router, app: Koa, deps: HttpDeps): void => {
  let json: string | undefined
  router.get("/openapi.json", (ctx) => {
    strictQuery(ctx.querystring, [])
    json ??= JSON.stringify(openApiDocument(deps.publicUrl))
    ctx.set("Cache-Control", "no-store")
    ctx.set("Access-Control-Allow-Origin", "*")
    ctx.type = "application/json"
    ctx.body = json
  })
  const cache = new Map<string, Buffer>()
  app.use(async (ctx, next) => {
    if (!ctx.path.startsWith("/api/docs") || (ctx.method !== "GET" && ctx.method !== "HEAD")) return next()
    const rest = ctx.path.slice("/api/docs".length)
    strictQuery(ctx.querystring, [])
    if (rest === "" || rest === "/") {
      ctx.set("Content-Security-Policy", DOCS_CSP)
      ctx.set("Cache-Control", "no-cache")
      ctx.type = "text/html; charset=utf-8"
      ctx.body = PAGE
      return
    }
    const name = rest.slice(1)
    if (name === "init.js") {
      ctx.set("Cache-Control", "no-cache")
      ctx.type = "text/javascript; charset=utf-8"
      ctx.body = INIT
      return
    }
    const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined
    if (type === undefined) return next()
    let bytes = cache.get(name)
    if (bytes === undefined) {
      bytes = await readFile(join(distDir(), name))
      cache.set(name, bytes)
    }
    ctx.set("Cache-Control", "public, max-age=3600")
    ctx.type = type
    ctx.body = bytes
  })
}
