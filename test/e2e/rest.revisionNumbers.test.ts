import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { json, startTestServer, type TestServer } from "./helpers.ts"

// Revision numbers are PostgreSQL integers: past 2^31 - 1 a number names no revision. Every place
// that takes one answers as for any revision that does not exist, never a 500.
let t: TestServer
beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PER_MINUTE: "100000" })
})
afterAll(async () => {
  await t?.close()
})

describe("revision numbers past 2^31 - 1", () => {
  for (const n of [2 ** 31 - 1, 2 ** 31, 2 ** 53 - 1]) {
    it(`should answer ${n} as a revision that does not exist, or a number out of range`, async () => {
      expect((await t.api(`/api/v1/articles/art_a02/revisions/${n}`)).status).toBe(404)
      expect((await t.api(`/api/v1/articles/art_a02/revisions/${n}/restore`, { method: "POST" })).status).toBe(404)
      const diff = await t.api(`/api/v1/articles/art_a02/diff?from=${n}`)
      expect([400, 404]).toContain(diff.status)
      if (diff.status === 400) expect((await json(diff)).errors[0].path).toBe("from")
      const put = await t.api("/api/v1/articles/art_a02", { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ title: "x", base_revision: n }) })
      expect(put.status).toBe(400)
      expect((await json(put)).errors[0].path).toBe("base_revision")
    })
  }

  it("should publish the range in the document: maximum 2147483647", async () => {
    const doc = await json(await fetch(`${t.url}/api/v1/openapi.json`))
    const params = (path: string) => (doc.paths[path].get.parameters as Array<{ name: string; schema: Record<string, unknown> }>)
    const maximumOf = (path: string, name: string) => JSON.stringify(params(path).find((p) => p.name === name)!.schema).match(/"maximum":(\d+)/)?.[1]
    expect(maximumOf("/articles/{id}/diff", "from")).toBe("2147483647")
    expect(maximumOf("/articles/{id}/diff", "to")).toBe("2147483647")
    expect(maximumOf("/articles/{id}/revisions/{number}", "number")).toBe("2147483647")
  })
})
