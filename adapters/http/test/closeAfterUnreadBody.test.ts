import Koa from "koa"
import { createServer, request, type Server } from "node:http"
import { type AddressInfo, connect, type Socket } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { eventually } from "../../../test/support/eventually.ts"
import { closeAfterUnreadBody, drainBudgets, type LingerLimits, type RefusalDrain } from "../src/index.ts"

const MiB = 1024 * 1024
let server: Server | undefined

afterEach(async () => {
  if (server === undefined) return
  server.closeAllConnections()
  await new Promise((resolve) => server!.close(resolve))
  server = undefined
})

/** Bytes the server read from every connection that has closed (headers included). */
let bytesRead = 0

/**
 * A server that answers 413 without reading the body, or reads it first when `read` is set; a
 * POST to `/refuse` is answered 429 without reading the body, as a refusal for load.
 */
const start = async (limits: LingerLimits, read = false, drain?: RefusalDrain) => {
  const app = new Koa()
  app.use(closeAfterUnreadBody(limits, drain))
  app.use(async (ctx) => {
    if (ctx.path === "/refuse") {
      ctx.status = 429
      ctx.set("Retry-After", "1")
      ctx.body = "rate limited"
      return
    }
    if (read) for await (const _ of ctx.req) void _
    ctx.status = read ? 200 : 413
    ctx.body = read ? "read" : "too large"
  })
  bytesRead = 0
  server = createServer(app.callback())
  server.on("connection", (socket: Socket) => socket.once("close", () => (bytesRead += socket.bytesRead)))
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve))
  return (server.address() as AddressInfo).port
}

const openConnections = () => new Promise<number>((resolve, reject) => server!.getConnections((err, n) => (err ? reject(err) : resolve(n))))

interface Client {
  readonly socket: Socket
  /** Everything received so far. */
  readonly text: () => string
  /** Resolves when the server has closed the connection. */
  readonly closed: Promise<void>
  /** The first write error, if any. */
  readonly writeError: () => string | null
  /** Writes and resolves true once the bytes are handed to the kernel (false if the write failed). */
  readonly write: (data: Buffer | string) => Promise<boolean>
}

/**
 * A raw client: `readAtOnce` false reads nothing until resumed. A `stubborn` one keeps its sending
 * side open when the server ends its own (half-close), so only the server's bounds end it.
 */
const client = async (port: number, readAtOnce: boolean, stubborn = false): Promise<Client> => {
  const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: stubborn })
  await new Promise((resolve) => socket.once("connect", resolve))
  const received: Array<Buffer> = []
  let error: string | null = null
  socket.on("error", (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message))
  socket.on("data", (d: Buffer) => received.push(d))
  if (!readAtOnce) socket.pause()
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()))
  return {
    socket,
    text: () => Buffer.concat(received).toString("latin1"),
    closed,
    writeError: () => error,
    write: (data) =>
      new Promise((resolve) => (socket.destroyed ? resolve(false) : socket.write(data, (err) => resolve(err === undefined || err === null)))),
  }
}

const head = (framing: string) => `POST /upload HTTP/1.1\r\nHost: test\r\nContent-Type: application/octet-stream\r\n${framing}\r\n\r\n`

describe("drainBudgets", () => {
  it("should charge a key until its budget is spent, then refuse, and refill it at its rate", () => {
    let now = 0
    const take = drainBudgets({ bytes: 100, perSecond: 10, graceMs: 0 }, () => now)
    const a = take("a")
    expect([a(60), a(60), a(1)]).toEqual([true, true, false]) // the second is charged whole: 20 owed
    expect(take("b")(100)).toBe(true) // another key has its own
    now += 2_000 // 20 more: the debt is paid, nothing left yet
    expect(a(0)).toBe(false)
    now += 500
    expect([a(5), a(1)]).toEqual([true, false])
    now += 1_000_000
    expect([a(100), a(1)]).toEqual([true, false]) // never more than `bytes` at once
  })

  it("should forget the keys whose budgets have filled up again, past 1 024 keys", () => {
    let now = 0
    const take = drainBudgets({ bytes: 10, perSecond: 10, graceMs: 0 }, () => now)
    for (let i = 0; i < 1024; i++) take(`k${i}`)(10)
    expect(take("k0")(1)).toBe(false)
    now += 1_000 // every bucket full again: forgotten when a new key comes
    take("new")(1)
    expect(take("k0")(10)).toBe(true)
  })
})

