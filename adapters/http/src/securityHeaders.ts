import type { Middleware } from "koa"

/**
 * The default Content-Security-Policy: nothing may load, nothing may frame us. API responses keep
 * it; pages that need more (styles, forms, images) set their own `Content-Security-Policy`
 * header after this middleware ran — it only fills headers that are still unset.
 */
export const DEFAULT_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

/** Options of the security-header middleware. */
export interface SecurityHeaderOptions {
  /** Send `Strict-Transport-Security` (when the public URL is https). */
  readonly hsts?: boolean
}

/** The usual security headers on every response (pages and API alike). */
export const securityHeaders = (options: SecurityHeaderOptions = {}): Middleware => {
  const defaults: ReadonlyArray<readonly [string, string]> = Object.entries({
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": DEFAULT_CSP,
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
    ...(options.hsts === true ? { "Strict-Transport-Security": "max-age=31536000; includeSubDomains" } : {}),
  })
  return async (ctx, next) => {
    try {
      await next()
    } finally {
      if (!ctx.headerSent) for (const [name, value] of defaults) if (!ctx.res.hasHeader(name)) ctx.res.setHeader(name, value)
    }
  }
}
