import { describe, expect, it } from "vitest"
import { loopbackRedirectAllowed, withoutLoopbackPort } from "../src/loopbackRedirects.ts"

describe("loopback redirect URIs (RFC 8252 §7.3)", () => {
  it("should take away only the port of a plain-http loopback URI, keeping the rest as written", () => {
    expect(withoutLoopbackPort("http://127.0.0.1:5555/callback")).toBe("http://127.0.0.1/callback")
    expect(withoutLoopbackPort("http://127.0.0.1/callback")).toBe("http://127.0.0.1/callback")
    expect(withoutLoopbackPort("http://[::1]:8080/cb?x=1")).toBe("http://[::1]/cb?x=1")
    expect(withoutLoopbackPort("http://[::1]/cb")).toBe("http://[::1]/cb")
    expect(withoutLoopbackPort("http://localhost:3")).toBe("http://localhost")
    // the path is compared as written, not as a URL parser would resolve it
    expect(withoutLoopbackPort("http://127.0.0.1:5/a/../cb")).toBe("http://127.0.0.1/a/../cb")
  })

  it("should give no leniency to https, to other hosts, or to a URI naming a user", () => {
    for (const uri of ["https://127.0.0.1:3/cb", "http://agent.test:3/cb", "http://10.0.0.1:3/cb", "http://127.0.0.1.agent.test:3/cb", "http://a@127.0.0.1:3/cb", "http://a:b@localhost:3/cb", "not a uri"]) {
      expect(withoutLoopbackPort(uri), uri).toBeUndefined()
    }
  })

  it("should allow another port on the same loopback host and path, and nothing else", () => {
    const registered = ["http://127.0.0.1/callback", "http://localhost:33418/", "https://agent.test/cb"]
    for (const asked of ["http://127.0.0.1:49152/callback", "http://127.0.0.1/callback", "http://localhost:50000/", "http://localhost/"]) {
      expect(loopbackRedirectAllowed(asked, registered), asked).toBe(true)
    }
    for (const asked of [
      "http://localhost:49152/callback", // another loopback name than the one registered
      "http://[::1]:49152/callback",
      "http://127.0.0.1:49152/callback/", // another path
      "http://127.0.0.1:49152/callbacks",
      "http://127.0.0.1:49152/callback?next=1", // a query the registered URI has not
      "https://agent.test:8443/cb", // not loopback: exact only
      "http://agent.test/cb",
    ]) {
      expect(loopbackRedirectAllowed(asked, registered), asked).toBe(false)
    }
  })
})
