/**
 * Review point 4: a sign-in with an unknown email costs a password hash like one with a known
 * email, on the web sign-in page and on the OAuth sign-in page. The whole app is composed as the
 * server composes it and spoken to over HTTP; only the password hasher is wrapped, to count the
 * hashes it computes (no timing is measured).
 */
import { type CoreServices, importData, Secrets } from "@content-site/core"
import { headerImageInspector, inlineHtmlAnalyzer, memoryStorage, settingsLayer, tableImageFetcher } from "@content-site/memory"
import { randomIds, systemClock } from "@content-site/platform/web"
import { nodeSecrets } from "@content-site/platform"
import { Effect, Layer, ManagedRuntime } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { composeApp } from "../../apps/server/compose.ts"
import { Browser } from "../mcp/support.ts"
import { fixture } from "./helpers.ts"

const counts = { hashes: 0 }
let server: Server
let url = ""
let runtime: ManagedRuntime.ManagedRuntime<CoreServices, never>

/** The platform's scrypt hasher (small parameters), counting every hash made or checked. */
const countingScrypt = (): Layer.Layer<Secrets> => {
  const inner = Effect.runSync(Effect.provide(Secrets.use((s) => Effect.succeed(s)), nodeSecrets({ N: 2 ** 10, r: 8, p: 1 })))
  return Layer.succeed(Secrets, {
    ...inner,
    hashPassword: (password) => Effect.suspend(() => (counts.hashes++, inner.hashPassword(password))),
    verifyPassword: (password, hash) => Effect.suspend(() => (counts.hashes++, inner.verifyPassword(password, hash))),
  })
}

beforeAll(async () => {
  server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  runtime = ManagedRuntime.make(
    Layer.mergeAll(memoryStorage(), systemClock, randomIds, countingScrypt(), settingsLayer(url, { authFailuresPerMinute: 1000 }), headerImageInspector, inlineHtmlAnalyzer, tableImageFetcher(new Map())),
  )
  await runtime.runPromise(importData(fixture()))
  const app = await composeApp({ runtime, publicUrl: url, env: {}, ready: async () => true, trustProxy: false, isDraining: () => false })
  server.on("request", app.callback())
})
afterAll(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve))
  await runtime?.dispose()
})

const hiddenField = (html: string, name: string): string => {
  const m = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)
  if (m === null) throw new Error(`no hidden ${name}`)
  return m[1] as string
}

/** How many password hashes one sign-in attempt computed, and its status. */
const hashesOf = async (attempt: () => Promise<Response>) => {
  const before = counts.hashes
  const res = await attempt()
  return { status: res.status, hashes: counts.hashes - before }
}

describe("sign-in costs a password hash for unknown emails too (review point 4)", () => {
  it("should hash once on the web sign-in page, known email or not", async () => {
    const browser = new Browser()
    const page = await (await browser.request(`${url}/`)).text()
    const signIn = (email: string, password: string) => () =>
      browser.request(`${url}/`, { form: { _csrf: hiddenField(page, "_csrf"), email, password, next: "/sites" } })
    expect(await hashesOf(signIn("owner-a@example.com", "wrong-password"))).toEqual({ status: 401, hashes: 1 })
    expect(await hashesOf(signIn("nobody@example.com", "wrong-password"))).toEqual({ status: 401, hashes: 1 })
    // no email at all asks for one (400) before any check: it names no account, so there is nothing to hide
    expect(await hashesOf(signIn("", "wrong-password"))).toEqual({ status: 400, hashes: 0 })
  })

  it("should hash once on the OAuth sign-in page, known email or not", async () => {
    const redirectUri = "http://127.0.0.1:1/callback"
    const registered = await fetch(`${url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Timing", redirect_uris: [redirectUri], token_endpoint_auth_method: "none" }),
    })
    const clientId = ((await registered.json()) as { client_id: string }).client_id
    const challenge = createHash("sha256").update(randomBytes(32).toString("base64url")).digest("base64url")
    const query = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: redirectUri, scope: "mcp", code_challenge: challenge, code_challenge_method: "S256", state: "s" })
    const browser = new Browser()
    const authorize = await browser.request(`${url}/oauth/authorize?${query}`)
    const interaction = new URL(authorize.headers.get("location") as string, url).toString()
    const page = await (await browser.request(interaction)).text()
    const signIn = (email: string, password: string) => () =>
      browser.request(`${interaction}/login`, { form: { csrf: hiddenField(page, "csrf"), email, password } })
    expect(await hashesOf(signIn("owner-a@example.com", "wrong-password"))).toEqual({ status: 401, hashes: 1 })
    expect(await hashesOf(signIn("nobody@example.com", "wrong-password"))).toEqual({ status: 401, hashes: 1 })
  })
})
