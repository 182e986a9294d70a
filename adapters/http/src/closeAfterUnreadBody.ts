import type { Middleware } from "koa"
import type { IncomingMessage } from "node:http"
import type { Socket } from "node:net"

/** How long, and how much, the server goes on reading a request it has already answered. */
export interface LingerLimits {
  /** At most this many more bytes are read (and thrown away). */
  readonly maxBytes: number
  /** At most this long in all, in milliseconds. */
  readonly maxMs: number
  /** Sooner, when the client sends nothing for this long. */
  readonly idleMs: number
}

/** The defaults: 32 MiB more, 10 s in all, 2 s of silence. */
export const DEFAULT_LINGER: LingerLimits = { maxBytes: 32 * 1024 * 1024, maxMs: 10_000, idleMs: 2_000 }

/**
 * Closes, after its answer, a connection whose request body has not all arrived: a 413 sent
 * while the client is still uploading, or any answer given without reading the body. The
 * response says `Connection: close`; once it is written the server half-closes and goes on
 * reading and discarding what the client still sends (within `limits`), and only then closes.
 * Closing at once would leave the client's bytes unread, and the kernel would answer them with a
 * reset that makes the client's send fail (EPIPE, ECONNRESET) before it reads the answer
 * (RFC 9112 section 9.6, "tear-down").
 */
export const closeAfterUnreadBody =
  (limits: LingerLimits = DEFAULT_LINGER): Middleware =>
  async (ctx, next) => {
    await next()
    // Requests answered outside Koa (ctx.respond false) wrote their own response.
    if (ctx.req.complete || ctx.respond === false || ctx.res.headersSent) return
    ctx.set("Connection", "close")
    lingerBeforeClosing(ctx.req, limits)
  }

/**
 * Node ends a `Connection: close` response's socket with `destroySoon()` once the response is
 * written; for this one socket, that becomes: end our side, read the rest, then destroy.
 */
const lingerBeforeClosing = (req: IncomingMessage, limits: LingerLimits): void => {
  const socket = req.socket as Socket & { destroySoon?: () => void }
  socket.destroySoon = () => {
    if (socket.writable) socket.end()
    let read = 0
    let idle: ReturnType<typeof setTimeout> | undefined
    const finish = () => {
      clearTimeout(total)
      clearTimeout(idle)
      req.off("data", onData)
      req.off("end", finish)
      req.off("error", finish)
      socket.off("close", finish)
      // The answer must be out before the socket goes (what destroySoon itself waits for).
      if (socket.writableFinished || socket.destroyed) socket.destroy()
      else socket.once("finish", () => socket.destroy())
    }
    const total = setTimeout(() => {
      finish()
      socket.destroy()
    }, limits.maxMs)
    const awaitMore = () => {
      clearTimeout(idle)
      idle = setTimeout(finish, limits.idleMs)
    }
    const onData = (chunk: Buffer) => {
      read += chunk.length
      if (read > limits.maxBytes) finish()
      else awaitMore()
    }
    if (req.complete || req.readableEnded || socket.destroyed) return finish()
    req.on("data", onData)
    req.once("end", finish)
    req.once("error", finish)
    socket.once("close", finish)
    req.resume()
    awaitMore()
  }
}
