import Koa from "koa"
import { createServer, type Server } from "node:http"
import { type AddressInfo, connect, type Socket } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { eventually } from "../../../test/support/eventually.ts"
import { closeAfterUnreadBody, type LingerLimits } from "../src/index.ts"

const MiB = 1024 * 1024
let server: Server | undefined

afterEach(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve))
  server = undefined
})

/** A server that answers 413 without reading the body, or reads it first when `read` is set. */
const start = async (limits: LingerLimits, read = false) => {
  const app = new Koa()
  app.use(closeAfterUnreadBody(limits))
  app.use(async (ctx) => {
    if (read) for await (const _ of ctx.req) void _
    ctx.status = read ? 200 : 413
    ctx.body = read ? "read" : "too large"
  })
  server = createServer(app.callback())
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve))
  return (server.address() as AddressInfo).port
}

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
})
