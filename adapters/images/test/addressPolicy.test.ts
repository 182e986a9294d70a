import { describe, expect, it } from "vitest"
import { isPublicAddress, urlRefusal } from "../src/index.ts"

const refused = [
  // IPv4 special-purpose ranges
  "0.0.0.0", "0.1.2.3", "10.0.0.1", "10.255.255.255", "100.64.0.1", "100.127.255.254", "127.0.0.1", "127.255.255.254",
  "169.254.0.1", "169.254.169.254", "172.16.0.1", "172.31.255.255", "192.0.0.8", "192.0.2.1", "192.88.99.1",
  "192.168.0.1", "192.168.255.255", "198.18.0.1", "198.19.255.255", "198.51.100.7", "203.0.113.9",
  "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
  // IPv6
  "::", "::1", "fe80::1", "febf::1", "fc00::1", "fd12:3456:789a::1", "ff02::1", "ff0e::1", "fec0::1",
  "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:169.254.169.254", "::ffff:10.0.0.1", "::ffff:8.8.8.8",
  "::127.0.0.1", "::7f00:1", "::8.8.8.8", "64:ff9b::7f00:1", "64:ff9b::8.8.8.8", "64:ff9b:1::1", "100::1",
  "2001:db8::1", "2001::1", "2002:7f00:1::1", "2002:a9fe:a9fe::1", "3fff::1",
  "[::1]", "[fe80::1]",
  // not addresses at all, or forms only a URL parser understands: fail closed
  "localhost", "", "2130706433", "0177.0.0.1", "0x7f.1", "127.1", "fe80::1%eth0", "1.2.3.4.5", "::ffff:999.0.0.1",
]
const allowed = ["8.8.8.8", "1.1.1.1", "93.184.216.34", "100.63.255.255", "100.128.0.1", "172.15.255.255", "172.32.0.1",
  "192.169.0.1", "169.253.255.255", "223.255.255.255", "2606:4700:4700::1111", "2a00:1450:4001:80b::200e", "[2606:4700::1]"]

describe("isPublicAddress", () => {
  for (const ip of refused) {
    it(`should refuse ${JSON.stringify(ip)}`, () => {
      expect(isPublicAddress(ip)).toBe(false)
    })
  }
  for (const ip of allowed) {
    it(`should allow the public address ${ip}`, () => {
      expect(isPublicAddress(ip)).toBe(true)
    })
  }
})

describe("urlRefusal", () => {
  const strict = { allowPrivate: false, isAllowedAddress: isPublicAddress }
  const check = (url: string, options = strict) => urlRefusal(new URL(url), options)

  for (const url of [
    "https://127.0.0.1/",
    "https://2130706433/",
    "https://0177.0.0.1/",
    "https://0x7f.1/",
    "https://0x7f000001/",
    "https://127.1/",
    "https://127.0.0.1./",
    "https://0/",
    "https://169.254.169.254/latest/meta-data/",
    "https://0xa9fea9fe/",
    "https://[::1]/",
    "https://[::ffff:127.0.0.1]/",
    "https://[::ffff:a9fe:a9fe]/",
    "https://[::127.0.0.1]/",
    "https://[64:ff9b::127.0.0.1]/",
    "https://[fe80::1]/",
    "https://[fd00::1]/",
    "https://10.1/",
    "https://192.168.1.1:8443/i.png",
  ]) {
    it(`should refuse ${url} before connecting`, () => {
      expect(check(url)).toMatch(/not a public address/)
    })
  }

  it("should refuse every scheme but https", () => {
    for (const url of ["http://example.com/i.png", "ftp://example.com/i.png", "file:///etc/passwd", "data:image/png;base64,AAAA", "gopher://x/"]) {
      expect(check(url)).toMatch(/Only https/)
    }
  })

  it("should refuse credentials in the URL", () => {
    expect(check("https://user:pass@example.com/i.png")).toMatch(/credentials/)
  })

  it("should leave host names to the connect-time check", () => {
    expect(check("https://example.com/i.png")).toBeNull()
    expect(check("https://8.8.8.8/i.png")).toBeNull()
  })

  it("should allow http and loopback literals only when allowPrivate is set, and never private or metadata ones", () => {
    const loose = { allowPrivate: true, isAllowedAddress: isPublicAddress }
    expect(check("http://127.0.0.1:3000/i.png", loose)).toBeNull()
    expect(check("https://[::1]/i.png", loose)).toBeNull()
    for (const url of ["http://169.254.169.254/", "https://10.0.0.1/", "https://192.168.0.1/", "https://[fd00::1]/", "https://0.0.0.0/"]) {
      expect(check(url, loose), url).toMatch(/not a public address/)
    }
    expect(check("ftp://127.0.0.1/i.png", loose)).toMatch(/Only https/)
  })
})
