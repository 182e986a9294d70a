/** Node platform Layers: the system clock, random ids, and scrypt password hashing (the web-standard parts are in `web.ts`). */
import { randomBase62, randomIds, systemClock } from "./web.ts"
import { Secrets } from "@content-site/core"
import { Effect, Layer } from "effect"
import { hash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto"

const scryptAsync = (password: string, salt: Buffer, keylen: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scrypt(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))),
  )

/** scrypt parameters (N=2^15, r=8, p=1: about 32 MiB and tens of milliseconds a hash). */
export interface ScryptParams {
  readonly N: number
  readonly r: number
  readonly p: number
}

/** Production parameters, per OWASP's password storage guidance for scrypt. */
export const defaultScrypt: ScryptParams = { N: 2 ** 15, r: 8, p: 1 }

/** Secrets on node:crypto: SHA-256 for high-entropy API keys, memory-hard scrypt for passwords. */
export const nodeSecrets = (params: ScryptParams = defaultScrypt) =>
  Layer.succeed(Secrets, {
    generateApiKey: Effect.sync(() => `cs_${randomBase62(40)}`),
    // one-shot `hash` (no Hash object): every authenticated request hashes its key
    hashApiKey: (key) => Effect.sync(() => hash("sha256", key, "hex")),
    hashPassword: (password) =>
      Effect.promise(async () => {
        const salt = randomBytes(16)
        const hash = await scryptAsync(password, salt, 32, { ...params, maxmem: 256 * params.N * params.r })
        return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString("base64")}$${hash.toString("base64")}`
      }),
    verifyPassword: (password, stored) =>
      Effect.promise(async () => {
        const [scheme, n, r, p, salt, hash] = stored.split("$")
        if (scheme !== "scrypt" || !n || !r || !p || !salt || !hash) return false
        const expected = Buffer.from(hash, "base64")
        const N = Number(n)
        const R = Number(r)
        const actual = await scryptAsync(password, Buffer.from(salt, "base64"), expected.length, {
          N,
          r: R,
          p: Number(p),
          maxmem: 256 * N * R,
        })
        return actual.length === expected.length && timingSafeEqual(actual, expected)
      }),
  })

/** Clock, ids and secrets for a Node server. */
export const nodePlatform = (params?: ScryptParams) => Layer.mergeAll(systemClock, randomIds, nodeSecrets(params))

export { ADMITTED_HOLD_MS, pooledHtmlAnalyzer, SMALL_BODY, STORED_INLINE, workerHtmlAnalyzer, type HtmlPool, type HtmlWorkerOptions } from "./workerHtmlAnalyzer.ts"
export { lowerV8HelperThreads, V8_HELPERS_NICE } from "./helperThreads.ts"
export { fairQueue, type FairOutcome, type FairQueue, type FairQueueOptions, type Refusal } from "./fairQueue.ts"

export * from "./web.ts"
