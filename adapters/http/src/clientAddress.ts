import type { ParameterizedContext } from "koa"

const normalise = (address: string): string => (address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address)

/**
 * The client's address for per-address limits. Proxy headers (`X-Forwarded-For`) are trusted only
 * when the app runs with `app.proxy = true` (set from `TRUST_PROXY=true`); otherwise the socket's
 * peer address is used, so a client cannot pick its own address.
 */
export const clientAddress = (ctx: ParameterizedContext): string => {
  const address = ctx.app.proxy ? ctx.ip : ctx.req.socket.remoteAddress
  return normalise(address === undefined || address === "" ? "unknown" : address)
}
