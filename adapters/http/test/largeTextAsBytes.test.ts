import Koa from "koa"
import { request } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "vitest"
import { LARGE_TEXT, largeTextAsBytes } from "../src/largeTextAsBytes.ts"

/** Serves `text` as JSON behind the middleware; answers what Node was handed to write, and what the client read. */
const serve = async (text: string, method = "GET") => {
  const handed: Array<string> = []
  const app = new Koa()
  app.use(async (ctx, next) => {
    await next()
    largeTextAsBytes(ctx)
  })
  app.use(async (ctx, next) => {
    // what Koa hands Node once every middleware is done: a string or bytes
    const end = ctx.res.end.bind(ctx.res) as (...args: Array<unknown>) => unknown
    ctx.res.end = ((chunk?: unknown, ...rest: Array<unknown>) => {
      handed.push(chunk === undefined ? "nothing" : Buffer.isBuffer(chunk) ? "bytes" : typeof chunk)
      return end(chunk, ...rest)
    }) as typeof ctx.res.end
    await next()
  })
  app.use((ctx) => {
    ctx.type = "application/json"
    ctx.body = text
  })
  const server = app.listen(0, "127.0.0.1")
  await new Promise<void>((resolve) => server.once("listening", resolve))
  try {
    const answer = await new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port: (server.address() as AddressInfo).port, method, path: "/" }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      })
      req.on("error", reject)
      req.end()
    })
    return { handed, ...answer }
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

describe("large text answers sent as bytes", () => {
  // JSON with characters of two, three and four bytes in UTF-8: its length in bytes is not its length in characters
  const large = JSON.stringify({ body: "é€😀".repeat(LARGE_TEXT / 4) + "x".repeat(LARGE_TEXT) })

  it("should hand Node the UTF-8 bytes of a large answer, the same bytes, type and length reaching the client", async () => {
    const answer = await serve(large)
    expect(answer.handed).toEqual(["bytes"])
    expect(answer.status).toBe(200)
    expect(answer.headers["content-type"]).toBe("application/json; charset=utf-8")
    expect(answer.headers["content-length"]).toBe(String(Buffer.byteLength(large)))
    expect(answer.body.toString("utf8")).toBe(large)
  })

  it("should leave a small answer as text", async () => {
    const small = JSON.stringify({ body: "é".repeat(100) })
    const answer = await serve(small)
    expect(answer.handed).toEqual(["string"])
    expect(answer.headers["content-length"]).toBe(String(Buffer.byteLength(small)))
    expect(answer.body.toString("utf8")).toBe(small)
  })

  it("should answer a HEAD with the large answer's length and no body", async () => {
    const answer = await serve(large, "HEAD")
    expect(answer.headers["content-length"]).toBe(String(Buffer.byteLength(large)))
    expect(answer.body.length).toBe(0)
  })
})
