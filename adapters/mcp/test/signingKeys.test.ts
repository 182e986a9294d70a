import { describe, expect, it } from "vitest"
import { selectSigningKeys } from "../src/signingKeys.ts"

const key = (kid: string) => ({ kty: "EC", crv: "P-256", x: `x-${kid}`, y: `y-${kid}`, d: `d-${kid}`, kid, alg: "ES256", use: "sig" })

describe("signing keys in force", () => {
  it("should let a key stored before rotation existed (no times) sign", () => {
    const keys = selectSigningKeys({ keys: [key("old")] }, 1_000)
    expect(keys.active.kid).toBe("old")
    expect(keys.publics).toEqual([{ kty: "EC", crv: "P-256", x: "x-old", y: "y-old", kid: "old", alg: "ES256", use: "sig" }])
  })

  it("should sign with the newest key whose activation has come, and publish every kept key, the signer first", () => {
    const stored = {
      keys: [key("next"), key("new"), key("old")],
      times: { next: { iat: 300, nbf: 900 }, new: { iat: 200, nbf: 250 }, old: { iat: 100, nbf: 0 } },
    }
    expect(selectSigningKeys(stored, 240).active.kid).toBe("old")
    const at500 = selectSigningKeys(stored, 500)
    expect(at500.active.kid).toBe("new")
    expect(at500.all.map((k) => k.kid)).toEqual(["new", "next", "old"])
    expect(at500.publics.every((k) => k.d === undefined)).toBe(true)
    expect(selectSigningKeys(stored, 900).active.kid).toBe("next")
    expect(selectSigningKeys(stored, 900).fingerprint).not.toBe(at500.fingerprint)
  })

  it("should refuse a set with no active key", () => {
    expect(() => selectSigningKeys({ keys: [key("later")], times: { later: { iat: 1, nbf: 10 } } }, 5)).toThrow("active")
  })
})
