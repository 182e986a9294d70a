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

  it("should accept only URIs that reach the registered loopback host, path, query and fragment, over 120 000 crafted ones", () => {
    // schemes, user parts, host spellings, ports and path tricks a redirect URI might try
    const schemes = ["http://", "HTTP://", "http:", "http:/", "http:\\\\", "http:/\\", "https://", " http://", "\thttp://"]
    const users = ["", "@", "a@", ":@", "a:b@", "%40"]
    const hosts = ["localhost", "LOCALHOST", "127.0.0.1", "127.1", "0x7f.1", "[::1]", "[0::1]", "[::ffff:127.0.0.1]", "localhost.", "loc%61lhost", "evil.com", "127.0.0.1.nip.io", "localho\tst", "[::1%25eth0]"]
    const ports = ["", ":", ":80", ":5000", ":0", ":65535", ":99999", ":5000:", ":5a"]
    const paths = ["", "/", "/cb", "/cb/", "/cb?x=1", "/cb#f", "?x", "#f", "\\cb", "/%63b", "/./cb", "/a/../cb", "@evil.com/cb", "\\@evil.com/cb", "/cb\n", "//evil.com/cb", ";x/cb", "%2fcb"]
    const registered = ["http://localhost/cb", "http://127.0.0.1/cb", "http://[::1]/cb", "http://localhost:3000/cb", "http://localhost", "http://127.0.0.1:8080/", "http://localhost/cb?x=1"]
    const wrong: Array<string> = []
    let accepted = 0
    for (const r of registered) {
      const at = new URL(r)
      for (const s of schemes) for (const u of users) for (const h of hosts) for (const p of ports) for (const q of paths) {
        const uri = s + u + h + p + q
        if (!loopbackRedirectAllowed(uri, [r])) continue
        accepted++
        const asked = URL.parse(uri)
        if (asked === null || asked.protocol !== "http:" || asked.hostname !== at.hostname || asked.pathname !== at.pathname || asked.search !== at.search || asked.hash !== at.hash || asked.username !== "" || asked.password !== "") {
          wrong.push(`${JSON.stringify(uri)} for ${r}`)
        }
      }
    }
    expect(wrong).toEqual([])
    // (and the leniency is there to be tested: some of them are accepted)
    expect(accepted).toBeGreaterThan(0)
  })
})
