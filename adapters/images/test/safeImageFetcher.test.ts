import { ImageFetcher } from "@content-site/core"
import { Effect } from "effect"
import { pbkdf2 } from "node:crypto"
import { createSocket as createUdpSocket } from "node:dgram"
import { readFile } from "node:fs/promises"
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import { type AddressInfo, createServer as createTcpServer, type Socket } from "node:net"
import sharp from "sharp"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { FETCHES_PER_ACCOUNT, safeImageFetcher, type SafeImageFetcherOptions } from "../src/index.ts"
import { selfSignedCertificate } from "./selfSignedCertificate.ts"

const { cert, key } = selfSignedCertificate(["127.0.0.1", "127.0.0.2"], ["localhost"])
let png: Buffer
let hits: Array<string> = []
const open = new Set<ServerResponse>()

const handler = (origin: () => string) => (req: IncomingMessage, res: ServerResponse) => {
  const url = new URL(req.url ?? "/", origin())
  hits.push(`${req.socket.localAddress} ${url.pathname}`)
  open.add(res)
  res.on("close", () => open.delete(res))
  switch (url.pathname) {
    case "/image.png":
      res.writeHead(200, { "content-type": "image/png", "content-length": png.length }).end(png)
      return
    case "/redirect":
      res.writeHead(302, { location: url.searchParams.get("to") ?? "/" }).end()
      return
    case "/chain": {
      const n = Number(url.searchParams.get("n"))
      res.writeHead(n > 0 ? 301 : 200, n > 0 ? { location: `/chain?n=${n - 1}` } : {}).end(n > 0 ? undefined : png)
      return
    }
    case "/missing":
      res.writeHead(404, { "content-type": "text/plain" }).end("no")
      return
    case "/stall":
      return // never answers
    case "/stall-body":
      res.writeHead(200, { "content-type": "image/png" })
      res.write(png.subarray(0, 10))
      return // never ends
    case "/endless": {
      res.writeHead(200, { "content-type": "image/png" })
      const chunk = Buffer.alloc(64 * 1024, 0x41)
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) {}
        if (!res.destroyed) res.once("drain", pump)
      }
      pump()
      return
    }
    case "/declared-huge":
      res.writeHead(200, { "content-type": "image/png", "content-length": String(50 * 1024 * 1024) })
      res.write(png)
      return
    default:
      res.writeHead(404).end()
  }
}

const listen = (server: Server, host: string) =>
  new Promise<number>((resolve) => server.listen(0, host, () => resolve((server.address() as AddressInfo).port)))

let https1: Server
let https2: Server
let http1: Server
let httpsUrl = ""
let https2Url = ""
let httpUrl = ""

beforeAll(async () => {
  png = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#123456" } }).png().toBuffer()
  https1 = createHttpsServer({ cert, key }, handler(() => httpsUrl))
  https2 = createHttpsServer({ cert, key }, handler(() => https2Url))
  http1 = createHttpServer(handler(() => httpUrl))
  httpsUrl = `https://127.0.0.1:${await listen(https1, "127.0.0.1")}`
  https2Url = `https://127.0.0.2:${await listen(https2, "127.0.0.2")}`
  httpUrl = `http://127.0.0.1:${await listen(http1, "127.0.0.1")}`
})

afterAll(async () => {
  for (const res of open) res.destroy()
  await Promise.all([https1, https2, http1].map((s) => new Promise((r) => (s.closeAllConnections(), s.close(r)))))
})

beforeEach(() => {
  hits = []
})

const run = (url: string, options: SafeImageFetcherOptions) =>
  Effect.gen(function* () {
    return yield* (yield* ImageFetcher).fetch(url, "account-1")
  }).pipe(
    // one fetch a layer never meets the account's cap (the fair-shares cases below test it)
    Effect.catchTag("RateLimited", (e) => Effect.die(e)),
    Effect.provide(safeImageFetcher(options)),
  )

const fetchOk = (url: string, options: SafeImageFetcherOptions) => Effect.runPromise(run(url, options))
const fetchError = (url: string, options: SafeImageFetcherOptions) => Effect.runPromise(Effect.flip(run(url, options)))

const testing = { allowPrivate: true, ca: cert } satisfies SafeImageFetcherOptions
const strict = { allowPrivate: false, ca: cert } satisfies SafeImageFetcherOptions
/** Strict, except that 127.0.0.1 stands in for a public host: redirects onward are still checked. */
const onlyFirstHostPublic = { ...strict, isAllowedAddress: (ip: string) => ip === "127.0.0.1" } satisfies SafeImageFetcherOptions

