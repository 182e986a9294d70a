import { ImageFetcher, ImageFetchFailed, PayloadTooLarge, RateLimited, UnsafeUrl } from "@content-site/core"
import { fairQueue } from "@content-site/platform"
import { Effect, Layer } from "effect"
import { lookup as dnsLookup, type LookupAddress } from "node:dns"
import { Resolver } from "node:dns/promises"
import type { LookupFunction } from "node:net"
import { Agent, buildConnector, request } from "undici"
import { isLoopbackAddress, isPublicAddress, notPublicHost, redirectedToNonPublicHost, urlRefusal } from "./addressPolicy.ts"
import { maxImageBytes } from "./sharpImageInspector.ts"

/** Options of the SSRF-safe image fetcher. */
export interface SafeImageFetcherOptions {
  /** Tests only: allow http and loopback addresses (IMAGE_FETCH_ALLOW_PRIVATE=true); private, link-local and other special addresses stay refused. */
  readonly allowPrivate: boolean
  /** Total time for the whole fetch, redirects and body included (default 10 s). */
  readonly timeoutMs?: number
  /** Largest body accepted, enforced while streaming (default 10 MiB). */
  readonly maxBytes?: number
  /** Redirects followed, each one re-checked (default 3). */
  readonly maxRedirects?: number
  /** Tests only: extra trusted CA certificates in PEM (a local test server's self-signed certificate). */
  readonly ca?: string | ReadonlyArray<string>
  /** Tests only: which connected addresses count as public (default: `isPublicAddress`). */
  readonly isAllowedAddress?: (ip: string) => boolean
  /** Fetches one account may have in flight at once (default `FETCHES_PER_ACCOUNT`). */
  readonly perAccount?: number
  /** Tests only: the DNS servers asked (`127.0.0.1:53535`), instead of the system's. */
  readonly dnsServers?: ReadonlyArray<string>
}

/**
 * Fetches one account may have in flight at once; past it that account's next fetch is refused,
 * 429 `rate_limited`. Each fetch may hold up to 10 MiB buffered for up to 10 s, and the
 * per-minute request limit alone would let one account hold dozens at once; two leave room for
 * a retry while another is under way, and a person replacing a featured image needs one.
 */
export const FETCHES_PER_ACCOUNT = 2

/**
 * Raised inside the connector when a host resolves to, or a socket reaches, a non-public address,
 * and when a name does not resolve at all (an unknown name and an internal one read the same).
 * Its message names the host the caller wrote but never the addresses it resolved to: echoing
 * them would let anyone map the internal network through this endpoint.
 */
class RefusedAddress extends Error {
  constructor(host: string) {
    super(notPublicHost(host))
  }
}

/** The one sentence for every failure to reach or read the image (DNS, connection, TLS). */
const FETCH_FAILED = "The image could not be fetched."

/** A failure already judged, carried out of the promise as is. */
class Judged extends Error {
  readonly error: UnsafeUrl | ImageFetchFailed | PayloadTooLarge
  constructor(error: UnsafeUrl | ImageFetchFailed | PayloadTooLarge) {
    super(error._tag)
    this.error = error
  }
}

const unsafe = (detail: string) => new Judged(new UnsafeUrl({ detail }))
const failed = (detail: string) => new Judged(new ImageFetchFailed({ detail }))

/** Drops a response body we will not read; the socket goes with it, and so does the abort error it emits. */
const discard = (body: { on: (event: "error", listener: () => void) => unknown; destroy: () => unknown }) => {
  body.on("error", () => undefined)
  body.destroy()
}

const redirectStatuses = new Set([301, 302, 303, 307, 308])

/** Walks an error and its causes (undici wraps connector errors) looking for one of a class. */
const findInChain = <T>(e: unknown, is: (x: unknown) => x is T): T | undefined => {
  for (let cur: unknown = e, depth = 0; cur !== undefined && cur !== null && depth < 8; depth++) {
    if (is(cur)) return cur
    cur = typeof cur === "object" && "cause" in cur ? (cur as { cause: unknown }).cause : undefined
  }
  return undefined
}

/** A lookup that ended without an answer: the DNS server did not answer in time, or the fetch's deadline passed. */
class LookupTimedOut extends Error {}

/** Resolver error codes that mean "no answer in time", not "no such name". */
const unanswered = new Set(["ETIMEOUT", "ECANCELLED", "EDESTRUCTION"])
/** Resolver error codes that mean the name has no address of that family. */
const noAddress = new Set(["ENODATA", "ENOTFOUND", "ENONAME"])

/**
 * Every address of a host name, A and AAAA, asked of the DNS servers with c-ares (Node's
 * `Resolver`), not `dns.lookup`: getaddrinfo holds one of libuv's four pool threads until the
 * system resolver gives up, whatever our deadline says, so four names whose servers never answer
 * would stall every file read and hash of the process. c-ares waits on the event loop, is
 * bounded by the time left, and is cancelled when the fetch's deadline passes.
 */
