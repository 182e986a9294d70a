import { MediaStore, Unavailable } from "@content-site/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import Koa from "koa"
import { request as httpRequest, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { localMediaStore, mediaMiddleware } from "../src/index.ts"

let dir = ""
let runtime: ManagedRuntime.ManagedRuntime<MediaStore, never>
const servers: Array<Server> = []

const serve = async (rt: ManagedRuntime.ManagedRuntime<MediaStore, never>, setRequestId = true) => {
  const app = new Koa()
  if (setRequestId) {
    app.use(async (ctx, next) => {
      ctx.state.requestId = "req_test_123456"
      await next()
    })
  }
  app.use(mediaMiddleware(rt, { publicUrl: "https://cs.example/" }))
  app.use((ctx) => {
    ctx.status = 418
    ctx.body = "downstream"
  })
  const server = app.listen(0, "127.0.0.1")
  await new Promise((r) => server.once("listening", r))
  servers.push(server)
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** A raw request, so paths like `/media/../x` reach the server unnormalised. */
const raw = (base: string, method: string, path: string) =>
  new Promise<{ status: number; headers: Record<string, string | Array<string> | undefined>; body: Buffer }>((resolve, reject) => {
    const url = new URL(base)
    const req = httpRequest({ host: url.hostname, port: url.port, method, path }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
    })
    req.on("error", reject)
    req.end()
  })

let base = ""
let key = ""
const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3])

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "media-mw-"))
  runtime = ManagedRuntime.make(localMediaStore(dir))
  key = await runtime.runPromise(Effect.gen(function* () {
    return yield* (yield* MediaStore).put(bytes, "image/png", "png")
  }))
  base = await serve(runtime)
})

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))))
  await runtime.dispose()
  await rm(dir, { recursive: true, force: true })
})