describe("safeImageFetcher", () => {
  it("should fetch an image over https from a trusted test server when allowPrivate is set", async () => {
    const bytes = await fetchOk(`${httpsUrl}/image.png`, testing)
    expect(Buffer.from(bytes).equals(png)).toBe(true)
  })

  it("should fetch over http only when allowPrivate is set", async () => {
    const bytes = await fetchOk(`${httpUrl}/image.png`, testing)
    expect(Buffer.from(bytes).equals(png)).toBe(true)
    const error = await fetchError(`${httpUrl}/image.png`, strict)
    expect(error._tag).toBe("UnsafeUrl")
    expect(hits).toEqual([`127.0.0.1 /image.png`])
  })

  it("should let allowPrivate reach loopback only, never private, link-local (metadata) or other special addresses", async () => {
    for (const url of ["https://169.254.169.254/latest/meta-data/", "http://169.254.169.254/", "https://10.0.0.1/", "https://192.168.1.1/", "https://100.64.0.1/", "https://[fd00::1]/", "https://[fe80::1]/", "https://[::ffff:169.254.169.254]/"]) {
      const error = await fetchError(url, { ...testing, timeoutMs: 500 })
      expect(error._tag, url).toBe("UnsafeUrl")
    }
    const to = encodeURIComponent("https://169.254.169.254/latest/meta-data/")
    const redirected = await fetchError(`${httpsUrl}/redirect?to=${to}`, { ...testing, timeoutMs: 500 })
    expect(redirected._tag).toBe("UnsafeUrl")
    // loopback in its spellings stays reachable for the tests that need it
    expect(Buffer.from(await fetchOk(`${https2Url}/image.png`, testing)).equals(png)).toBe(true)
    expect(Buffer.from(await fetchOk(`${httpsUrl.replace("127.0.0.1", "localhost")}/image.png`, testing)).equals(png)).toBe(true)
  })

  it("should refuse a host name resolving to 127.0.0.1 without connecting", async () => {
    const port = new URL(httpsUrl).port
    const error = await fetchError(`https://localhost:${port}/image.png`, strict)
    expect(error._tag).toBe("UnsafeUrl")
    expect(hits).toEqual([])
  })

  it("should refuse loopback in every numeric form without connecting", async () => {
    const port = new URL(httpsUrl).port
    for (const host of ["127.0.0.1", "2130706433", "0177.0.0.1", "0x7f.1", "0x7f000001", "127.1", "[::1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]"]) {
      const error = await fetchError(`https://${host}:${port}/image.png`, strict)
      expect(error._tag, host).toBe("UnsafeUrl")
    }
    expect(hits).toEqual([])
  })

  it("should accept an address the policy allows (control for the redirect cases)", async () => {
    const bytes = await fetchOk(`${httpsUrl}/image.png`, onlyFirstHostPublic)
    expect(Buffer.from(bytes).equals(png)).toBe(true)
  })

  it("should check the address actually connected, not only the one checked before", async () => {
    // The first verdict (on the URL) says yes, the one on the connected socket says no: as if a
    // name had been rebound between the check and the connection.
    let verdicts = 0
    const error = await fetchError(`${httpsUrl}/image.png`, { ...strict, isAllowedAddress: () => verdicts++ === 0 })
    expect(error._tag).toBe("UnsafeUrl")
    expect(verdicts).toBe(2)
    expect(hits).toEqual([])
  })

  it("should re-check every redirect and refuse one to a private address", async () => {
    const to = encodeURIComponent(`${https2Url}/image.png`)
    const error = await fetchError(`${httpsUrl}/redirect?to=${to}`, onlyFirstHostPublic)
    expect(error._tag).toBe("UnsafeUrl")
    expect(hits).toEqual(["127.0.0.1 /redirect"])
  })

  it("should refuse a redirect to a host name resolving to loopback", async () => {
    const to = encodeURIComponent(`https://localhost:${new URL(httpsUrl).port}/image.png`)
    const error = await fetchError(`${https2Url}/redirect?to=${to}`, { ...strict, isAllowedAddress: (ip) => ip === "127.0.0.2" })
    expect(error._tag).toBe("UnsafeUrl")
    expect(hits).toEqual(["127.0.0.2 /redirect"])
  })

  it("should refuse a redirect to http or to the metadata address", async () => {
    for (const to of [`${httpUrl}/image.png`, "https://169.254.169.254/latest/meta-data/", "https://[::ffff:169.254.169.254]/"]) {
      const error = await fetchError(`${httpsUrl}/redirect?to=${encodeURIComponent(to)}`, onlyFirstHostPublic)
      expect(error._tag, to).toBe("UnsafeUrl")
    }
  })

  it("should follow at most three redirects", async () => {
    const bytes = await fetchOk(`${httpsUrl}/chain?n=3`, testing)
    expect(Buffer.from(bytes).equals(png)).toBe(true)
    const error = await fetchError(`${httpsUrl}/chain?n=4`, testing)
    expect(error._tag).toBe("ImageFetchFailed")
    expect(hits.length).toBe(4 + 4)
  })

  it("should honour a smaller redirect limit", async () => {
    const error = await fetchError(`${httpsUrl}/chain?n=2`, { ...testing, maxRedirects: 1 })
    expect(error._tag).toBe("ImageFetchFailed")
  })

  it("should report a non-2xx answer as a fetch failure", async () => {
    const error = await fetchError(`${httpsUrl}/missing`, testing)
    expect(error._tag).toBe("ImageFetchFailed")
  })

  it("should answer a name that does not resolve, a single-label name and an internal name alike", async () => {
    const port = new URL(httpsUrl).port
    const sentence = (host: string, error: { _tag: string; detail: string }) => ({ tag: error._tag, detail: error.detail.replace(host, "HOST") })
    const internal = sentence("localhost", await fetchError(`https://localhost:${port}/image.png`, strict))
    const unknown = sentence("no-such-host.invalid", await fetchError("https://no-such-host.invalid/image.png", { ...strict, timeoutMs: 3000 }))
    const singleLabel = sentence("intranet", await fetchError("https://intranet/image.png", strict))
    const dotted = sentence("db.", await fetchError("https://db./image.png", strict))
    expect(internal).toEqual({ tag: "UnsafeUrl", detail: expect.stringMatching(/not a public host/) })
    expect(unknown).toEqual(internal)
    expect(singleLabel).toEqual(internal)
    expect(dotted).toEqual(internal)
    expect(hits).toEqual([])
  })

  it("should say a host is refused without echoing the addresses it resolves to", async () => {
    const port = new URL(httpsUrl).port
    const direct = await fetchError(`https://localhost:${port}/image.png`, strict)
    const to = encodeURIComponent(`https://localhost:${port}/image.png`)
    const redirected = await fetchError(`${https2Url}/redirect?to=${to}`, { ...strict, isAllowedAddress: (ip) => ip === "127.0.0.2" })
    for (const error of [direct, redirected]) {
      expect(error._tag).toBe("UnsafeUrl")
      expect(error.detail).toMatch(/not a public host/)
      expect(error.detail).not.toMatch(/127\.0\.0\.|::1|\d+\.\d+\.\d+\.\d+/)
    }
  })

  it("should not echo the host or address a redirect points to, which the caller never gave", async () => {
    const port = new URL(httpsUrl).port
    for (const [to, secret] of [["https://10.0.0.5/i.png", "10.0.0.5"], ["https://[fd00::5]/i.png", "fd00"], ["https://0xa9fea9fe/latest/meta-data/", "169.254"], [`https://localhost:${port}/image.png`, "localhost"]] as const) {
      const error = await fetchError(`${httpsUrl}/redirect?to=${encodeURIComponent(to)}`, { ...onlyFirstHostPublic, timeoutMs: 2000 })
      expect(error._tag, to).toBe("UnsafeUrl")
      expect(error.detail, to).toMatch(/redirected to a host that is not a public host/)
      expect(error.detail, to).not.toContain(secret)
    }
  })

  it("should word every failure to reach a public host alike", async () => {
    const closed = createHttpServer()
    const port = await listen(closed, "127.0.0.1")
    await new Promise((resolve) => closed.close(resolve))
    const refused = await fetchError(`http://127.0.0.1:${port}/image.png`, testing)
    const untrusted = await fetchError(`${httpsUrl}/image.png`, { allowPrivate: true })
    expect(refused._tag).toBe("ImageFetchFailed")
    expect(untrusted._tag).toBe("ImageFetchFailed")
    expect(refused.detail).toBe(untrusted.detail)
  })

  it("should refuse an untrusted certificate", async () => {
    const error = await fetchError(`${httpsUrl}/image.png`, { allowPrivate: true })
    expect(error._tag).toBe("ImageFetchFailed")
  })

  it("should give up on a server that never answers", async () => {
    const error = await fetchError(`${httpsUrl}/stall`, { ...testing, timeoutMs: 300 })
    expect(error._tag).toBe("ImageFetchFailed")
    expect(error.detail).toMatch(/300 ms/)
  })

  it("should give up within the deadline on a server that accepts the connection but never finishes the TLS handshake", async () => {
    const held: Array<Socket> = []
    const silent = createTcpServer((socket) => void held.push(socket))
    const port = await new Promise<number>((resolve) => silent.listen(0, "127.0.0.1", () => resolve((silent.address() as AddressInfo).port)))
    try {
      const started = Date.now()
      const error = await fetchError(`https://127.0.0.1:${port}/image.png`, { ...testing, timeoutMs: 300 })
      expect(error._tag).toBe("ImageFetchFailed")
      expect(error.detail).toMatch(/300 ms/)
      expect(Date.now() - started).toBeLessThan(2000)
    } finally {
      for (const socket of held) socket.destroy()
      await new Promise((resolve) => silent.close(resolve))
    }
  }, 15_000)

  it("should give up on a body that stalls", async () => {
    const error = await fetchError(`${httpsUrl}/stall-body`, { ...testing, timeoutMs: 300 })
    expect(error._tag).toBe("ImageFetchFailed")
  })

  it("should stop an endless body once it passes the size limit", async () => {
    const error = await fetchError(`${httpsUrl}/endless`, { ...testing, maxBytes: 256 * 1024 })
    expect(error._tag).toBe("PayloadTooLarge")
  })

  it("should stop an endless body at 10 MiB by default", async () => {
    const error = await fetchError(`${httpUrl}/endless`, testing)
    expect(error._tag).toBe("PayloadTooLarge")
  })

  it("should refuse a declared length over the limit without reading the body", async () => {
    const error = await fetchError(`${httpsUrl}/declared-huge`, testing)
    expect(error._tag).toBe("PayloadTooLarge")
  })

  it("should refuse what is not a URL, other schemes and credentials", async () => {
    for (const url of ["not a url", "/relative.png", "file:///etc/passwd", "ftp://example.com/a.png", "https://u:p@example.com/a.png"]) {
      const error = await fetchError(url, strict)
      expect(error._tag, url).toBe("UnsafeUrl")
    }
  })
})

