import type { ParameterizedContext } from "koa"

/** Text answers from this many characters on are sent as bytes (64 Ki: a page of a long article, a diff, an article's JSON). */
export const LARGE_TEXT = 64 * 1024

/**
 * Makes a large text answer (JSON, a page) the bytes of its UTF-8 encoding, with the same
 * headers. Node writes a text answer's head and body as one string, made by joining the two, so
 * that the encoder sees one flat string: for a 1 MiB answer a second megabyte copied on the
 * event loop's heap, garbage at once, on top of the answer itself. Encoded here the body stays
 * outside the heap and the head is written beside it. Called by the outermost middleware once
 * the others are done (none of them then reads or sets the body as text), so that no request
 * pays for a middleware frame of its own.
 */
export const largeTextAsBytes = (ctx: ParameterizedContext, threshold: number = LARGE_TEXT): void => {
  const body: unknown = ctx.body
  // (Koa keeps the Content-Type set with the text: a body set after it only sets its length)
  if (typeof body === "string" && body.length >= threshold && !ctx.headerSent) ctx.body = Buffer.from(body, "utf8")
}
