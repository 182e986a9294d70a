/** The admin import on the memory Layers: what a file may hold, and what importing it costs. */
import { describe, expect, it } from "vitest"
import { importData, verifyCredentials, type InvalidRequest } from "../../src/index.ts"
import { countingSecrets, failureOf, fixture, makeWorld } from "./harness.ts"

const backlink = {
  id: "bl_bound",
  date_acquired: "2026-10-05",
  source_domain: "news.test",
  source_url: "https://news.test/p",
  target_url: "https://bound.test/a",
  anchor_text: "anchor",
  anchor_type: "exact",
  category: "industry",
}
const fileWith = (b: Record<string, unknown>) => ({
  accounts: [{ id: "acc_bound", email: "bound@example.test", password: "password-b", sites: [{ id: "site_bound", name: "Bound", url: "https://bound.test", backlinks: [backlink, b] }] }],
})

describe("importData: backlink texts", () => {
  it.each([
    ["source_domain", 253],
    ["anchor_text", 500],
    ["anchor_type", 100],
    ["source_url", 2048],
    ["target_url", 2048],
  ] as const)("should refuse a backlink's %s over %i characters naming the entry and field, writing nothing", async (field, max) => {
    const w = await makeWorld()
    const long = (n: number) => (field.endsWith("_url") ? `https://news.test/${"p".repeat(n - 18)}` : "x".repeat(n))
    const at = { ...backlink, id: "bl_at_bound", [field]: long(max) }
    expect((await w.run(importData(fileWith(at)))).created.backlinks).toBe(2)
    const w2 = await makeWorld()
    const before = w2.state.backlinks.size
    const exit = await w2.exit(importData(fileWith({ ...backlink, id: "bl_over", [field]: long(max + 1) })))
    const error = failureOf(exit) as InvalidRequest
    expect(error._tag).toBe("InvalidRequest")
    expect(error.detail).toContain(`accounts/0/sites/0/backlinks/1/${field}`)
    expect(w2.state.accounts.has("acc_bound")).toBe(false)
    expect(w2.state.backlinks.size).toBe(before)
  })
})

describe("importData: importing again", () => {
  it("should hash no password of an account that is stored already (its row is left unchanged), and hash a new account's once", async () => {
    const { counts, layer } = countingSecrets()
    const w = await makeWorld({}, new Map(), undefined, layer)
    const before = counts.hashes
    const again = await w.run(importData(fixture))
    expect(again.created.accounts).toBe(0)
    expect(counts.hashes - before).toBe(0)
    const grown = { accounts: [...fixture.accounts, { id: "acc_new", email: "new@example.test", password: "password-n" }] }
    expect((await w.run(importData(grown))).created.accounts).toBe(1)
    expect(counts.hashes - before).toBe(1)
    // the new account's password is the file's; the stored ones are unchanged
    expect((await w.run(verifyCredentials("new@example.test", "password-n", "1.1.1.1"))).id).toBe("acc_new")
    expect((await w.run(verifyCredentials("a@example.com", "password-a", "1.1.1.1"))).id).toBe("acc_a")
  })
})
