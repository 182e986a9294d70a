/**
 * The platform on web-standard APIs only (Web Crypto, Date): the system clock, random ids and
 * Web Crypto secrets. It runs wherever the core does (Node, Deno, a browser), so embedders and
 * the in-memory adapter use it; servers add scrypt passwords and the worker pool from `index.ts`.
 */
import { Clock, Ids, Secrets } from "@content-site/core"
import { Effect, Layer } from "effect"

/** The system clock. */
export const systemClock = Layer.succeed(Clock, { now: Effect.sync(() => Date.now()) })

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** CSPRNG bytes drawn in blocks (one system call per 4 KiB, as Node's randomUUID does), each used once. */
const pool = new Uint8Array(4096)
let poolAt = pool.length

const randomByte = (): number => {
  if (poolAt === pool.length) {
    crypto.getRandomValues(pool)
    poolAt = 0
  }
  return pool[poolAt++]!
}

/** Random base62 text from the platform's CSPRNG, without modulo bias. */
export const randomBase62 = (length: number): string => {
  let out = ""
  while (out.length < length) {
    const b = randomByte()
    if (b < 248) out += BASE62[b % 62]
  }
  return out
}

/** Random ids `prefix_xxxxxxxxxxxxxxxx`. */
export const randomIds = Layer.succeed(Ids, { make: (prefix) => Effect.sync(() => `${prefix}_${randomBase62(16)}`) })

const hex = (buf: ArrayBuffer) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("")

/**
 * Secrets on Web Crypto only (usable under Deno too): SHA-256 for API keys, PBKDF2-SHA256 for
 * passwords. Servers use the scrypt Layer of the Node adapter for passwords.
 */
export const webCryptoSecrets = (pbkdf2Iterations = 210_000) =>
  Layer.succeed(Secrets, {
    generateApiKey: Effect.sync(() => `cs_${randomBase62(40)}`),
    hashApiKey: (key) => Effect.promise(() => crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)).then(hex)),
    hashPassword: (password) =>
      Effect.promise(async () => {
        const salt = crypto.getRandomValues(new Uint8Array(16))
        const bits = await pbkdf2(password, salt, pbkdf2Iterations)
        return `pbkdf2-sha256$${pbkdf2Iterations}$${hex(salt.buffer)}$${hex(bits)}`
      }),
    verifyPassword: (password, stored) =>
      Effect.promise(async () => {
        const [scheme, iter, saltHex, hashHex] = stored.split("$")
        if (scheme !== "pbkdf2-sha256" || !iter || !saltHex || !hashHex) return false
        const salt = new Uint8Array(saltHex.match(/../g)!.map((h) => parseInt(h, 16)))
        const candidate = hex(await pbkdf2(password, salt, Number(iter)))
        let diff = candidate.length ^ hashHex.length
        for (let i = 0; i < Math.min(candidate.length, hashHex.length); i++) diff |= candidate.charCodeAt(i) ^ hashHex.charCodeAt(i)
        return diff === 0
      }),
  })

const pbkdf2 = async (password: string, salt: Uint8Array, iterations: number) => {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(password), "PBKDF2", false, ["deriveBits"])
  return crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt: salt as BufferSource, iterations }, key, 256)
}
