/**
 * Rotating the token signing key: a new key is published before it signs, then signs new tokens
 * while tokens of the older keys stay valid, and the oldest key is dropped once enough newer ones
 * exist (its tokens are then refused); and the rotation every instance makes when the newest key
 * has grown old.
 */
import { OAuthStore } from "@content-site/core"
import { rotateIfDue, rotateSigningKey } from "@content-site/mcp"
import { Effect, Option } from "effect"
import { decodeProtectedHeader } from "jose"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { StartedServer } from "../../apps/server/server.ts"
import { eventually } from "../support/eventually.ts"
import { ALICE, connect, ScriptedOAuthProvider, startSeeded } from "./support.ts"

/** How often the server reloads its keys in this test. */
const REFRESH_MS = 100

let server: StartedServer

beforeAll(async () => {
  // OAUTH_KEY_ROTATE_DAYS blank, as `OAUTH_KEY_ROTATE_DAYS=` in an env file gives it: the default (90 days) applies, as for every setting
  server = await startSeeded({ OAUTH_KEY_REFRESH_MS: String(REFRESH_MS), OAUTH_KEY_ROTATE_DAYS: "" })
}, 60_000)
afterAll(async () => {
  await server?.close()
})

/** A fresh access token through the whole OAuth flow, as a new client. */
const freshToken = async (name: string): Promise<string> => {
  const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, name)
  const client = await connect(`${server.url}/mcp`, provider)
  await client?.close()
  const token = provider.savedTokens?.access_token
  if (token === undefined) throw new Error("the OAuth flow did not complete")
  return token
}
const kidOf = (token: string) => decodeProtectedHeader(token).kid
const publishedKids = async () => ((await (await fetch(`${server.url}/oauth/jwks`)).json()) as { keys: Array<{ kid: string; d?: string }> }).keys
const callWith = (token: string) =>
  fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_sites", arguments: {} } }),
  })
/** The published key ids, once the server's reloads have made them `kids` (in any order). */
const publishedOnceReloaded = async (kids: ReadonlyArray<string | undefined>) =>
  (await eventually(publishedKids, (keys) => [...keys.map((k) => k.kid)].sort().join() === [...kids].sort().join(), 10_000)).map((k) => k.kid).sort()

describe("signing key rotation", () => {
  it("should publish a new key before it signs, sign with it once active, and keep older tokens valid until the key is dropped", async () => {
    const first = await freshToken("Before rotation")
    const kid1 = kidOf(first)
    expect((await publishedKids()).map((k) => k.kid)).toEqual([kid1])

    // a key that activates later is published at once but does not sign yet
    const now = Math.floor(Date.now() / 1000)
    const pending = await rotateSigningKey(server.runtime, { activateInSeconds: 3600, nowSeconds: now })
    expect(await publishedOnceReloaded([kid1, pending.kid])).toEqual([kid1, pending.kid].sort())
    expect(kidOf(await freshToken("While pending"))).toBe(kid1)

    // a key active at once signs new tokens; a token of the first key is still accepted
    const active = await rotateSigningKey(server.runtime, { activateInSeconds: -2, nowSeconds: now + 1 })
    expect(await publishedOnceReloaded([kid1, pending.kid, active.kid])).toEqual([kid1, pending.kid, active.kid].sort())
    const second = await freshToken("After rotation")
    expect(kidOf(second)).toBe(active.kid)
    expect((await callWith(first)).status).toBe(200)
    expect((await callWith(second)).status).toBe(200)
    const published = await publishedKids()
    expect(published[0]?.kid).toBe(active.kid)
    expect(published.every((k) => k.d === undefined)).toBe(true)

    // a third rotation keeps the newest three keys: the first is dropped and its tokens refused
    const third = await rotateSigningKey(server.runtime, { activateInSeconds: -3, nowSeconds: now + 2 })
    expect(await publishedOnceReloaded([third.kid, active.kid, pending.kid])).toEqual([third.kid, active.kid, pending.kid].sort())
    expect((await callWith(first)).status).toBe(401)
    expect((await callWith(second)).status).toBe(200)
    expect(kidOf(await freshToken("After the second rotation"))).toBe(third.kid)
  }, 60_000)
})

