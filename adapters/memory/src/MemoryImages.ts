import { ImageFetcher, ImageFetchFailed, ImageInspector, MAX_IMAGE_BYTES, MAX_IMAGE_SIDE, PayloadTooLarge, UnsafeUrl, UnsupportedImage, type InspectedImage } from "@content-site/core"
import { Effect, Layer } from "effect"

type Sniffed = { contentType: InspectedImage["contentType"]; extension: string; width: number; height: number }

const u16be = (b: Uint8Array, i: number) => ((b[i] ?? 0) << 8) | (b[i + 1] ?? 0)
const u16le = (b: Uint8Array, i: number) => (b[i] ?? 0) | ((b[i + 1] ?? 0) << 8)
const u32be = (b: Uint8Array, i: number) => (((b[i] ?? 0) << 24) >>> 0) + (((b[i + 1] ?? 0) << 16) | ((b[i + 2] ?? 0) << 8) | (b[i + 3] ?? 0))
const ascii = (b: Uint8Array, i: number, n: number) => String.fromCharCode(...b.subarray(i, i + n))

/** Reads type and dimensions from an image header without decoding pixels (PNG, GIF, JPEG, WebP, AVIF). */
export const sniffImageHeader = (b: Uint8Array): Sniffed | null => {
  if (b.length >= 24 && u32be(b, 0) === 0x89504e47 && ascii(b, 12, 4) === "IHDR") {
    return { contentType: "image/png", extension: "png", width: u32be(b, 16), height: u32be(b, 20) }
  }
  if (b.length >= 10 && (ascii(b, 0, 6) === "GIF87a" || ascii(b, 0, 6) === "GIF89a")) {
    return { contentType: "image/gif", extension: "gif", width: u16le(b, 6), height: u16le(b, 8) }
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    let i = 2
    while (i + 9 < b.length) {
      if (b[i] !== 0xff) return null
      const marker = b[i + 1] ?? 0
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return { contentType: "image/jpeg", extension: "jpg", width: u16be(b, i + 7), height: u16be(b, i + 5) }
      }
      i += 2 + u16be(b, i + 2)
    }
    return null
  }
  if (b.length >= 30 && ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 4) === "WEBP") {
    const chunk = ascii(b, 12, 4)
    if (chunk === "VP8X") return { contentType: "image/webp", extension: "webp", width: 1 + ((b[24] ?? 0) | ((b[25] ?? 0) << 8) | ((b[26] ?? 0) << 16)), height: 1 + ((b[27] ?? 0) | ((b[28] ?? 0) << 8) | ((b[29] ?? 0) << 16)) }
    if (chunk === "VP8 ") return { contentType: "image/webp", extension: "webp", width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff }
    if (chunk === "VP8L") {
      const bits = (b[21] ?? 0) | ((b[22] ?? 0) << 8) | ((b[23] ?? 0) << 16) | ((b[24] ?? 0) << 24)
      return { contentType: "image/webp", extension: "webp", width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 }
    }
    return null
  }
  if (b.length >= 16 && ascii(b, 4, 4) === "ftyp" && (ascii(b, 8, 4) === "avif" || ascii(b, 8, 4) === "avis")) {
    for (let i = 0; i + 20 <= b.length; i++) {
      if (ascii(b, i, 4) === "ispe") return { contentType: "image/avif", extension: "avif", width: u32be(b, i + 8), height: u32be(b, i + 12) }
    }
    return null
  }
  return null
}

/**
 * An image inspector for tests and embedders without native image libraries: judges the bytes by
 * their header (never a name or declared type) and enforces the size and pixel limits, but stores
 * the bytes as given instead of re-encoding them. Servers use the sharp inspector.
 */
export const headerImageInspector = Layer.succeed(ImageInspector, {
  inspect: (bytes) =>
    Effect.suspend((): Effect.Effect<InspectedImage, UnsupportedImage | PayloadTooLarge> => {
      if (bytes.byteLength > MAX_IMAGE_BYTES) return Effect.fail(new PayloadTooLarge({ detail: "The image is larger than 10 MiB." }))
      const sniffed = sniffImageHeader(bytes)
      if (sniffed === null || sniffed.width === 0 || sniffed.height === 0) {
        return Effect.fail(new UnsupportedImage({ detail: "Not a JPEG, PNG, WebP, GIF or AVIF image." }))
      }
      if (sniffed.width > MAX_IMAGE_SIDE || sniffed.height > MAX_IMAGE_SIDE) {
        return Effect.fail(new PayloadTooLarge({ detail: `The image is larger than ${MAX_IMAGE_SIDE} px on a side.` }))
      }
      return Effect.succeed({ bytes, ...sniffed })
    }),
})

/** An image fetcher over a fixed table of https URLs, for tests: no network at all. */
export const tableImageFetcher = (table: ReadonlyMap<string, Uint8Array>) =>
  Layer.succeed(ImageFetcher, {
    fetch: (url) =>
      Effect.suspend((): Effect.Effect<Uint8Array, UnsafeUrl | ImageFetchFailed> => {
        if (!/^https:\/\//i.test(url)) return Effect.fail(new UnsafeUrl({ detail: "Only https URLs can be fetched." }))
        const bytes = table.get(url)
        return bytes ? Effect.succeed(bytes) : Effect.fail(new ImageFetchFailed({ detail: `Fetching ${url} failed: 404.` }))
      }),
  })