describe("closeAfterUnreadBody", () => {
  it("should go on reading after an early answer until the client has sent everything, so that it reads the answer", async () => {
    const port = await start({ maxBytes: 64 * MiB, maxMs: 60_000, idleMs: 10_000 })
    const c = await client(port, false)
    const body = Buffer.alloc(24 * MiB, 7)
    let ok = await c.write(head(`Content-Length: ${body.length}`))
    for (let at = 0; ok && at < body.length; at += 256 * 1024) ok = await c.write(body.subarray(at, at + 256 * 1024))
    expect(ok).toBe(true)
    c.socket.resume()
    await c.closed
    expect(c.writeError()).toBeNull()
    expect(c.text()).toMatch(/^HTTP\/1\.1 413 /)
    expect(c.text()).toMatch(/\r\nConnection: close\r\n/i)
    expect(c.text()).toMatch(/too large$/)
  })

  it("should close once it has read maxBytes more, however long the client goes on sending", async () => {
    const port = await start({ maxBytes: 1 * MiB, maxMs: 60_000, idleMs: 10_000 })
    const c = await client(port, true, true)
    await c.write(head("Transfer-Encoding: chunked"))
    const chunk = Buffer.concat([Buffer.from(`${(64 * 1024).toString(16)}\r\n`), Buffer.alloc(64 * 1024, 1), Buffer.from("\r\n")])
    let sending = true
    void c.closed.then(() => (sending = false))
    // A client that never stops: only the server's bound ends this.
    while (sending && (await c.write(chunk))) {}
    await c.closed
    expect(c.text()).toMatch(/^HTTP\/1\.1 413 /)
  })

  it("should close when the client sends nothing more for idleMs", async () => {
    const port = await start({ maxBytes: 64 * MiB, maxMs: 60_000, idleMs: 300 })
    const c = await client(port, true, true)
    await c.write(head("Content-Length: 1000000"))
    await c.write(Buffer.alloc(1000, 1))
    // The request is never finished; the server still lets the connection go, long before maxMs.
    const open = () => new Promise<number>((resolve, reject) => server!.getConnections((err, n) => (err ? reject(err) : resolve(n))))
    expect(await eventually(open, (n) => n === 0, 10_000)).toBe(0)
    expect(c.text()).toMatch(/^HTTP\/1\.1 413 /)
  })

  it("should leave a connection alone when the body was read before the answer", async () => {
    const port = await start({ maxBytes: 1 * MiB, maxMs: 60_000, idleMs: 10_000 }, true)
    const res = await fetch(`http://127.0.0.1:${port}/upload`, { method: "POST", body: "x".repeat(1000) })
    expect(res.status).toBe(200)
    expect(res.headers.get("connection")).toBe("keep-alive")
    expect(await res.text()).toBe("read")
  })

  it("should read no more than the address's drain of twenty 1 MiB bodies refused 429, and fetch and Node's http each read every 429", async () => {
    const drain: RefusalDrain = { bytes: 2 * MiB, perSecond: 1, graceMs: 1_000 }
    const port = await start({ maxBytes: 64 * MiB, maxMs: 60_000, idleMs: 10_000 }, false, drain)
    const body = Buffer.alloc(MiB, 7)
    const viaFetch = async () => {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/refuse`, { method: "POST", body })
        return `${res.status} ${await res.text()}`
      } catch (e) {
        return `error ${String((e as { cause?: { code?: string } }).cause?.code ?? e)}`
      }
    }
    const viaHttp = () =>
      new Promise<string>((resolve) => {
        const req = request(`http://127.0.0.1:${port}/refuse`, { method: "POST", headers: { "content-length": body.length } }, (res) => {
          let text = ""
          res.setEncoding("utf8").on("data", (d: string) => (text += d))
          res.on("end", () => resolve(`${res.statusCode} ${text}`))
        })
        req.on("error", (e: NodeJS.ErrnoException) => resolve(`error ${e.code}`))
        req.end(body)
      })
    // Twenty at once, twice over: 40 MiB sent, the drain 2 MiB.
    const answers = [
      ...(await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? viaFetch() : viaHttp())))),
      ...(await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? viaHttp() : viaFetch())))),
    ]
    expect(answers).toEqual(Array(40).fill("429 rate limited"))
    expect(await eventually(openConnections, (n) => n === 0, 10_000)).toBe(0)
    // The drain and one chunk charged past it, and the read that brought each request's head (at
    // most 64 KiB a connection). Before the drain, the server read all 40 MiB.
    expect(bytesRead).toBeLessThanOrEqual(drain.bytes + 64 * 1024 + 40 * 64 * 1024)
  })

  it("should still drain a refused body that fits its drain, for a client that reads only after writing it all", async () => {
    const port = await start({ maxBytes: 64 * MiB, maxMs: 60_000, idleMs: 10_000 }, false, { bytes: 4 * MiB, perSecond: 1, graceMs: 60_000 })
    const c = await client(port, false)
    const body = Buffer.alloc(3 * MiB, 7)
    let ok = await c.write(`POST /refuse HTTP/1.1\r\nHost: test\r\nContent-Length: ${body.length}\r\n\r\n`)
    for (let at = 0; ok && at < body.length; at += 256 * 1024) ok = await c.write(body.subarray(at, at + 256 * 1024))
    expect(ok).toBe(true)
    c.socket.resume()
    await c.closed
    expect(c.writeError()).toBeNull()
    expect(c.text()).toMatch(/^HTTP\/1\.1 429 [^]*\r\nConnection: close\r\n[^]*rate limited$/)
  })

  it("should let a refused connection go after its grace once the drain is spent, however long the client sends", async () => {
    const port = await start({ maxBytes: 64 * MiB, maxMs: 60_000, idleMs: 60_000 }, false, { bytes: 1, perSecond: 1, graceMs: 300 })
    const c = await client(port, true, true)
    await c.write(`POST /refuse HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n`)
    const chunk = Buffer.concat([Buffer.from(`${(64 * 1024).toString(16)}\r\n`), Buffer.alloc(64 * 1024, 1), Buffer.from("\r\n")])
    let sending = true
    void c.closed.then(() => (sending = false))
    void (async () => {
      while (sending && (await c.write(chunk))) {}
    })()
    // Only the grace ends this (maxMs and idleMs are a minute): the client's answer came first.
    expect(await eventually(openConnections, (n) => n === 0, 10_000)).toBe(0)
    await c.closed
    expect(c.text()).toMatch(/^HTTP\/1\.1 429 /)
    expect(bytesRead).toBeLessThan(16 * MiB)
  })
})