const resolveAll = async (hostname: string, family: 0 | 4 | 6, dnsServers: ReadonlyArray<string> | undefined, deadlineAt: number, signal: AbortSignal): Promise<Array<LookupAddress>> => {
  const left = Math.max(1, Math.ceil(deadlineAt - Date.now()))
  // One try bounded by the time left; c-ares ends by itself by then, the deadline cancels it anyway.
  const resolver = new Resolver({ timeout: left, tries: 1, maxTimeout: left })
  if (dnsServers !== undefined) resolver.setServers([...dnsServers])
  const cancel = () => resolver.cancel()
  if (signal.aborted) throw new LookupTimedOut()
  signal.addEventListener("abort", cancel, { once: true })
  const ask = (f: 4 | 6): Promise<Array<LookupAddress> | Error> =>
    (f === 4 ? resolver.resolve4(hostname) : resolver.resolve6(hostname)).then(
      (addresses) => addresses.map((address) => ({ address, family: f })),
      (e: unknown) => (noAddress.has((e as NodeJS.ErrnoException).code ?? "") ? [] : e instanceof Error ? e : new Error(String(e))),
    )
  try {
    const answers = await Promise.all(family === 0 ? [ask(4), ask(6)] : [ask(family)])
    const failure = answers.find((a): a is Error => a instanceof Error)
    if (failure !== undefined) {
      if (unanswered.has((failure as NodeJS.ErrnoException).code ?? "")) throw new LookupTimedOut()
      throw new RefusedAddress(hostname)
    }
    return answers.flatMap((a) => a as Array<LookupAddress>)
  } finally {
    signal.removeEventListener("abort", cancel)
  }
}

/**
 * A DNS lookup that answers only when every address of the host is allowed: the socket then
 * connects to one of exactly these addresses, so a rebinding resolver cannot slip a private one in.
 * `localhost` under the tests-only `allowPrivate` is read from /etc/hosts (`dns.lookup`, at once);
 * an IP literal never comes here (the socket connects to it as is).
 */
const guardedLookup = (options: Pick<SafeImageFetcherOptions, "allowPrivate" | "dnsServers">, allowed: (ip: string) => boolean, deadlineAt: number, signal: AbortSignal): LookupFunction =>
  ((hostname: string, lookupOptions: { all?: boolean; family?: number | string }, callback: (...args: Array<unknown>) => void) => {
    const family = lookupOptions.family === 6 || lookupOptions.family === "IPv6" ? 6 : lookupOptions.family === 4 || lookupOptions.family === "IPv4" ? 4 : 0
    const answer = (addresses: Array<LookupAddress>) => {
      const refused = addresses.find((a) => !allowed(a.address))
      if (refused) return callback(new RefusedAddress(hostname))
      const first = addresses[0]
      // A name that does not resolve is answered as one that resolves to internal addresses.
      if (!first) return callback(new RefusedAddress(hostname))
      if (lookupOptions.all) callback(null, addresses)
      else callback(null, first.address, first.family)
    }
    if (options.allowPrivate && hostname.toLowerCase() === "localhost") {
      dnsLookup(hostname, { family, all: true }, (err: NodeJS.ErrnoException | null, addresses: Array<LookupAddress>) =>
        err ? callback(new RefusedAddress(hostname)) : answer(addresses),
      )
      return
    }
    resolveAll(hostname, family, options.dnsServers, deadlineAt, signal).then(answer, (e: unknown) => callback(e))
  }) as LookupFunction

/**
 * One dispatcher per fetch: its connector checks the resolved address and again the address
 * actually connected, and gives up when the fetch's deadline passes. undici does not abort a
 * connection under way with the request's signal (only its own 10 s connect timeout ends it), so
 * a host that accepts TCP and never finishes TLS would outlast the deadline, on every redirect.
 */
export const makeAgent = (
  options: Pick<SafeImageFetcherOptions, "ca" | "allowPrivate" | "dnsServers">,
  allowed: (ip: string) => boolean,
  deadlineAt: number,
  signal: AbortSignal,
): Agent => {
  const tls = options.ca === undefined ? {} : { ca: typeof options.ca === "string" ? [options.ca] : [...options.ca] }
  const base = buildConnector({ ...tls, lookup: guardedLookup(options, allowed, deadlineAt, signal) })
  return new Agent({
    connect: (opts, callback) => {
      if (signal.aborted) return callback(new Error("The fetch was aborted before connecting."), null)
      let settled = false
      const settle: typeof callback = (err, socket) => {
        if (settled) return
        settled = true
        signal.removeEventListener("abort", onAbort)
        if (err !== null) return callback(err, null)
        callback(null, socket)
      }
      const connecting = base(opts, (err, socket) => {
        if (err !== null) return settle(err, null)
        const remote = socket.remoteAddress
        if (remote === undefined || !allowed(remote)) {
          socket.destroy()
          return settle(new RefusedAddress(opts.hostname), null)
        }
        return settle(null, socket)
      }) as unknown as { destroy: () => void } | undefined
      const onAbort = () => {
        connecting?.destroy()
        settle(new Error("The fetch was aborted while connecting."), null)
      }
      signal.addEventListener("abort", onAbort, { once: true })
    },
  })
}

