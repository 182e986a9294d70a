import { Alt, decodeInput, FeaturedImageUrlBody, type ImageSource, InvalidRequest, MAX_IMAGE_BYTES, PayloadTooLarge, UnsupportedMediaType } from "@content-site/core"
import multer, { type MulterFile } from "@koa/multer"
import type { ParameterizedContext } from "koa"
import { decodeNow, mediaTypeOf, readJson } from "./requestParts.ts"
import { untilClientLeaves } from "@content-site/http"

/** Room for multipart boundaries, part headers and the `alt` field around a 10 MiB image. */
const MULTIPART_OVERHEAD = 64 * 1024

const upload = multer({
  storage: multer.memoryStorage(),
  limits: { fileSize: MAX_IMAGE_BYTES, files: 1, fields: 2, fieldSize: 4096, fieldNameSize: 64, parts: 3, headerPairs: 20 },
}).single("image")

const isMulterError = (err: unknown): boolean =>
  typeof err === "object" && err !== null && (err as { name?: unknown }).name === "MulterError"

/**
 * Reads the new featured image: multipart (`image` file, optional `alt`; the file is capped at
 * 10 MiB while streaming) or JSON `{ url, alt? }`. Any other content type is a 415.
 */
export const readFeaturedImage = async (
  ctx: ParameterizedContext,
  jsonLimit: number,
): Promise<{ readonly source: ImageSource; readonly alt: string | undefined }> => {
  if (mediaTypeOf(ctx) === "multipart/form-data") {
    const declared = ctx.request.length
    if (declared !== undefined && declared > MAX_IMAGE_BYTES + MULTIPART_OVERHEAD) {
      throw new PayloadTooLarge({ detail: "The image is larger than 10 MiB." })
    }
    try {
      await untilClientLeaves(ctx, upload(ctx, async () => {}))
    } catch (err) {
      if (isMulterError(err)) throw err
      throw new InvalidRequest({
        detail: "The multipart body is malformed: send one file in field 'image' and optionally a field 'alt'.",
        errors: [{ path: "(body)", message: err instanceof Error ? err.message : "Malformed multipart body" }],
      })
    }
    const file = (ctx.request as { file?: MulterFile }).file
    const fields = ((ctx.request as { body?: unknown }).body ?? {}) as Record<string, unknown>
    const unknown = Object.keys(fields).filter((k) => k !== "alt")
    if (unknown.includes("image")) {
      throw new InvalidRequest({
        detail: "The form's field 'image' is text; send the image as a file in field 'image' (for example curl -F 'image=@photo.jpg'), or JSON { \"url\": \"https://...\" } to fetch one.",
        errors: [{ path: "image", message: "Expected a file, got a text field" }],
      })
    }
    if (unknown.length > 0) {
      throw new InvalidRequest({
        detail: `Form fields ${unknown.map((k) => `'${k}'`).join(", ")} cannot be set here; send 'image' and optionally 'alt'.`,
        errors: unknown.map((k) => ({ path: k, message: `Unknown key '${k}': it cannot be set here` })),
      })
    }
    if (file === undefined) {
      throw new InvalidRequest({ detail: "The form has no file in field 'image'.", errors: [{ path: "image", message: "Missing file" }] })
    }
    const alt = fields.alt === undefined ? undefined : decodeNow(decodeInput(Alt, fields.alt, "Form field", "alt"))
    return { source: { kind: "bytes", bytes: new Uint8Array(file.buffer.buffer, file.buffer.byteOffset, file.buffer.byteLength) }, alt }
  }
  if (mediaTypeOf(ctx) === "application/json") {
    const body = decodeNow(decodeInput(FeaturedImageUrlBody, await readJson(ctx, jsonLimit), "Request body"))
    return { source: { kind: "url", url: body.url }, alt: body.alt }
  }
  throw new UnsupportedMediaType({
    detail: "Send the image as multipart/form-data (field 'image', optional 'alt') or JSON { \"url\": \"https://...\", \"alt\": \"...\" }.",
  })
}
