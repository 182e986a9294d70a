/**
 * The authorization server's token signing keys, shared by every instance through the OAuthStore
 * (model "Jwks", id "signing") and rotated by `rotateSigningKey`: on demand
 * (`npm run admin -- oauth rotate-key`), and on a schedule by `rotateIfDue`, which every instance
 * runs at each reload (`OAUTH_KEY_ROTATE_DAYS`).
 *
 * A rotation adds a key that becomes active only after a delay: every instance reloads the set
 * now and then (`OAUTH_KEY_REFRESH_MS`), so all of them can verify the new key's tokens before
 * any of them signs with it. The newest active key signs; every kept key verifies, so tokens
 * signed before a rotation stay valid until they expire. The newest `KEPT_KEYS` keys are kept.
 */
import { OAuthStore } from "@content-site/core"
import { Effect, Option } from "effect"
import { exportJWK, generateKeyPair, type JWK } from "jose"
import { randomBytes } from "node:crypto"

/** When a key was made and from when it may sign, in seconds since the epoch. */
interface KeyTimes {
  readonly iat: number
  readonly nbf: number
}

/** The stored set: private JWKs, newest first, and their times (absent for a key of before rotation). */
interface StoredKeys {
  readonly keys: ReadonlyArray<JWK>
  readonly times?: Record<string, KeyTimes>
}

/** The keys in force at one moment. */
/**
 * What makes a token an access token this server signed for `/mcp` (jose's `jwtVerify` options):
 * `/mcp` and the revocation endpoint verify tokens with the same checks.
 */
export const accessTokenChecks = (publicUrl: string, mcpUrl: string) => ({ issuer: publicUrl, audience: mcpUrl, typ: "at+jwt", algorithms: ["ES256"] })

export interface SigningKeys {
  /** The key that signs now (private). */
  readonly active: JWK
  /** Every kept key (private), the active one first: the provider's key set. */
  readonly all: ReadonlyArray<JWK>
  /** The public halves of every kept key: what access tokens are verified with. */
  readonly publics: ReadonlyArray<JWK>
  /** Changes whenever the kept keys or the active one change. */
  readonly fingerprint: string
}

/** How many keys a rotation keeps, the new one included. */
export const KEPT_KEYS = 3
/** The default delay before a new key signs: several refresh periods of every instance. */
export const DEFAULT_ACTIVATION_SECONDS = 300

/** Default age of the newest signing key at which an instance rotates (`OAUTH_KEY_ROTATE_DAYS`; 0 = never). */
export const DEFAULT_KEY_ROTATE_DAYS = 90

/** Whatever runs effects that need the OAuthStore: the server's runtime or the admin command's. */
export interface StoreRuntime {
  readonly runPromise: <A, E>(effect: Effect.Effect<A, E, OAuthStore>) => Promise<A>
}

const MODEL = "Jwks"
const ID = "signing"

const publicOf = ({ d: _private, ...rest }: JWK): JWK => rest

/** The keys in force at `nowSeconds`: the newest key whose activation has come signs. */
export const selectSigningKeys = (stored: StoredKeys, nowSeconds: number): SigningKeys => {
  const timesOf = (k: JWK): KeyTimes => stored.times?.[k.kid ?? ""] ?? { iat: 0, nbf: 0 }
  const usable = stored.keys.filter((k) => timesOf(k).nbf <= nowSeconds)
  const active = usable.reduce<JWK | undefined>((best, k) => (best === undefined || timesOf(k).iat > timesOf(best).iat ? k : best), undefined)
  if (active === undefined) throw new Error("No stored signing key is active yet")
  const all = [active, ...stored.keys.filter((k) => k !== active)]
  return { active, all, publics: all.map(publicOf), fingerprint: all.map((k) => k.kid).join(",") }
}

const makeKey = async (): Promise<JWK> => {
  const { privateKey } = await generateKeyPair("ES256", { extractable: true })
  return { ...(await exportJWK(privateKey)), kid: `es256-${randomBytes(6).toString("hex")}`, alg: "ES256", use: "sig" }
}

