import { ImageInspector, type InspectedImage, PayloadTooLarge, UnsupportedImage } from "@content-site/core"
import { Effect, Layer } from "effect"
import { fileTypeFromBuffer } from "file-type"
import sharp from "sharp"
import { processPool } from "./processPool.ts"
import { type ImageType, inputOptions, maxImageSide, type Reencoded } from "./reencode.ts"

export { maxImageSide }

/** Largest accepted image, in bytes (10 MiB). */
export const maxImageBytes = 10 * 1024 * 1024

/** Images decoded at once: one child process each; a full-size decode can take hundreds of MB and seconds. */
export const concurrentDecodes = 2

/**
 * Seconds one decode and re-encode may take before it is stopped and the image refused (413).
 * libvips stops itself where the decoder lets it; where it does not (AVIF's decoder works in one
 * call), the child process doing the work is killed.
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

/** Runs the pixel work of one image in a child process, within `seconds`. */
type PixelWork = (input: Uint8Array, type: Accepted, seconds: number) => Promise<Reencoded>

const inspect = (input: Uint8Array, work: PixelWork, seconds: number): Effect.Effect<InspectedImage, UnsupportedImage | PayloadTooLarge> =>
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

    // Full decode and re-encode, in a child process: what is stored is what sharp wrote, without
    // metadata or trailing bytes.
    const output = yield* Effect.promise(() => work(input, type, seconds))
    if (!output.ok) {
      return yield* output.reason === "pixels"
        ? tooLarge(`The image is larger than ${maxImageSide}×${maxImageSide} px.`)
        : output.reason === "time"
          ? tooLarge(`The image takes more than ${seconds} s to decode and re-encode; send a smaller or simpler one.`)
          : unsupported("The image cannot be decoded: the file is corrupt or truncated.")
    }
    return {
      bytes: output.data,
      contentType: type,
      extension: expected.extension,
      width: output.width,
      height: output.height,
    }
  })

/** The image inspector's budget. */
export interface ImageBudget {
  /** Seconds one decode and re-encode may take (default `imageWorkSeconds`). */
  readonly seconds?: number
  /** Images decoded at once (default `concurrentDecodes`). */
  readonly concurrent?: number
  /** Told when a child process is killed for outliving the budget (the server logs it). */
  readonly onKilled?: (seconds: number) => void
}

/**
 * The image inspector on sharp (libvips) and file-type, with a time and concurrency budget: the
 * header is read here (no pixel decoded), the pixel work runs in a pool of `concurrent` child
 * processes, and one that outlives the budget by half a second is killed (its image refused,
 * 413), whatever the decoder; its memory goes with it. The pool ends with the runtime.
 */
export const makeSharpImageInspector = (budget: ImageBudget = {}): Layer.Layer<ImageInspector> =>
  Layer.effect(
    ImageInspector,
    Effect.gen(function* () {
      const seconds = budget.seconds ?? imageWorkSeconds
      const pool = yield* Effect.acquireRelease(
        Effect.sync(() =>
          processPool<{ input: Uint8Array; type: ImageType; seconds: number }, Reencoded>(
            new URL("./imageProcess.ts", import.meta.url),
            budget.concurrent ?? concurrentDecodes,
          ),
        ),
        (pool) => Effect.sync(() => pool.close()),
      )
      // libvips stops itself at the budget where it can; the process is killed half a second later.
      const work: PixelWork = async (input, type, s) => {
        const outcome = await pool.run({ input, type, seconds: s }, s * 1000 + 500)
        if ("answer" in outcome) return outcome.answer
        budget.onKilled?.(s)
        return { ok: false, reason: "time" }
      }
      return { inspect: (bytes: Uint8Array) => inspect(bytes, work, seconds) }
    }),
  )

/** The image inspector on sharp (libvips) and file-type: sniff, check the header, decode and re-encode. */
export const sharpImageInspector: Layer.Layer<ImageInspector> = makeSharpImageInspector()