const fetchBytes = async (raw: string, options: SafeImageFetcherOptions, interrupt: AbortSignal): Promise<Uint8Array> => {
  const timeoutMs = options.timeoutMs ?? 10_000
  const maxBytes = options.maxBytes ?? maxImageBytes
  const maxRedirects = options.maxRedirects ?? 3
  const allowedAddress = options.isAllowedAddress ?? isPublicAddress
  // allowPrivate opens loopback for the tests' local servers, and nothing else: a server that
  // runs with it by mistake still never reaches the metadata address or a private network.
  const allowed = options.allowPrivate ? (ip: string) => allowedAddress(ip) || isLoopbackAddress(ip) : allowedAddress
  const deadlineAt = Date.now() + timeoutMs
  const deadline = AbortSignal.timeout(timeoutMs)
  const signal = AbortSignal.any([deadline, interrupt])
  let current: URL
  try {
    current = new URL(raw)
  } catch {
    throw unsafe("The image URL is not a valid absolute URL.")
  }
  const agent = makeAgent(options, allowed, deadlineAt, signal)
  // Whether the URL being tried came from a Location: its host is then never echoed.
  let redirected = false
  try {
    for (let redirects = 0; ; redirects++) {
      redirected = redirects > 0
      const refusal = urlRefusal(current, { allowPrivate: options.allowPrivate, isAllowedAddress: allowed, redirected })
      if (refusal !== null) throw unsafe(refusal)
      const response = await request(current, {
        dispatcher: agent,
        method: "GET",
        signal,
        headers: { accept: "image/avif,image/webp,image/png,image/jpeg,image/gif", "user-agent": "content-site-image-fetcher/1" },
      })
      if (redirectStatuses.has(response.statusCode)) {
        discard(response.body)
        const location = response.headers["location"]
        if (typeof location !== "string" || location === "") throw failed(`The server answered ${response.statusCode} without a Location.`)
        if (redirects >= maxRedirects) throw failed(`More than ${maxRedirects} redirects.`)
        try {
          current = new URL(location, current)
        } catch {
          throw failed("The server redirected to an invalid URL.")
        }
        continue
      }
      if (response.statusCode < 200 || response.statusCode > 299) {
        discard(response.body)
        throw failed(`The server answered ${response.statusCode}.`)
      }
      const declared = Number(response.headers["content-length"])
      if (Number.isFinite(declared) && declared > maxBytes) {
        discard(response.body)
        throw new Judged(new PayloadTooLarge({ detail: `The image is ${declared} bytes; at most ${maxBytes} bytes are accepted.` }))
      }
      const chunks: Array<Buffer> = []
      let total = 0
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        total += chunk.byteLength
        if (total > maxBytes) {
          discard(response.body)
          throw new Judged(new PayloadTooLarge({ detail: `The image is larger than ${maxBytes} bytes.` }))
        }
        chunks.push(chunk)
      }
      const all = Buffer.concat(chunks, total)
      return new Uint8Array(all.buffer, all.byteOffset, all.byteLength)
    }
  } catch (e) {
    if (e instanceof Judged) throw e
    const refused = findInChain(e, (x): x is RefusedAddress => x instanceof RefusedAddress)
    if (refused) throw unsafe(redirected ? redirectedToNonPublicHost : refused.message)
    if (deadline.aborted) throw failed(`The fetch took longer than ${timeoutMs} ms.`)
    // A refused connection, a reset and a bad certificate of a public host read the same.
    throw failed(FETCH_FAILED)
  } finally {
    agent.destroy().catch(() => undefined)
  }
}

/**
 * The image fetcher safe against SSRF: https only, every hop's host resolved and refused unless
 * all its addresses are public, the connected socket's address checked again, at most
 * `maxRedirects` redirects, one total deadline, and the body capped while it streams. Each
 * account has at most `perAccount` fetches in flight (the same `fairQueue` as the decoders, with
 * no shared cap: fetches wait on the network, not on a pool of workers); past it that account
 * alone is refused with RateLimited.
 */
export const safeImageFetcher = (options: SafeImageFetcherOptions): Layer.Layer<ImageFetcher> => {
  const perAccount = options.perAccount ?? FETCHES_PER_ACCOUNT
  const queue = fairQueue({ slots: Number.POSITIVE_INFINITY, perOwner: perAccount, maxWaiting: 0 })
  const ownLimit = new RateLimited({ limit: perAccount, retryAfterSeconds: 1, counted: "image fetches of this account in flight at once" })
  return Layer.succeed(ImageFetcher, {
    fetch: (url, owner) =>
      Effect.flatMap(
        Effect.tryPromise({
          try: (signal) => queue.run(owner, () => fetchBytes(url, options, signal)),
          catch: (e) => (e instanceof Judged ? e.error : new ImageFetchFailed({ detail: FETCH_FAILED })),
        }),
        // With no shared cap, the only refusal is the account's own.
        (outcome) => ("value" in outcome ? Effect.succeed(outcome.value) : Effect.fail(ownLimit)),
      ),
  })
}
