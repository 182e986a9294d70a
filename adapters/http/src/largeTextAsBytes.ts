import type { Middleware } from "koa"

/** Text answers from this many characters on are sent as bytes (64 Ki: a page of a long article, a diff, an article's JSON). */
export const LARGE_TEXT = 64 * 1024

/**
 * Sends a large text answer (JSON, a page) as the bytes of its UTF-8 encoding, with the same
 * headers. Node writes a text answer's head and body as one string, made by joining the two, so
 * that the encoder sees one flat string: for a 1 MiB answer a second megabyte copied on the
 * event loop's heap, garbage at once, on top of the answer itself. Encoded here the body stays
 * outside the heap and the head is written beside it. Outermost, after every middleware that
 * reads or sets the body as text.
 */
export const largeTextAsBytes = (threshold: number = LARGE_TEXT): Middleware => async (ctx, next) => {
  await next()
  const body: unknown = ctx.body
  // (Koa keeps the Content-Type set with the text: a body set after it only sets its length)
  if (typeof body === "string" && body.length >= threshold && !ctx.headerSent) ctx.body = Buffer.from(body, "utf8")
}
