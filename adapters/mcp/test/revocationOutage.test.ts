/**
 * The revocation of a JWT access token (answered by `createAuthorizationServer` after the provider
 * refused it `unsupported_token_type`) while the store cannot answer: the client's lookup has
 * passed (its authentication is over), then the grant's fails. A cut database connection would
 * fail the client's lookup first, so the store here is wrapped to fail from the grant on.
 */
import { OAuthStore, Unavailable } from "@content-site/core"
import { Effect, Layer, Option } from "effect"
import { importJWK, SignJWT } from "jose"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { MEMORY_PUBLIC_URL, memoryRuntime } from "../../../test/support/memoryRuntime.ts"
import { createAuthorizationServer, loadSharedKeys, presentAsPublic } from "../src/authorizationServer.ts"

let away = false
const unavailable = new Unavailable({ detail: "The database cannot answer now; nothing was changed. Retry in a few seconds." })
/** The store, failing every call on a grant (and every revocation by grant) while `away`. */
const failingGrants = (storage: Layer.Layer<any>) =>
  Layer.effect(
    OAuthStore,
    OAuthStore.use((inner) =>
      Effect.succeed({
        ...inner,
        find: (model: string, id: string) => (away && model === "Grant" ? Effect.fail(unavailable) : inner.find(model, id)),
        destroy: (model: string, id: string) => (away && model === "Grant" ? Effect.fail(unavailable) : inner.destroy(model, id)),
        revokeByGrantId: (grantId: string) => (away ? Effect.fail(unavailable) : inner.revokeByGrantId(grantId)),
      }),
    ),
  ).pipe(Layer.provide(storage))

let server: Server | undefined
afterEach(async () => {
  away = false
  await new Promise((resolve) => (server === undefined ? resolve(undefined) : server.close(resolve)))
  server = undefined
})

describe("revoking a JWT access token", () => {
  it("should answer 503 temporarily_unavailable with Retry-After, revoking nothing, while the store cannot find its grant; 200 once it can", async () => {
    const { runtime } = memoryRuntime({ over: (storage) => [failingGrants(storage)] })
    try {
      const keys = await loadSharedKeys(runtime)
      const provider = createAuthorizationServer({ runtime, publicUrl: MEMORY_PUBLIC_URL, keys, signedInAccountId: async () => undefined, clientMetadataDocuments: false })
      const handle = provider.callback()
      server = createServer((req, res) => {
        presentAsPublic(req, MEMORY_PUBLIC_URL, "127.0.0.1")
        void handle(req, res)
      })
      await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve))
      const at = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const client = { client_id: "client_1", token_endpoint_auth_method: "none", redirect_uris: ["http://127.0.0.1:9/cb"], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] }
      await runtime.runPromise(
        OAuthStore.use((s) =>
          Effect.zip(s.upsert("Client", "client_1", client, undefined), s.upsert("Grant", "grant_1", { kind: "Grant", jti: "grant_1", clientId: "client_1", accountId: "acc_1" }, 3600)),
        ),
      )
      const now = Math.floor(Date.now() / 1000)
      const token = await new SignJWT({ client_id: "client_1", gid: "grant_1", sub: "acc_1", scope: "mcp", jti: "at_1" })
        .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid: keys.signing.active.kid ?? "" })
        .setIssuer(MEMORY_PUBLIC_URL)
        .setAudience(`${MEMORY_PUBLIC_URL}/mcp`)
        .setIssuedAt(now)
        .setExpirationTime(now + 900)
        .sign(await importJWK(keys.signing.active, "ES256"))
      const revoke = () =>
        fetch(`${at}/oauth/revoke`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ token, token_type_hint: "access_token", client_id: "client_1" }),
        })
      const grant = () => runtime.runPromise(OAuthStore.use((s) => s.find("Grant", "grant_1")))

      away = true
      const refused = await revoke()
      expect(refused.status).toBe(503)
      expect(refused.headers.get("retry-after")).toBe("5")
      expect(refused.headers.get("content-type")).toMatch(/^application\/json/)
      expect(await refused.json()).toEqual({ error: "temporarily_unavailable", error_description: unavailable.detail })
      away = false
      expect(Option.isSome(await grant())).toBe(true)

      const revoked = await revoke()
      expect(revoked.status).toBe(200)
      expect(Option.isNone(await grant())).toBe(true)
    } finally {
      await runtime.dispose()
    }
  })
})
