/** The oidc-provider adapter over the OAuth store: what the provider cannot see from one instance. */
import { errors } from "oidc-provider"
import { describe, expect, it } from "vitest"
import { memoryRuntime } from "../../../test/support/memoryRuntime.ts"
import { oauthStoreAdapter } from "../src/oauthStoreAdapter.ts"

describe("oauthStoreAdapter", () => {
  for (const [model, what] of [
    ["RefreshToken", "refresh token"],
    ["AuthorizationCode", "authorization code"],
  ] as const) {
    it(`should refuse the ${what} consumed by another redemption at the same moment, and revoke its grant as the provider does for one used twice`, async () => {
      const { runtime } = memoryRuntime()
      try {
        const adapter = oauthStoreAdapter(runtime)
        const source = adapter(model)
        const access = adapter("AccessToken")
        const grants = adapter("Grant")
        await grants.upsert("grant_1", { kind: "Grant", jti: "grant_1", accountId: "acc_1", clientId: "client_1" }, 3600)
        await grants.upsert("grant_other", { kind: "Grant", jti: "grant_other", accountId: "acc_1", clientId: "client_1" }, 3600)
        await source.upsert("src_1", { grantId: "grant_1", kind: model, jti: "src_1" }, 3600)
        await access.upsert("at_1", { grantId: "grant_1", kind: "AccessToken", jti: "at_1" }, 3600)
        await access.upsert("at_other", { grantId: "grant_other", kind: "AccessToken", jti: "at_other" }, 3600)
        // the winner consumed it; the loser, past the provider's own check, consumes it too
        await source.consume("src_1")
        expect(await access.find("at_1")).toBeDefined()
        const refused = await source.consume("src_1").then(
          () => undefined,
          (e: unknown) => e,
        )
        expect(refused).toBeInstanceOf(errors.InvalidGrant)
        // every token of the grant stops working; another grant's stays
        expect(await access.find("at_1")).toBeUndefined()
        expect(await grants.find("grant_1")).toBeUndefined()
        expect(await access.find("at_other")).toBeDefined()
        expect(await grants.find("grant_other")).toBeDefined()
      } finally {
        await runtime.dispose()
      }
    })
  }
})
