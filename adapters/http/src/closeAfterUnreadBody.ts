import type { Middleware, ParameterizedContext } from "koa"
import type { IncomingMessage } from "node:http"
import type { Socket } from "node:net"
import { clientAddress } from "./clientAddress.ts"
import { notesOf } from "./notes.ts"

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
 * What one account (an address when signed out) may have read and thrown away after refusals
 * for load (429, 503) answered before their bodies were read: `bytes` at once, refilled at
 * `perSecond`. Past it a refused connection is read no more: it is closed when the client closes
 * it, or `graceMs` after its answer was written.
 */
export interface RefusalDrain {
  readonly bytes: number
  readonly perSecond: number
  readonly graceMs: number
}

/** The defaults: 4 MiB at once, 1 MiB a second, 1 s of grace. */
export const DEFAULT_REFUSAL_DRAIN: RefusalDrain = { bytes: 4 * 1024 * 1024, perSecond: 1024 * 1024, graceMs: 1_000 }

/** Charges `bytes` read to a budget; false (and nothing charged) once it is spent. */
type Take = (bytes: number) => boolean

/**
 * Token buckets of bytes, one a key: `take(key)(n)` charges `n` while the key has any left. Buckets that
 * have filled up again are forgotten (a full bucket is a new one) when the map passes 1 024 keys,
 * so it holds at most the keys that drained in the last `bytes / perSecond` seconds, and 1 024.
 */
export const drainBudgets = (drain: RefusalDrain, now: () => number = Date.now): ((key: string) => Take) => {
  const buckets = new Map<string, { tokens: number; at: number }>()
  const refill = (bucket: { tokens: number; at: number }, t: number) => {
    bucket.tokens = Math.min(drain.bytes, bucket.tokens + ((t - bucket.at) * drain.perSecond) / 1000)
    bucket.at = t
  }
  return (key) => (bytes) => {
    const t = now()
    let bucket = buckets.get(key)
    if (bucket === undefined) {
      if (buckets.size >= 1024) {
        for (const [other, b] of buckets) {
          refill(b, t)
          if (b.tokens >= drain.bytes) buckets.delete(other)
        }
      }
      buckets.set(key, (bucket = { tokens: drain.bytes, at: t }))
    } else refill(bucket, t)
    // What was read is charged whole, even past the budget (it was read already): the account
    // owes it, and reads nothing more until it is paid back.
    if (bucket.tokens <= 0) return false
    bucket.tokens -= bytes
    return true
  }
}

/**
 * Closes, after its answer, a connection whose request body has not all arrived: a 413 sent
 * while the client is still uploading, or any answer given without reading the body. The
 * response says `Connection: close`; once it is written the server half-closes and goes on
 * reading and discarding what the client still sends (within `limits`), and only then closes.
 * Closing at once would leave the client's bytes unread, and the kernel would answer them with a
 * reset that makes the client's send fail (EPIPE, ECONNRESET) before it reads the answer
 * (RFC 9112 section 9.6, "tear-down").
 *
 * A refusal for load (429, 503) is there to shed work, so its discarding is also bounded by its
 * account's `drain` (an address when signed out): past it nothing more is read, and the
 * connection, half-closed, is closed when the client closes it or after `drain.graceMs`. A client
 * that reads while it sends (`fetch`, Node's `http`, curl) has its answer by then; one that reads
 * only after writing its whole body reads it if its body fits in what is left of the budget.
 */
