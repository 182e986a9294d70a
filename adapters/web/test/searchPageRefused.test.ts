/** The search page asked for a page number that is not one: the search page again, its words kept. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { importData } from "@content-site/core"
import { type StartedServer, startServer } from "../../../apps/server/server.ts"
import { signInCookie } from "../../../test/support/webSignIn.ts"

let server: StartedServer
let cookie = ""

beforeAll(async () => {
  server = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false" } })
  await server.runtime.runPromise(importData({ accounts: [{ id: "acc_s1", email: "search@example.com", password: "password-search", name: "Search", sites: [] }] }))
  cookie = await signInCookie(server.url, "search@example.com", "password-search")
}, 60_000)

afterAll(async () => {
  await server?.close()
})

describe("a search with a page number that is not one", () => {
  it("should answer 400 with the search page, the words typed kept in the box and the error beside it", async () => {
    for (const page of ["abc", "0"]) {
      const res = await fetch(`${server.url}/search?q=red+%3Croses%3E&page=${page}`, { headers: { Cookie: cookie }, redirect: "manual" })
      expect(res.status, page).toBe(400)
      const text = await res.text()
      expect(text, page).toMatch(/<input type="search" id="search-q" name="q" value="red &lt;roses&gt;"[^>]* aria-invalid="true"/)
      expect(text, page).toContain('id="search-error"')
      expect(text, page).toContain("whole number from 1")
    }
  })
})
