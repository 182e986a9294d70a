/** The client's address for per-address limits: the socket's peer, or the proxy's entry when the app trusts one. */
import Koa from "koa"
import type { ParameterizedContext } from "koa"
import { describe, expect, it } from "vitest"
import { clientAddress } from "../src/index.ts"

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

  it("should write an IPv4 address mapped into IPv6 as IPv4, and keep other IPv6 addresses as they are", () => {
    expect(clientAddress(contextOf(false, "::ffff:203.0.113.7"))).toBe("203.0.113.7")
    expect(clientAddress(contextOf(true, "10.0.0.2", "::ffff:192.0.2.9"))).toBe("192.0.2.9")
    expect(clientAddress(contextOf(false, "2001:db8::1"))).toBe("2001:db8::1")
    expect(clientAddress(contextOf(false, "::ffff:abcd"))).toBe("::ffff:abcd")
    expect(clientAddress(contextOf(false, "::1"))).toBe("::1")
  })

  it("should answer unknown when the socket has no address (closed) and no proxy entry says one", () => {
    expect(clientAddress(contextOf(false, undefined))).toBe("unknown")
    expect(clientAddress(contextOf(false, ""))).toBe("unknown")
    expect(clientAddress(contextOf(true, undefined))).toBe("unknown")
  })
})