describe("scheduled signing key rotation", () => {
  type Stored = { keys: Array<{ kid: string }>; times?: Record<string, { iat: number; nbf: number }> }
  const stored = () =>
    server.runtime.runPromise(
      OAuthStore.use((s) => Effect.map(s.find("Jwks", "signing"), (found) => Option.getOrThrow(found) as unknown as Stored)) as Effect.Effect<Stored>,
    )
  const store = (keys: Stored) => server.runtime.runPromise(OAuthStore.use((s) => s.upsert("Jwks", "signing", { ...keys }, undefined)) as Effect.Effect<void>)
  const DAY = 86_400

  it("should rotate only once the newest key is as old as the schedule says, and then not again", async () => {
    const newest = Math.max(...Object.values((await stored()).times ?? {}).map((t) => t.iat))
    const schedule = { maxAgeSeconds: 90 * DAY, activateInSeconds: 300 }
    expect(await rotateIfDue(server.runtime, { ...schedule, nowSeconds: newest + 90 * DAY - 1 })).toBeUndefined()
    const rotated = await rotateIfDue(server.runtime, { ...schedule, nowSeconds: newest + 90 * DAY })
    expect(rotated?.activatesAt.getTime()).toBe((newest + 90 * DAY + 300) * 1000)
    expect((await stored()).keys[0]?.kid).toBe(rotated?.kid)
    // the new key is the newest now: nothing is due until it is old in turn
    expect(await rotateIfDue(server.runtime, { ...schedule, nowSeconds: newest + 90 * DAY + 1 })).toBeUndefined()
  })

  it("should make the running server rotate by itself when its newest key is older than OAUTH_KEY_ROTATE_DAYS", async () => {
    // age the stored keys until the newest is 91 days old: the next reload finds it due (the default is 90 days)
    const before = await stored()
    const newest = Math.max(...Object.values(before.times ?? {}).map((t) => t.iat))
    const shift = newest - (Math.floor(Date.now() / 1000) - 91 * DAY)
    const aged = Object.fromEntries(Object.entries(before.times ?? {}).map(([kid, t]) => [kid, { iat: t.iat - shift, nbf: t.nbf - shift }]))
    await store({ ...before, times: aged })
    const after = await eventually(stored, (now) => now.keys[0]?.kid !== before.keys[0]?.kid, 10_000)
    const fresh = after.keys[0]!
    expect(before.keys.map((k) => k.kid)).not.toContain(fresh.kid)
    const times = after.times![fresh.kid]!
    // published at once, signing only after the activation delay
    expect(times.nbf - times.iat).toBe(300)
    expect((await publishedKids()).map((k) => k.kid)).toContain(fresh.kid)
    expect(kidOf(await freshToken("After the scheduled rotation"))).not.toBe(fresh.kid)
    // One rotation, not one per reload. An absence shows only after a reload has run, so the test
    // gives the server a change a reload makes visible: a marker key, a day older than the new one
    // (so the new key stays the newest) and never signing. Once it is published, a reload ran
    // after the rotation; it first checked whether a rotation was due, and a second rotation
    // would have put a key nobody made into the set.
    const marker = await rotateSigningKey(server.runtime, { nowSeconds: times.iat - DAY, activateInSeconds: 3650 * DAY })
    const known = [...after.keys.map((k) => k.kid), marker.kid]
    const expected = [...(await stored()).keys.map((k) => k.kid)].sort()
    expect(expected).toContain(fresh.kid)
    expect(expected.filter((kid) => !known.includes(kid)), "keys nobody made").toEqual([])
    const published = await eventually(
      async () => (await publishedKids()).map((k) => k.kid).sort(),
      (kids) => kids.includes(marker.kid) || kids.some((kid) => !known.includes(kid)),
      10_000,
    )
    expect(published).toEqual(expected)
    expect([...(await stored()).keys.map((k) => k.kid)].sort()).toEqual(expected)
  }, 30_000)
})