/** A DNS server on 127.0.0.1 for the tests: answers from a table (A and AAAA), or never, and counts the queries it got. */
const fakeDns = async (table: ReadonlyMap<string, { readonly a?: ReadonlyArray<string>; readonly aaaa?: ReadonlyArray<string> }> | "silent") => {
  const socket = createUdpSocket("udp4")
  const queries: Array<string> = []
  socket.on("message", (msg, from) => {
    // the question: labels from byte 12, then type and class
    const labels: Array<string> = []
    let at = 12
    while (msg[at]! !== 0) {
      labels.push(msg.subarray(at + 1, at + 1 + msg[at]!).toString("latin1"))
      at += msg[at]! + 1
    }
    const type = msg.readUInt16BE(at + 1)
    const name = labels.join(".").toLowerCase()
    queries.push(`${name} ${type === 1 ? "A" : type === 28 ? "AAAA" : type}`)
    if (table === "silent") return
    const entry = table.get(name)
    const addresses = (type === 1 ? entry?.a : type === 28 ? entry?.aaaa : undefined) ?? []
    const question = msg.subarray(12, at + 5)
    const header = Buffer.alloc(12)
    header.writeUInt16BE(msg.readUInt16BE(0), 0)
    header.writeUInt16BE(entry === undefined ? 0x8183 : 0x8180, 2) // response, recursion; NXDOMAIN for unknown names
    header.writeUInt16BE(1, 4)
    header.writeUInt16BE(addresses.length, 6)
    const answers = addresses.map((ip) => {
      const rdata = type === 1 ? Buffer.from(ip.split(".").map(Number)) : Buffer.from(new Uint16Array(expandV6(ip)).map((x) => ((x & 0xff) << 8) | (x >> 8)).buffer)
      const rr = Buffer.alloc(12)
      rr.writeUInt16BE(0xc00c, 0)
      rr.writeUInt16BE(type, 2)
      rr.writeUInt16BE(1, 4)
      rr.writeUInt32BE(60, 6)
      rr.writeUInt16BE(rdata.length, 10)
      return Buffer.concat([rr, rdata])
    })
    socket.send(Buffer.concat([header, question, ...answers]), from.port, from.address)
  })
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve))
  return { server: `127.0.0.1:${socket.address().port}`, queries, close: () => new Promise<void>((resolve) => socket.close(() => resolve())) }
}

