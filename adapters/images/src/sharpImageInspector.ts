import { ImageInspector, type InspectedImage, PayloadTooLarge, UnsupportedImage } from "@content-site/core"
import { Effect, Layer, Semaphore } from "effect"
import { fileTypeFromBuffer } from "file-type"
import sharp from "sharp"
import type { Sharp, SharpOptions } from "sharp"

/** Largest accepted image, in bytes (10 MiB). */
export const maxImageBytes = 10 * 1024 * 1024

/** Largest accepted width or height, in pixels. */
export const maxImageSide = 8000

/** Images decoded at once per process: a full-size decode can take hundreds of MB and seconds. */
export const concurrentDecodes = 2

/**
 * Seconds one decode and re-encode may take before it is stopped and the image refused (413):
 * a noisy 8000×8000 JPEG takes a few seconds on one core. libvips checks it as it works; a
 * decoder that works in one call (AVIF) is stopped only when that call returns.
 */
export const imageWorkSeconds = 20

type Accepted = InspectedImage["contentType"]

/** What each accepted type must look like to sharp, and how it is written back. */
const formats = {
  "image/jpeg": { sharpFormat: "jpeg", compression: undefined, extension: "jpg" },
  "image/png": { sharpFormat: "png", compression: undefined, extension: "png" },
  "image/webp": { sharpFormat: "webp", compression: undefined, extension: "webp" },
  "image/gif": { sharpFormat: "gif", compression: undefined, extension: "gif" },
  "image/avif": { sharpFormat: "heif", compression: "av1", extension: "avif" },
} as const satisfies Record<Accepted, { sharpFormat: string; compression: string | undefined; extension: string }>

const isAccepted = (mime: string): mime is Accepted => Object.hasOwn(formats, mime)

const unsupported = (detail: string) => new UnsupportedImage({ detail })

const tooLarge = (detail: string) => new PayloadTooLarge({ detail })

/** Untrusted input: abort on any libvips warning (truncated or corrupt data), never lift the pixel cap. */
const inputOptions = {
  failOn: "warning",
  limitInputPixels: maxImageSide * maxImageSide,
  // Only the first frame of an animation is kept: bounded work whatever the frame count.
  pages: 1,
} as const satisfies SharpOptions

/** Encoder settings chosen for bounded time on a request (AVIF effort 1 and WebP effort 2 are several times faster than the defaults). */
const encode = (pipeline: Sharp, type: Accepted): Sharp => {
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

type Gate = <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E>

const inspect = (input: Uint8Array, gate: Gate, seconds: number): Effect.Effect<InspectedImage, UnsupportedImage | PayloadTooLarge> =>
  Effect.gen(function* () {
    if (input.byteLength > maxImageBytes) {
      return yield* tooLarge(`The image is ${input.byteLength} bytes; at most ${maxImageBytes} bytes (10 MiB) are accepted.`)
    }
    if (input.byteLength === 0) return yield* unsupported("The image is empty.")

    // The bytes decide, never a name or a declared type.
    const sniffed = yield* Effect.promise(() => fileTypeFromBuffer(input).catch(() => undefined))
    if (!sniffed || !isAccepted(sniffed.mime)) {
      return yield* unsupported(
        `The bytes are ${sniffed ? `'${sniffed.mime}'` : "not a recognised image"}; only JPEG, PNG, WebP, GIF and AVIF are accepted.`,
      )
    }
    const type = sniffed.mime
    const expected = formats[type]

    // Header only: no pixel is decoded here, so a bomb is refused before it costs anything.
    const header = yield* Effect.tryPromise({
      try: () => sharp(input, { ...inputOptions, limitInputPixels: false }).metadata(),
      catch: () => unsupported("The image header cannot be read: the file is corrupt or truncated."),
    })
    if (header.format !== expected.sharpFormat || (expected.compression && header.compression !== expected.compression)) {
      return yield* unsupported("The image's content does not match its signature.")
    }
    const width = header.width
    const height = header.pageHeight ?? header.height
    if (!width || !height) return yield* unsupported("The image has no dimensions.")
    if (width > maxImageSide || height > maxImageSide) {
      return yield* tooLarge(`The image is ${width}×${height} px; at most ${maxImageSide} px a side are accepted.`)
    }

    // Full decode and re-encode: what is stored is what sharp wrote, without metadata or trailing bytes.
    const output = yield* gate(
      Effect.tryPromise({
        try: () => encode(sharp(input, { ...inputOptions, autoOrient: true }), type).timeout({ seconds }).toBuffer({ resolveWithObject: true }),
        catch: (e) =>
          e instanceof Error && /pixel limit/i.test(e.message)
            ? tooLarge(`The image is larger than ${maxImageSide}×${maxImageSide} px.`)
            : e instanceof Error && /^timeout/i.test(e.message)
              ? tooLarge(`The image takes more than ${seconds} s to decode and re-encode; send a smaller or simpler one.`)
              : unsupported("The image cannot be decoded: the file is corrupt or truncated."),
      }),
    )
    return {
      bytes: new Uint8Array(output.data.buffer, output.data.byteOffset, output.data.byteLength),
      contentType: type,
      extension: expected.extension,
      width: output.info.width,
      height: output.info.height,
    }
  })

/** The image inspector's budget. */
export interface ImageBudget {
  /** Seconds one decode and re-encode may take (default `imageWorkSeconds`). */
  readonly seconds?: number
  /** Images decoded at once (default `concurrentDecodes`). */
  readonly concurrent?: number
}

/** The image inspector on sharp (libvips) and file-type, with a time and concurrency budget. */
export const makeSharpImageInspector = (budget: ImageBudget = {}): Layer.Layer<ImageInspector> =>
  Layer.effect(
    ImageInspector,
    Effect.gen(function* () {
      const decodes = yield* Semaphore.make(budget.concurrent ?? concurrentDecodes)
      const seconds = budget.seconds ?? imageWorkSeconds
      return { inspect: (bytes: Uint8Array) => inspect(bytes, (effect) => decodes.withPermit(effect), seconds) }
    }),
  )

/** The image inspector on sharp (libvips) and file-type: sniff, check the header, decode and re-encode. */
export const sharpImageInspector: Layer.Layer<ImageInspector> = makeSharpImageInspector()
