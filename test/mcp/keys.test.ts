/**
 * Rotating the token signing key: a new key is published before it signs, then signs new tokens
 * while tokens of the older keys stay valid, and the oldest key is dropped once enough newer ones
 * exist (its tokens are then refused).
 */
import { rotateSigningKey } from "@content-site/mcp"
import { decodeProtectedHeader } from "jose"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { StartedServer } from "../../apps/server/server.ts"
import { ALICE, connect, ScriptedOAuthProvider, startSeeded } from "./support.ts"

/** How often the server reloads its keys in this test. */
const REFRESH_MS = 100

let server: StartedServer

beforeAll(async () => {
  server = await startSeeded({ OAUTH_KEY_REFRESH_MS: String(REFRESH_MS) })
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
/** Waits for the server's next key reload (a few refresh periods). */
const reload = () => new Promise((r) => setTimeout(r, REFRESH_MS * 4))

describe("signing key rotation", () => {
  it("should publish a new key before it signs, sign with it once active, and keep older tokens valid until the key is dropped", async () => {
    const first = await freshToken("Before rotation")
    const kid1 = kidOf(first)
    expect((await publishedKids()).map((k) => k.kid)).toEqual([kid1])

    // a key that activates later is published at once but does not sign yet
    const now = Math.floor(Date.now() / 1000)
    const pending = await rotateSigningKey(server.runtime, { activateInSeconds: 3600, nowSeconds: now })
    await reload()
    expect((await publishedKids()).map((k) => k.kid).sort()).toEqual([kid1, pending.kid].sort())
    expect(kidOf(await freshToken("While pending"))).toBe(kid1)

    // a key active at once signs new tokens; a token of the first key is still accepted
    const active = await rotateSigningKey(server.runtime, { activateInSeconds: -2, nowSeconds: now + 1 })
    await reload()
    const second = await freshToken("After rotation")
    expect(kidOf(second)).toBe(active.kid)
    expect((await callWith(first)).status).toBe(200)
    expect((await callWith(second)).status).toBe(200)
    const published = await publishedKids()
    expect(published[0]?.kid).toBe(active.kid)
    expect(published.every((k) => k.d === undefined)).toBe(true)

    // a third rotation keeps the newest three keys: the first is dropped and its tokens refused
    const third = await rotateSigningKey(server.runtime, { activateInSeconds: -3, nowSeconds: now + 2 })
    await reload()
    expect((await publishedKids()).map((k) => k.kid).sort()).toEqual([third.kid, active.kid, pending.kid].sort())
    expect((await callWith(first)).status).toBe(401)
    expect((await callWith(second)).status).toBe(200)
    expect(kidOf(await freshToken("After the second rotation"))).toBe(third.kid)
  }, 60_000)
})