const expandV6 = (ip: string): Array<number> => {
  const [head = "", tail = ""] = ip.split("::")
  const h = head === "" ? [] : head.split(":").map((x) => parseInt(x, 16))
  const t = tail === "" ? [] : tail.split(":").map((x) => parseInt(x, 16))
  return ip.includes("::") ? [...h, ...Array<number>(8 - h.length - t.length).fill(0), ...t] : h
}

const until = async (condition: () => boolean, what: string, ms = 3000) => {
  const giveUp = Date.now() + ms
  while (!condition()) {
    if (Date.now() > giveUp) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe("safeImageFetcher name resolution", () => {
  it("should resolve names off libuv's thread pool: slow lookups leave file reads and hashing free, and end at the deadline", async () => {
    const dns = await fakeDns("silent")
    try {
      const options = { ...strict, dnsServers: [dns.server], timeoutMs: 2000 } satisfies SafeImageFetcherOptions
      const fetcher = safeImageFetcher(options)
      let settled = 0
      const hosts = Array.from({ length: 6 }, (_, i) => `slow-${i}.example.com`)
      const fetches = hosts.map((host) =>
        Effect.runPromise(Effect.flip(Effect.gen(function* () { return yield* (yield* ImageFetcher).fetch(`https://${host}/image.png`, `account-${host}`) }).pipe(Effect.catchTag("RateLimited", (e) => Effect.die(e)), Effect.provide(fetcher)))).finally(() => void settled++),
      )
      // Every lookup is under way (each name asked for, A and AAAA) ...
      await until(() => hosts.every((h) => dns.queries.includes(`${h} A`) && dns.queries.includes(`${h} AAAA`)), "the lookups to reach the DNS server")
      // ... and more pool work than the pool has threads completes while all of them are still pending.
      await Promise.all([
        readFile(new URL(import.meta.url)),
        ...Array.from({ length: 8 }, () => new Promise<void>((resolve, reject) => pbkdf2("pw", "salt", 1000, 32, "sha256", (e) => (e ? reject(e) : resolve())))),
      ])
      expect(settled).toBe(0)
      const errors = await Promise.all(fetches)
      for (const error of errors) {
        expect(error._tag).toBe("ImageFetchFailed")
        expect(error.detail).toMatch(/2000 ms/)
      }
    } finally {
      await dns.close()
    }
  }, 15_000)

  it("should check every answer, A and AAAA, of a resolved name", async () => {
    const dns = await fakeDns(new Map([
      ["img.example.com", { a: ["127.0.0.1"], aaaa: [] }],
      ["mixed.example.com", { a: ["127.0.0.1"], aaaa: ["fe80::1"] }],
      ["six.example.com", { aaaa: ["fd00::5"] }],
    ]))
    try {
      const port = new URL(httpUrl).port
      const options = { ...testing, dnsServers: [dns.server], timeoutMs: 3000 } satisfies SafeImageFetcherOptions
      expect(Buffer.from(await fetchOk(`http://img.example.com:${port}/image.png`, options)).equals(png)).toBe(true)
      for (const host of ["mixed.example.com", "six.example.com", "unknown.example.com"]) {
        const error = await fetchError(`http://${host}:${port}/image.png`, options)
        expect(error._tag, host).toBe("UnsafeUrl")
        expect(error.detail, host).toMatch(/not a public host/)
      }
      expect(dns.queries).toEqual(expect.arrayContaining(["mixed.example.com A", "mixed.example.com AAAA"]))
      expect(hits).toEqual(["127.0.0.1 /image.png"])
    } finally {
      await dns.close()
    }
  })
})

describe("safeImageFetcher fair shares", () => {
  it("should refuse an account's fetch past FETCHES_PER_ACCOUNT in flight with RateLimited, and leave other accounts alone", async () => {
    const layer = safeImageFetcher({ ...testing, timeoutMs: 1500 })
    const fetchAs = (owner: string, path: string) =>
      Effect.runPromise(Effect.result(Effect.gen(function* () { return yield* (yield* ImageFetcher).fetch(`${httpsUrl}${path}`, owner) }).pipe(Effect.provide(layer))))
    const held = Array.from({ length: FETCHES_PER_ACCOUNT }, () => fetchAs("hostile", "/stall"))
    await until(() => hits.filter((h) => h.endsWith("/stall")).length === FETCHES_PER_ACCOUNT, "the stalled fetches to arrive")
    const refused = await fetchAs("hostile", "/image.png")
    expect(refused._tag).toBe("Failure")
    const error = (refused as { failure: { _tag: string; retryAfterSeconds: number } }).failure
    expect(error._tag).toBe("RateLimited")
    expect(error.retryAfterSeconds).toBeGreaterThan(0)
    const other = await fetchAs("other", "/image.png")
    expect(other._tag).toBe("Success")
    expect(hits.filter((h) => h.endsWith("/image.png"))).toHaveLength(1)
    await Promise.all(held)
    // its fetches ended, the account may fetch again
    expect((await fetchAs("hostile", "/image.png"))._tag).toBe("Success")
  }, 10_000)
})
