/**
 * The pixel work on one accepted image: a full decode and re-encode by sharp (libvips), so that
 * what is stored is what sharp wrote, without metadata or trailing bytes. It runs in a child
 * process (`imageProcess.ts`), never in the server's own: a decoder that works in one call
 * (AVIF's) cannot be interrupted, only its process can be killed.
 */
import sharp from "sharp"
import type { Sharp, SharpOptions } from "sharp"

/** Largest accepted width or height, in pixels. */
export const maxImageSide = 8000

export type ImageType = "image/jpeg" | "image/png" | "image/webp" | "image/gif" | "image/avif"

/** Untrusted input: abort on any libvips warning (truncated or corrupt data), never lift the pixel cap. */
export const inputOptions = {
  failOn: "warning",
  limitInputPixels: maxImageSide * maxImageSide,
  // Only the first frame of an animation is kept: bounded work whatever the frame count.
  pages: 1,
} as const satisfies SharpOptions

/** Encoder settings chosen for bounded time on a request (AVIF effort 1 and WebP effort 2 are several times faster than the defaults). */
const encode = (pipeline: Sharp, type: ImageType): Sharp => {
  switch (type) {
    case "image/jpeg":
      return pipeline.jpeg({ quality: 85 })
    case "image/png":
      return pipeline.png()
    case "image/webp":
      return pipeline.webp({ quality: 85, effort: 2 })
    case "image/gif":
      return pipeline.gif()
    case "image/avif":
      return pipeline.avif({ quality: 60, effort: 1 })
  }
}

/** What the pixel work answers: the new bytes, or why the image is refused. */
export type Reencoded =
  | { readonly ok: true; readonly data: Uint8Array; readonly width: number; readonly height: number }
  | { readonly ok: false; readonly reason: "pixels" | "time" | "corrupt" }

/** Decodes and re-encodes `input`; libvips stops itself after `seconds` where the decoder lets it. */
export const reencode = async (input: Uint8Array, type: ImageType, seconds: number): Promise<Reencoded> => {
  try {
    // libvips counts whole seconds; the parent kills the process at the exact budget.
    const out = await encode(sharp(input, { ...inputOptions, autoOrient: true }), type)
      .timeout({ seconds: Math.max(1, Math.ceil(seconds)) })
      .toBuffer({ resolveWithObject: true })
    return { ok: true, data: new Uint8Array(out.data.buffer, out.data.byteOffset, out.data.byteLength), width: out.info.width, height: out.info.height }
  } catch (e) {
    const message = e instanceof Error ? e.message : ""
    // libvips' own stop reads "timeout: 0% complete ... killed for image", after any warnings.
    return { ok: false, reason: /pixel limit/i.test(message) ? "pixels" : /(^|\n)timeout: |killed for image/i.test(message) ? "time" : "corrupt" }
  }
}