describe("mediaMiddleware", () => {
  it("should serve a stored image with its type, nosniff, immutable caching and a closed CSP", async () => {
    const res = await fetch(`${base}/media/${key}`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("image/png")
    expect(res.headers.get("x-content-type-options")).toBe("nosniff")
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect(res.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'")
    expect(res.headers.get("content-length")).toBe(String(bytes.length))
    expect([...new Uint8Array(await res.arrayBuffer())]).toEqual([...bytes])
  })

  it("should send a strong ETag and Accept-Ranges: none, and answer 304 to an If-None-Match naming it", async () => {
    const first = await fetch(`${base}/media/${key}`)
    const etag = first.headers.get("etag")
    expect(etag).toMatch(/^"[\x21\x23-\x7e]+"$/)
    expect(first.headers.get("accept-ranges")).toBe("none")
    for (const header of [etag!, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const res = await fetch(`${base}/media/${key}`, { headers: { "If-None-Match": header } })
      expect(res.status, header).toBe(304)
      expect(res.headers.get("etag")).toBe(etag)
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
      expect((await res.arrayBuffer()).byteLength).toBe(0)
    }
    const other = await fetch(`${base}/media/${key}`, { headers: { "If-None-Match": '"other"' } })
    expect(other.status).toBe(200)
    expect([...new Uint8Array(await other.arrayBuffer())]).toEqual([...bytes])
  })

  it("should answer HEAD with the headers and no body", async () => {
    const res = await raw(base, "HEAD", `/media/${key}`)
    expect(res.status).toBe(200)
    expect(res.headers["content-type"]).toBe("image/png")
    expect(res.headers["content-length"]).toBe(String(bytes.length))
    expect(res.headers["x-content-type-options"]).toBe("nosniff")
    expect(res.body.length).toBe(0)
  })

  it("should answer an unknown key with a not_found problem carrying the request id", async () => {
    const res = await fetch(`${base}/media/2026/11/AAAAAAAAAAAAAAAAAAAAAA.png`)
    expect(res.status).toBe(404)
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/)
    expect(res.headers.get("cache-control")).toBe("no-store")
    const problem = (await res.json()) as Record<string, unknown>
    expect(problem["code"]).toBe("not_found")
    expect(problem["status"]).toBe(404)
    expect(problem["request_id"]).toBe("req_test_123456")
    expect(problem["type"]).toBe("https://cs.example/problems/not_found")
  })

  it("should make up a request id when none was set", async () => {
    const bare = await serve(runtime, false)
    const res = await fetch(`${bare}/media/nope.png`)
    expect(res.status).toBe(404)
    const problem = (await res.json()) as Record<string, unknown>
    expect(problem["code"]).toBe("not_found")
    expect(problem["request_id"]).toMatch(/^req_[0-9a-f]{32}$/)
  })

  it("should refuse path traversal and malformed keys with a 404 problem", async () => {
    for (const path of [
      "/media/../package.json",
      "/media/..%2f..%2fpackage.json",
      `/media/${key.replace(/\//g, "%2F")}`,
      "/media/%2e%2e/%2e%2e/etc/passwd",
      "/media//etc/passwd",
      "/media/",
      `/media/${key}.tmp`,
    ]) {
      const res = await raw(base, "GET", path)
      expect(res.status, path).toBe(404)
      expect(JSON.parse(res.body.toString())["code"], path).toBe("not_found")
    }
  })

  it("should leave other paths and methods to the next middleware", async () => {
    expect((await fetch(`${base}/mediafoo/${key}`)).status).toBe(418)
    expect((await fetch(`${base}/api/v1/sites`)).status).toBe(418)
    expect((await fetch(`${base}/media/2026/01/unknown.png`, { method: "POST" })).status).toBe(418)
  })

  it("should answer other methods on a stored image with 405 and Allow: GET, HEAD (OPTIONS: 204)", async () => {
    for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
      const res = await fetch(`${base}/media/${key}`, { method })
      expect(res.status, method).toBe(405)
      expect(res.headers.get("allow")).toBe("GET, HEAD")
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/)
      expect(await res.json()).toMatchObject({ status: 405, code: "method_not_allowed", request_id: "req_test_123456" })
    }
    const options = await fetch(`${base}/media/${key}`, { method: "OPTIONS" })
    expect(options.status).toBe(204)
    expect(options.headers.get("allow")).toBe("GET, HEAD")
  })

  it("should answer 503 unavailable when the store cannot be read", async () => {
    const failing = ManagedRuntime.make(
      Layer.succeed(MediaStore, {
        put: () => Effect.fail(new Unavailable({ detail: "disk gone" })),
        get: () => Effect.fail(new Unavailable({ detail: "disk gone" })),
        remove: () => Effect.fail(new Unavailable({ detail: "disk gone" })),
      }),
    )
    const url = await serve(failing)
    const res = await fetch(`${url}/media/${key}`)
    expect(res.status).toBe(503)
    expect(((await res.json()) as Record<string, unknown>)["code"]).toBe("unavailable")
    // another method too: whether the image exists is not known, so no 404 says it does not
    for (const method of ["DELETE", "OPTIONS"]) {
      const other = await fetch(`${url}/media/${key}`, { method })
      expect(other.status, method).toBe(503)
      expect(other.headers.get("retry-after"), method).toBe("5")
      expect(((await other.json()) as Record<string, unknown>)["code"], method).toBe("unavailable")
    }
    await failing.dispose()
  })

  it("should answer 500 internal without detail when the store dies", async () => {
    const broken = ManagedRuntime.make(
      Layer.succeed(MediaStore, {
        put: () => Effect.die(new Error("boom")),
        get: () => Effect.die(new Error("secret internals")),
        remove: () => Effect.die(new Error("boom")),
      }),
    )
    const url = await serve(broken)
    const res = await fetch(`${url}/media/${key}`)
    expect(res.status).toBe(500)
    const text = await res.text()
    expect(JSON.parse(text)["code"]).toBe("internal")
    expect(text).not.toContain("secret internals")
    await broken.dispose()
  })
})
