import { ImageInspector, type InspectedImage, PayloadTooLarge, RateLimited, Unavailable, UnsupportedImage } from "@content-site/core"
import { fairQueue } from "@content-site/platform"
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
 * Images one account may have decoding and waiting at once; past it that account's upload is
 * answered 429 `rate_limited` (`Retry-After`: one decode's budget). One account decodes one image
 * at a time while the pool has two processes, so the other process is always free for others.
 */
export const decodesPerAccount = 2

/** Images waiting for a process at most, over every account (10 MiB each at most); past it 503 `unavailable`. */
export const decodesWaiting = 16

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

/** Runs the pixel work of one image in a child process, within `seconds`, in `owner`'s turn. */
type PixelWork = (input: Uint8Array, type: Accepted, seconds: number, owner: string) => Effect.Effect<Reencoded, RateLimited | Unavailable>

const inspect = (
  input: Uint8Array,
  owner: string,
  work: PixelWork,
  seconds: number,
): Effect.Effect<InspectedImage, UnsupportedImage | PayloadTooLarge | RateLimited | Unavailable> =>
  Effect.gen(function* () {
    if (input.byteLength > maxImageBytes) {
      return yield* tooLarge(`The image is ${input.byteLength} bytes; at most ${maxImageBytes} bytes (10 MiB) are accepted.`)
    }
    if (input.byteLength === 0) return yield* unsupported("The image is empty.")

    // The bytes decide, never a name or a declared type.
    const sniffed = yield* Effect.promise(() => fileTypeFromBuffer(input).catch(() => undefined))
    // An animated PNG is a PNG (its default image is what every PNG decoder reads), as an animated
    // GIF or WebP is a GIF or WebP; file-type names it apart.
    const mime = sniffed?.mime === "image/apng" ? "image/png" : sniffed?.mime
    if (!sniffed || mime === undefined || !isAccepted(mime)) {
      return yield* unsupported(
        `The bytes are ${sniffed ? `'${sniffed.mime}'` : "not a recognised image"}; only JPEG, PNG, WebP, GIF and AVIF are accepted.`,
      )
    }
    const type = mime
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
    const output = yield* work(input, type, seconds, owner)
    if (!output.ok) {
      return yield* output.reason === "pixels"
        ? tooLarge(`The image is larger than ${maxImageSide}×${maxImageSide} px.`)
        : output.reason === "time"
          ? tooLarge(`The image takes more than ${seconds} s to decode and re-encode; send a smaller or simpler one.`)
          : unsupported("The image cannot be decoded: the file is corrupt or truncated.")
    }
    // Re-encoding can outgrow its input (a 1-bit palette PNG written back as 8-bit RGBA): what is
    // stored is held to the same limit as what was sent, so a call never stores more than 10 MiB.
    if (output.data.byteLength > maxImageBytes) {
      return yield* tooLarge(`The image re-encoded is ${output.data.byteLength} bytes; at most ${maxImageBytes} bytes (10 MiB) are stored.`)
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
  /** Images one account may have decoding and waiting (default `decodesPerAccount`). */
  readonly perAccount?: number
  /** Images waiting over every account (default `decodesWaiting`). */
  readonly waiting?: number
  /** Told when a child process is killed for outliving the budget (the server logs it). */
  readonly onKilled?: (seconds: number) => void
  /**
   * Told when a child process ended by itself under its image (a decoder crash, the OOM killer:
   * its exit code or signal); the image is refused and the process replaced (the server logs it).
   */
  readonly onEnded?: (exit: string) => void
  /** Handed the pool's load (images decoding and waiting, every account), for the metrics to read. */
  readonly watch?: (load: () => { readonly running: number; readonly waiting: number }) => void
}

/**
 * The image inspector on sharp (libvips) and file-type, with a time and concurrency budget: the
 * header is read here (no pixel decoded), the pixel work runs in a pool of `concurrent` child
 * processes, and one that outlives the budget by half a second is killed (its image refused,
 * 413), whatever the decoder; its memory goes with it. The processes are shared fairly between
 * accounts (`fairQueue`: each account its own queue, turns in rotation, one process at a time
 * per account while there are two or more). The pool ends with the runtime.
 */
export const makeSharpImageInspector = (budget: ImageBudget = {}): Layer.Layer<ImageInspector> =>
  Layer.effect(
    ImageInspector,
    Effect.gen(function* () {
      const seconds = budget.seconds ?? imageWorkSeconds
      const concurrent = budget.concurrent ?? concurrentDecodes
      const perAccount = budget.perAccount ?? decodesPerAccount
      const queue = fairQueue({
        slots: concurrent,
        perOwner: perAccount,
        perOwnerRunning: Math.max(1, concurrent - 1),
        maxWaiting: budget.waiting ?? decodesWaiting,
      })
      budget.watch?.(() => queue.load())
      const pool = yield* Effect.acquireRelease(
        Effect.sync(() =>
          processPool<{ input: Uint8Array; type: ImageType; seconds: number }, Reencoded>(
            new URL("./imageProcess.ts", import.meta.url),
            concurrent,
          ),
        ),
        (pool) => Effect.sync(() => pool.close()),
      )
      // libvips stops itself at the budget where it can; the process is killed half a second later.
      const decode = async (input: Uint8Array, type: ImageType, s: number): Promise<Reencoded> => {
        const outcome = await pool.run({ input, type, seconds: s }, s * 1000 + 500)
        if ("answer" in outcome) return outcome.answer
        // A process that died under its image (a decoder crash, the OOM killer) refuses that image;
        // a pool that cannot start a process or is closed stays a failure of the service.
        if ("ended" in outcome) {
          budget.onEnded?.(outcome.ended)
          return { ok: false, reason: "corrupt" }
        }
        budget.onKilled?.(s)
        return { ok: false, reason: "time" }
      }
      const ownLimit = new RateLimited({ limit: perAccount, retryAfterSeconds: seconds, counted: "images of this account being decoded at once" })
      const busy = new Unavailable({ detail: "Too many images are being decoded right now; retry in a moment." })
      const work: PixelWork = (input, type, s, owner) =>
        Effect.flatMap(
          Effect.promise(() => queue.run(owner, () => decode(input, type, s))),
          (outcome): Effect.Effect<Reencoded, RateLimited | Unavailable> =>
            "value" in outcome ? Effect.succeed(outcome.value) : Effect.fail(outcome.refused === "owner" ? ownLimit : busy),
        )
      return { inspect: (bytes: Uint8Array, owner: string) => inspect(bytes, owner, work, seconds) }
    }),
  )

/** The image inspector on sharp (libvips) and file-type: sniff, check the header, decode and re-encode. */
export const sharpImageInspector: Layer.Layer<ImageInspector> = makeSharpImageInspector()
