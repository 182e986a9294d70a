import type { ParameterizedContext } from "koa"

/**
 * `reading` (a multipart upload's parse), or a failure (`aborted`, ECONNABORTED) as soon as the
 * client leaves before sending the whole body: multer then waits for the file it was reading to
 * end, which it never does, and the request (with the part of the file read so far in memory)
 * would stay open for the process's life. The error funnel notes it 499.
 */
export const untilClientLeaves = async <A>(ctx: ParameterizedContext, reading: Promise<A>): Promise<A> => {
  const req = ctx.req
  let onClose: (() => void) | undefined
  const left = new Promise<never>((_, reject) => {
    onClose = () => {
      if (!req.complete) reject(Object.assign(new Error("aborted"), { code: "ECONNABORTED" }))
    }
    if (req.destroyed) onClose()
    else req.once("close", onClose)
  })
  try {
    return await Promise.race([reading, left])
  } finally {
    req.off("close", onClose!)
  }
}
