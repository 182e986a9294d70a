/** The client's address for per-address limits: the socket's peer, or the proxy's entry when the app trusts one. */
import Koa from "koa"
import type { ParameterizedContext } from "koa"
import { describe, expect, it } from "vitest"
import { clientAddress, clientKeyOf, peerAddress } from "../src/index.ts"

/** A Koa context over a request from `remoteAddress` carrying `X-Forwarded-For: forwarded` (when given). */
const contextOf = (proxy: boolean, remoteAddress: string | undefined, forwarded?: string): ParameterizedContext => {
  const app = new Koa({ proxy, maxIpsCount: 1 })
  const req = { headers: forwarded === undefined ? {} : { "x-forwarded-for": forwarded }, socket: { remoteAddress }, url: "/", method: "GET" }
  return app.createContext(req as never, { getHeader: () => undefined, setHeader: () => {} } as never)
}

describe("clientAddress", () => {
  it("should take the socket's peer address and ignore X-Forwarded-For when no proxy is trusted", () => {
    expect(clientAddress(contextOf(false, "203.0.113.7", "198.51.100.1"))).toBe("203.0.113.7")
  })

  it("should take the entry the trusted proxy added (the last of X-Forwarded-For) behind a proxy", () => {
    expect(clientAddress(contextOf(true, "10.0.0.2", "198.51.100.1, 192.0.2.9"))).toBe("192.0.2.9")
    expect(clientAddress(contextOf(true, "10.0.0.2"))).toBe("10.0.0.2")
  })

  it("should write an IPv4 address mapped into IPv6 as IPv4, and know an IPv6 client by the /56 its address lies in", () => {
    expect(clientAddress(contextOf(false, "::ffff:203.0.113.7"))).toBe("203.0.113.7")
    expect(clientAddress(contextOf(true, "10.0.0.2", "::ffff:192.0.2.9"))).toBe("192.0.2.9")
    expect(peerAddress(contextOf(false, "2001:db8::1"))).toBe("2001:db8::1")
    // every address of one home's /56 is one client (it may take any of them at will) ...
    const home = ["2001:db8:abcd:1200::1", "2001:db8:abcd:12ff:ffff:ffff:ffff:ffff", "2001:0db8:abcd:1234:5678:9abc:def0:1234"]
    expect(home.map((a) => clientAddress(contextOf(false, a)))).toEqual(home.map(() => "2001:db8:abcd:1200::/56"))
    expect(clientAddress(contextOf(true, "10.0.0.2", "2001:db8:abcd:1234::9"))).toBe("2001:db8:abcd:1200::/56")
    // ... and the next /56 is another
    expect(clientAddress(contextOf(false, "2001:db8:abcd:1300::1"))).toBe("2001:db8:abcd:1300::/56")
    expect(clientAddress(contextOf(false, "::ffff:abcd"))).toBe("::/56")
    expect(clientAddress(contextOf(false, "::1"))).toBe("::/56")
    // an address no parser reads is its own key
    expect(clientKeyOf("not:an:address:at:all")).toBe("not:an:address:at:all")
  })

  it("should answer the same keys past the most it remembers (5 000 networks, asked twice)", () => {
    // network i: 2001:db8:<i's high byte>:<i's low byte>00::/56; an address at either end of it
    const address = (i: number, last: string) => `2001:db8:${(i >> 8).toString(16)}:${(i & 0xff).toString(16)}${last}`
    const first = Array.from({ length: 5000 }, (_, i) => clientKeyOf(address(i, "00::1")))
    expect(new Set(first).size).toBe(5000)
    expect(first.every((key) => key.endsWith("/56"))).toBe(true)
    for (let i = 0; i < 5000; i++) expect(clientKeyOf(address(i, "ff:ffff:ffff:ffff:ffff"))).toBe(first[i])
  })

  it("should answer unknown when the socket has no address (closed) and no proxy entry says one", () => {
    expect(clientAddress(contextOf(false, undefined))).toBe("unknown")
    expect(clientAddress(contextOf(false, ""))).toBe("unknown")
    expect(clientAddress(contextOf(true, undefined))).toBe("unknown")
  })
})
