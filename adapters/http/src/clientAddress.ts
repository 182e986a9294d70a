import { Address6 } from "ip-address"
import type { ParameterizedContext } from "koa"

const normalise = (address: string): string => (address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address)

/**
 * The prefix length an IPv6 client is known by: one home or office is given a /56 (or a /48, or a
 * /64) of its own, and takes any address in it at will, so counting each address apart would give
 * it 2^72 failure budgets. 56 is express-rate-limit's default for the same reason.
 */
export const IPV6_CLIENT_PREFIX = 56

/**
 * The key an address is counted under: an IPv4 address itself, an IPv6 address its
 * IPV6_CLIENT_PREFIX-bit network (`2001:db8:abcd:1200::/56`), parsed by `ip-address`; anything it
 * cannot parse, as given.
 */
export const clientKeyOf = (address: string): string => {
  if (!address.includes(":")) return address
  let key = ipv6Keys.get(address)
  if (key === undefined) {
    try {
      key = `${new Address6(`${address}/${IPV6_CLIENT_PREFIX}`).startAddress().correctForm()}/${IPV6_CLIENT_PREFIX}`
    } catch {
      key = address
    }
    if (ipv6Keys.size >= MAX_REMEMBERED_IPV6) ipv6Keys.clear()
    ipv6Keys.set(address, key)
  }
  return key
}

/**
 * IPv6 addresses whose key was worked out lately (parsing one takes about 4 µs, and every request
 * asks at least once): at most MAX_REMEMBERED_IPV6, all forgotten when full.
 */
const ipv6Keys = new Map<string, string>()
const MAX_REMEMBERED_IPV6 = 4096

/**
 * The client's address as the app determined it: the socket's peer address, or with
 * `app.proxy = true` (set from `TRUST_PROXY=true`) the entry the trusted proxy added to
 * `X-Forwarded-For`, so a client cannot pick its own address; an IPv4 address mapped into IPv6 as IPv4.
 */
export const peerAddress = (ctx: ParameterizedContext): string => {
  const address = ctx.app.proxy ? ctx.ip : ctx.req.socket.remoteAddress
  return normalise(address === undefined || address === "" ? "unknown" : address)
}

/**
 * The client for per-address limits, turns and drafts (`clientKeyOf` its `peerAddress`): an IPv4
 * address, or the /56 an IPv6 address lies in.
 */
export const clientAddress = (ctx: ParameterizedContext): string => clientKeyOf(peerAddress(ctx))
