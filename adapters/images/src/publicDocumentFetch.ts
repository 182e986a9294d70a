import { request } from "undici"
import { isPublicAddress, urlRefusal } from "./addressPolicy.ts"
import { makeAgent } from "./safeImageFetcher.ts"

/** Options of the fetch of small documents a caller names by URL (an OAuth client's metadata document). */
export interface PublicDocumentFetchOptions {
  /** Total time for the fetch: DNS, connection, TLS and body (default 2.5 s). */
  readonly timeoutMs?: number
  /** Largest body read, counted on the bytes as they arrive (default 5 KiB). */
  readonly maxBytes?: number
  /** Tests only: extra trusted CA certificates in PEM (a local test server's self-signed certificate). */
  readonly ca?: string | ReadonlyArray<string>
  /** Tests only: which addresses count as public (default: `isPublicAddress`). */
  readonly isAllowedAddress?: (ip: string) => boolean
}

/**
 * A `fetch` for documents at URLs anyone may name, held to the image fetcher's address policy:
 * https only, no credentials, an IP literal or every address a name resolves to public (checked
 * before connecting, and the connected socket's address again: no DNS rebinding), no redirect
 * followed (a 3xx is answered as is, body dropped), one deadline over everything and the body
 * capped while it streams. It fails with a plain error that names no address.
 */
export const publicDocumentFetch =
  (options: PublicDocumentFetchOptions = {}) =>
  async (raw: string, init: RequestInit = {}): Promise<Response> => {
    const allowed = options.isAllowedAddress ?? isPublicAddress
    const maxBytes = options.maxBytes ?? 5 * 1024
    const url = URL.parse(raw)
    if (url === null) throw new Error("The URL is not a valid absolute URL.")
    if (urlRefusal(url, { allowPrivate: false, isAllowedAddress: allowed }) !== null) throw new Error("The URL is not one that is fetched.")
    const timeoutMs = options.timeoutMs ?? 2500
    const deadline = AbortSignal.timeout(timeoutMs)
    const signal = init.signal ? AbortSignal.any([deadline, init.signal]) : deadline
    // (names resolved as an image URL's are: by c-ares, within the deadline)
    const agent = makeAgent({ allowPrivate: false, ...(options.ca === undefined ? {} : { ca: options.ca }) }, allowed, Date.now() + timeoutMs, signal)
    try {
      const headers: Record<string, string> = { "user-agent": "content-site/1" }
      new Headers(init.headers).forEach((value, name) => (headers[name] = value))
      if (headers["user-agent"] === "") headers["user-agent"] = "content-site/1"
      const response = await request(url, { dispatcher: agent, method: "GET", signal, headers })
      const chunks: Array<Buffer> = []
      let total = 0
      if (response.statusCode === 200) {
        for await (const chunk of response.body as AsyncIterable<Buffer>) {
          total += chunk.byteLength
          if (total > maxBytes) throw new Error("The document is too large.")
          chunks.push(chunk)
        }
      } else {
        response.body.on("error", () => undefined)
        response.body.destroy()
      }
      const answer = new Headers()
      for (const [name, value] of Object.entries(response.headers)) {
        if (value !== undefined && name !== "content-length" && name !== "content-encoding" && name !== "transfer-encoding") answer.set(name, Array.isArray(value) ? value.join(", ") : value)
      }
      return new Response(response.statusCode === 200 ? Buffer.concat(chunks, total) : null, { status: response.statusCode, headers: answer })
    } catch {
      throw new Error(deadline.aborted ? "The document took too long to fetch." : "The document could not be fetched.")
    } finally {
      agent.destroy().catch(() => undefined)
    }
  }