const readStored = (runtime: StoreRuntime) =>
  runtime.runPromise(
    OAuthStore.use((store) => Effect.map(store.find(MODEL, ID), (found) => Option.getOrUndefined(found) as StoredKeys | undefined)) as Effect.Effect<
      StoredKeys | undefined
    >,
  )

const write = (runtime: StoreRuntime, keys: StoredKeys) =>
  runtime.runPromise(OAuthStore.use((store) => store.upsert(MODEL, ID, { ...keys }, undefined)) as Effect.Effect<void>)

/** The keys in force, creating the first key (active at once) on a fresh database. */
export const loadSigningKeys = async (runtime: StoreRuntime, nowSeconds: number = Date.now() / 1000): Promise<SigningKeys> => {
  let stored = await readStored(runtime)
  if (stored === undefined || stored.keys.length === 0) {
    const key = await makeKey()
    await write(runtime, { keys: [key], times: { [key.kid!]: { iat: Math.floor(nowSeconds), nbf: 0 } } })
    // Two instances starting together may both have written: use whatever the store kept.
    stored = (await readStored(runtime))!
  }
  return selectSigningKeys(stored, nowSeconds)
}

/**
 * Adds a new signing key that starts signing `activateInSeconds` from now, keeping the newest
 * `KEPT_KEYS` keys (the one signing now always among them). Returns the new key's id.
 */
export const rotateSigningKey = async (
  runtime: StoreRuntime,
  options: { readonly activateInSeconds?: number; readonly nowSeconds?: number } = {},
): Promise<{ kid: string; activatesAt: Date }> => {
  const now = Math.floor(options.nowSeconds ?? Date.now() / 1000)
  const current = await loadSigningKeys(runtime, now)
  const stored = (await readStored(runtime))!
  const key = await makeKey()
  const times: Record<string, KeyTimes> = { ...stored.times, [key.kid!]: { iat: now, nbf: now + (options.activateInSeconds ?? DEFAULT_ACTIVATION_SECONDS) } }
  const byAge = [...stored.keys].sort((a, b) => (times[b.kid ?? ""]?.iat ?? 0) - (times[a.kid ?? ""]?.iat ?? 0))
  const kept = [key, ...byAge.slice(0, KEPT_KEYS - 1)]
  if (!kept.some((k) => k.kid === current.active.kid)) kept[kept.length - 1] = current.active
  const keptTimes = Object.fromEntries(kept.map((k) => [k.kid, times[k.kid ?? ""] ?? { iat: 0, nbf: 0 }]))
  await write(runtime, { keys: kept, times: keptTimes })
  return { kid: key.kid!, activatesAt: new Date(times[key.kid!]!.nbf * 1000) }
}

/**
 * Rotates when the newest key is at least `maxAgeSeconds` old (a key of before rotation counts as
 * made at the epoch), its successor signing `activateInSeconds` later. Instances check on their
 * own; two that rotate at the same moment leave one new key, and the other, overwritten before it
 * could sign (the activation delay outlasts every instance's reload), is simply never used.
 * Answers the new key, or undefined when no rotation was due.
 */
export const rotateIfDue = async (
  runtime: StoreRuntime,
  options: { readonly maxAgeSeconds: number; readonly activateInSeconds: number; readonly nowSeconds?: number },
): Promise<{ kid: string; activatesAt: Date } | undefined> => {
  const now = Math.floor(options.nowSeconds ?? Date.now() / 1000)
  const stored = await readStored(runtime)
  if (stored === undefined || stored.keys.length === 0) return undefined
  const newest = Math.max(...stored.keys.map((k) => stored.times?.[k.kid ?? ""]?.iat ?? 0))
  if (now - newest < options.maxAgeSeconds) return undefined
  return rotateSigningKey(runtime, { activateInSeconds: options.activateInSeconds, nowSeconds: now })
}

/**
 * How long a scheduled rotation's key waits before signing: the default delay, or more when the
 * instances reload less often, so every instance knows the key before any signs with it.
 */
export const scheduledActivationSeconds = (refreshMs: number): number =>
  Math.max(DEFAULT_ACTIVATION_SECONDS, Math.ceil((3 * refreshMs) / 1000))
