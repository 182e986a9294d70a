import type Router from "@koa/router"
import { strictQuery } from "@content-site/http"
import type Koa from "koa"
import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import type { HttpDeps } from "@content-site/http"
import { Settings } from "@content-site/core"
import { Effect } from "effect"
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
<link rel="stylesheet" href="/api/docs/theme.css">
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

// Without deep links an operation's summary is one button (a link inside it was a nested control).
// Swagger UI renders the server select without a label and scrolled code blocks out of the tab
// order: both are mended as they appear, so every part stays shown and reachable.
const INIT = `window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({ url: "/api/v1/openapi.json", dom_id: "#swagger-ui", deepLinking: false, tryItOutEnabled: false });
  var mend = function () {
    var servers = document.getElementById("servers");
    if (servers && !servers.hasAttribute("aria-label")) servers.setAttribute("aria-label", "Server");
    document.querySelectorAll(".highlight-code pre, .microlight").forEach(function (code) {
      if (!code.hasAttribute("tabindex")) { code.setAttribute("tabindex", "0"); code.setAttribute("role", "region"); code.setAttribute("aria-label", "Example"); }
    });
  };
  new MutationObserver(mend).observe(document.getElementById("swagger-ui"), { childList: true, subtree: true });
  mend();
});
`

/**
 * The reference page's theme over Swagger UI's own: its colours darkened or lightened until
 * every text meets WCAG AA contrast (4.5:1) on its background.
 */
const THEME = `.swagger-ui .opblock .opblock-summary-method { color: #fff; text-shadow: none; }
.swagger-ui .opblock.opblock-get .opblock-summary-method { background: #1d4ed8; }
.swagger-ui .opblock.opblock-put .opblock-summary-method { background: #9a3412; }
.swagger-ui .opblock.opblock-post .opblock-summary-method { background: #166534; }
.swagger-ui .opblock.opblock-patch .opblock-summary-method { background: #0f766e; }
.swagger-ui .opblock.opblock-delete .opblock-summary-method { background: #b91c1c; }
.swagger-ui .info .title small { background: #374151; }
.swagger-ui .info .title small pre, .swagger-ui .info .title small.version-stamp { background: #166534; }
.swagger-ui .info .title small pre, .swagger-ui .info .title small .version { color: #fff; }
.swagger-ui .info .url, .swagger-ui .info a { color: #1d4ed8; }
.swagger-ui .btn.authorize { color: #166534; border-color: #166534; }
.swagger-ui .btn.authorize span, .swagger-ui .btn > span { color: inherit; }
.swagger-ui .btn { color: #1f2937; }
.swagger-ui .parameter__in, .swagger-ui .parameter__type, .swagger-ui .prop-format, .swagger-ui .response-col_links, .swagger-ui .opblock-description-wrapper p, .swagger-ui .renderedMarkdown p { color: #374151; }
.swagger-ui .parameter__name.required span, .swagger-ui .parameter__name.required::after { color: #b91c1c; }
.swagger-ui .opblock-summary-path, .swagger-ui .opblock-summary-description { color: #111827; }
.swagger-ui .model-title, .swagger-ui .model, .swagger-ui .prop-type { color: #1f2937; }
.swagger-ui .tab li, .swagger-ui .opblock-section-header h4, .swagger-ui .response-col_status { color: #111827; }
.swagger-ui .json-schema-2020-12-expand-deep-button { color: #1d4ed8; }
.swagger-ui .highlight-code .microlight { background: #1f2937 !important; }
.swagger-ui .highlight-code .microlight, .swagger-ui .highlight-code .microlight * { color: #f9fafb !important; }
`

/**
 * Serves `/api/v1/openapi.json` (on the API router) and the reference page `/api/docs`, rendered by
 * Swagger UI from the project's own `swagger-ui-dist` (no CDN), under a CSP that allows only it.
 */
export const mountDocs = (router: Router, app: Koa, deps: HttpDeps): void => {
  let json: string | undefined
  router.get("/openapi.json", (ctx) => {
    strictQuery(ctx.querystring, [])
    json ??= JSON.stringify(
      openApiDocument(deps.publicUrl, { maxPerPage: deps.runtime.runSync(Settings.use((settings) => Effect.succeed(settings.limits.maxPerPage))) }),
    )
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
    if (name === "theme.css") {
      ctx.set("Cache-Control", "no-cache")
      ctx.type = "text/css; charset=utf-8"
      ctx.body = THEME
      return
    }
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
