import { BlockList, isIP } from "node:net"

/**
 * Special-purpose IPv4 ranges (IANA registry, RFC 6890 and successors) that a fetch may never reach.
 * Policy as data: anything listed here, or anything that is not an address at all, is refused.
 */
export const deniedIPv4Ranges: ReadonlyArray<readonly [string, number, string]> = [
  ["0.0.0.0", 8, "this network"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "carrier-grade NAT"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local (cloud metadata)"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "IETF protocol assignments"],
  ["192.0.2.0", 24, "documentation"],
  ["192.31.196.0", 24, "AS112"],
  ["192.52.193.0", 24, "AMT"],
  ["192.88.99.0", 24, "6to4 relay anycast"],
  ["192.168.0.0", 16, "private"],
  ["192.175.48.0", 24, "AS112"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved and broadcast"],
]

/**
 * IPv6 is allowed only inside global unicast 2000::/3, minus the special ranges listed here. This
 * refuses loopback, unspecified, IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96), NAT64
 * (64:ff9b::/96, 64:ff9b:1::/48), discard, unique-local fc00::/7, link-local fe80::/10, site-local
 * and multicast, since none of them is in 2000::/3; the ones below are inside it.
 */
export const deniedIPv6Ranges: ReadonlyArray<readonly [string, number, string]> = [
  ["2001::", 23, "IETF protocol assignments (Teredo, ORCHIDv2, ...)"],
  ["2001:db8::", 32, "documentation"],
  ["2002::", 16, "6to4 (embeds an IPv4 address)"],
  ["3fff::", 20, "documentation"],
]

const deniedV4 = new BlockList()
for (const [net, prefix] of deniedIPv4Ranges) deniedV4.addSubnet(net, prefix, "ipv4")
const deniedV6 = new BlockList()
for (const [net, prefix] of deniedIPv6Ranges) deniedV6.addSubnet(net, prefix, "ipv6")
const globalUnicastV6 = new BlockList()
globalUnicastV6.addSubnet("2000::", 3, "ipv6")

/** Strips the brackets a URL puts around an IPv6 host and an IPv6 zone id. */
const bare = (address: string): string => address.replace(/^\[(.*)\]$/, "$1")

/**
 * Whether an IP address (as connected, or as written in a URL host) is public: true only for a
 * syntactically valid address outside every special-purpose range. Fails closed: anything it
 * cannot read, including zone ids (`fe80::1%eth0`), is not public.
 */
export const isPublicAddress = (address: string): boolean => {
  const ip = bare(address)
  try {
    switch (isIP(ip)) {
      case 4:
        return !deniedV4.check(ip, "ipv4")
      case 6:
        return globalUnicastV6.check(ip, "ipv6") && !deniedV6.check(ip, "ipv6")
      default:
        return false
    }
  } catch {
    return false
  }
}

const loopback = new BlockList()
loopback.addSubnet("127.0.0.0", 8, "ipv4")
loopback.addAddress("::1", "ipv6")
loopback.addSubnet("::ffff:127.0.0.0", 104, "ipv6")

/**
 * Whether an address is loopback (127.0.0.0/8, ::1, or 127/8 mapped into IPv6): all that the
 * tests-only `allowPrivate` opens, never private, link-local (metadata) or other special ranges.
 */
export const isLoopbackAddress = (address: string): boolean => {
  const ip = bare(address)
  try {
    switch (isIP(ip)) {
      case 4:
        return loopback.check(ip, "ipv4")
      case 6:
        return loopback.check(ip, "ipv6")
      default:
        return false
    }
  } catch {
    return false
  }
}

/** Whether a URL host is an IP literal (after WHATWG parsing, which already turns `0x7f.1`, `2130706433`, `127.1` into dotted quads). */
export const isIpLiteral = (host: string): boolean => isIP(bare(host)) !== 0

/**
 * The one sentence for every host name that is not a public host: one that resolves to a
 * non-public address, one that does not resolve at all, and a single-label name. Telling them
 * apart would let anyone learn which internal names exist through this endpoint.
 */
export const notPublicHost = (host: string): string =>
  `The host ${host} is not a public host: only names that resolve, every address of them public, are fetched.`

/** Whether a host name has a single label (`intranet`, `db.`): never a public host, so not even looked up. */
export const isSingleLabel = (host: string): boolean => !host.replace(/\.$/, "").includes(".")

/**
 * The one sentence for a redirect to a host that is not public. It never names that host or
 * address: the caller did not give it, a server did, and echoing it would show the caller an
 * internal address that only the service was told.
 */
export const redirectedToNonPublicHost =
  "The server redirected to a host that is not a public host: only names that resolve, every address of them public, are fetched."

/**
 * The verdict on a URL before any connection: the reason it is refused, or null when it may be
 * tried. With `redirected` (a Location followed, not the caller's URL) a host or address refused
 * is not named.
 */
export const urlRefusal = (url: URL, options: { readonly allowPrivate: boolean; readonly isAllowedAddress: (ip: string) => boolean; readonly redirected?: boolean }): string | null => {
  if (url.protocol !== "https:" && !(options.allowPrivate && url.protocol === "http:")) {
    return `Only https URLs are fetched, not '${url.protocol.replace(/:$/, "")}'.`
  }
  if (url.username !== "" || url.password !== "") return "URLs with credentials are not fetched."
  if (url.hostname === "") return "The URL has no host."
  const literal = bare(url.hostname)
  if (isIpLiteral(url.hostname) && !options.isAllowedAddress(literal) && !(options.allowPrivate && isLoopbackAddress(literal))) {
    return options.redirected === true ? redirectedToNonPublicHost : `The address ${literal} is not a public address.`
  }
  if (!options.allowPrivate && !isIpLiteral(url.hostname) && isSingleLabel(url.hostname)) {
    return options.redirected === true ? redirectedToNonPublicHost : notPublicHost(url.hostname)
  }
  return null
}
