import { Context, type Effect, type Option } from "effect"
import type { ImageFetchFailed, PayloadTooLarge, RateLimited, UnsafeUrl, Unavailable, UnsupportedImage } from "../errors.ts"

/** An image as checked and re-encoded by the inspector. */
export interface InspectedImage {
  readonly bytes: Uint8Array
  readonly contentType: "image/jpeg" | "image/png" | "image/webp" | "image/gif" | "image/avif"
  readonly extension: string
  readonly width: number
  readonly height: number
}

/**
 * Judges image bytes by decoding them and re-encodes them for storage, for an account (`owner`):
 * a shared pool of decoders serves accounts fairly by it, and fails with RateLimited when that
 * account alone has too many images decoding or waiting, with Unavailable when the pool can take
 * no more now.
 */
export class ImageInspector extends Context.Service<ImageInspector, {
  /** Refuses anything but JPEG, PNG, WebP, GIF and AVIF, SVG always; refuses over 10 MiB or 8000 px a side before decoding pixels. */
  readonly inspect: (bytes: Uint8Array, owner: string) => Effect.Effect<InspectedImage, UnsupportedImage | PayloadTooLarge | RateLimited | Unavailable>
}>()("core/ImageInspector") {}

/**
 * Fetches an image from a public https URL, safe against SSRF, for an account (`owner`): it fails
 * with RateLimited when that account alone has too many fetches in flight.
 */
export class ImageFetcher extends Context.Service<ImageFetcher, {
  readonly fetch: (url: string, owner: string) => Effect.Effect<Uint8Array, UnsafeUrl | ImageFetchFailed | PayloadTooLarge | RateLimited>
}>()("core/ImageFetcher") {}

/** A stored media object. */
export interface StoredMedia {
  readonly bytes: Uint8Array
  readonly contentType: string
}

/** Where images are kept; served under `{base_url}/media/{key}`. */
export class MediaStore extends Context.Service<MediaStore, {
  /** Stores the bytes under a new key and returns the key (e.g. `2026/11/abc.webp`). */
  readonly put: (bytes: Uint8Array, contentType: string, extension: string) => Effect.Effect<string, Unavailable>
  readonly get: (key: string) => Effect.Effect<Option.Option<StoredMedia>, Unavailable>
  /**
   * Removes what `put` stored under the key, when the change that was to name it was refused
   * after the put; a key that names nothing (removed already, or never stored) is no failure.
   */
  readonly remove: (key: string) => Effect.Effect<void, Unavailable>
}>()("core/MediaStore") {}