export const closeAfterUnreadBody = (limits: LingerLimits = DEFAULT_LINGER, drain: RefusalDrain = DEFAULT_REFUSAL_DRAIN): Middleware => {
  const budgetOf = drainBudgets(drain)
  return async (ctx, next) => {
    // A body not yet all here is read when a handler asks for it, not read ahead into the
    // request's buffer meanwhile (Node reads ahead up to the buffer's high-water mark, 64 KiB): a
    // request refused before its body is read has cost the one read that brought its head (at
    // most 64 KiB), not a second as well. Once read, it is read ahead as usual.
    const { req } = ctx
    if (!req.complete && (req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0)) readOnlyWhenAsked(req)
    await next()
    // Requests answered outside Koa (ctx.respond false) wrote their own response.
    if (ctx.req.complete || ctx.respond === false || ctx.res.headersSent) return
    ctx.set("Connection", "close")
    const refusedForLoad = ctx.status === 429 || ctx.status === 503
    lingerBeforeClosing(ctx.req, limits, refusedForLoad ? { take: budgetOf(drainKey(ctx)), graceMs: drain.graceMs } : undefined)
  }
}

/**
 * Sets the request's high-water mark to 0 until it is first read (its `resume`), then back. Node
 * gives no public way to change it on a request it made, so this sets its readable state's field;
 * where there is none, nothing changes (the request is read ahead as before).
 */
const readOnlyWhenAsked = (req: IncomingMessage): void => {
  const state = (req as unknown as { _readableState?: { highWaterMark: number } })._readableState
  if (state === undefined) return
  const mark = state.highWaterMark
  state.highWaterMark = 0
  req.once("resume", () => (state.highWaterMark = mark))
}

const drainKey = (ctx: ParameterizedContext): string => {
  const account = notesOf(ctx).accountId
  return account === undefined ? `address ${clientAddress(ctx)}` : `account ${account}`
}

/**
 * Reads and discards what the client still sends, from now (before the answer is written: once
 * the request is being read, Node's own discarding of an unread body, which reads all of it, never
 * starts), within `limits`; with a `budget`, each chunk read is charged to it and, once it is
 * spent, the socket is read no more. Node ends a `Connection: close` response's socket with
 * `destroySoon()` once the response is written; for this one socket, that becomes: end our side,
 * then destroy once the lingering is over.
 */
const lingerBeforeClosing = (req: IncomingMessage, limits: LingerLimits, budget?: { readonly take: Take; readonly graceMs: number }): void => {
  const socket = req.socket as Socket & { destroySoon?: () => void }
  let read = 0
  let over = false
  let answered = false
  let idle: ReturnType<typeof setTimeout> | undefined
  let grace: ReturnType<typeof setTimeout> | undefined
  // The answer must be out before the socket goes (what destroySoon itself waits for).
  const close = () => {
    if (socket.writableFinished || socket.destroyed) socket.destroy()
    else socket.once("finish", () => socket.destroy())
  }
  const finish = () => {
    if (over) return
    over = true
    clearTimeout(total)
    clearTimeout(idle)
    clearTimeout(grace)
    req.off("data", onData)
    req.off("end", finish)
    req.off("error", finish)
    socket.off("close", finish)
    if (answered) close()
  }
  const total = setTimeout(() => {
    finish()
    socket.destroy()
  }, limits.maxMs)
  const awaitMore = () => {
    clearTimeout(idle)
    idle = setTimeout(finish, limits.idleMs)
  }
  // The budget is spent: nothing more is read; the client has the grace to read its answer and
  // close, then the socket goes.
  const stopReading = () => {
    req.off("data", onData)
    clearTimeout(idle)
    // (a request asks its socket for more whenever its buffer runs low: it never will again)
    req._read = () => undefined
    req.pause()
    socket.pause()
    grace = setTimeout(finish, budget!.graceMs)
  }
  const onData = (chunk: Buffer) => {
    read += chunk.length
    if (read > limits.maxBytes) finish()
    else if (budget !== undefined && !budget.take(chunk.length)) stopReading()
    else awaitMore()
  }
  socket.destroySoon = () => {
    answered = true
    if (socket.writable) socket.end()
    if (over) close()
  }
  if (req.complete || req.readableEnded || socket.destroyed) return finish()
  req.once("end", finish)
  req.once("error", finish)
  socket.once("close", finish)
  if (budget !== undefined && !budget.take(0)) return stopReading()
  // Reading from here marks the request as being read: Node does not discard it on its own.
  req.on("data", onData)
  req.resume()
  awaitMore()
}
