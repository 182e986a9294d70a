/** A problem type's address that names no problem type: a 404 page that says so, not one about accounts. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type StartedServer, startServer } from "../../../apps/server/server.ts"

let server: StartedServer

beforeAll(async () => {
  server = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false" } })
}, 60_000)

afterAll(async () => {
  await server?.close()
})

describe("an unknown problem type's page", () => {
  it("should be a 404 page naming no account, saying there is no such problem type and linking the list", async () => {
    const res = await fetch(`${server.url}/problems/no_such_code%3Cx%3E`)
    expect(res.status).toBe(404)
    expect(res.headers.get("content-type")).toContain("text/html")
    const text = await res.text()
    expect(text).not.toContain("another account")
    expect(text).toContain("No such problem type: there is no problem type named")
    expect(text).toContain("no_such_code&lt;x&gt;")
    expect(text).toContain('href="/problems"')
  })

  it("should keep the pages of the known ones", async () => {
    const res = await fetch(`${server.url}/problems/not_found`)
    expect(res.status).toBe(200)
    expect(await res.text()).toContain("<code>not_found</code>")
  })
})
