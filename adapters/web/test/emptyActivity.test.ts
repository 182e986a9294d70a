/** The activity page with nothing to show: a new account's, or filters that match nothing. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { importData } from "@content-site/core"
import { type StartedServer, startServer } from "../../../apps/server/server.ts"

let server: StartedServer
let cookie = ""

beforeAll(async () => {
  server = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false" } })
  await server.runtime.runPromise(importData({ accounts: [{ id: "acc_n", email: "n@example.com", password: "password-n", name: "N", sites: [] }] }))
  const first = await fetch(`${server.url}/`)
  const pre = first.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ")
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await first.text())![1]!
  const res = await fetch(`${server.url}/`, {
    method: "POST", redirect: "manual",
    headers: { Cookie: pre, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: csrf, email: "n@example.com", password: "password-n", next: "/sites" }).toString(),
  })
  cookie = res.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ")
}, 60_000)

afterAll(async () => {
  await server?.close()
})

const text = async (path: string) => {
  const res = await fetch(`${server.url}${path}`, { headers: { Cookie: cookie }, redirect: "manual" })
  expect(res.status, path).toBe(200)
  return res.text()
}

describe("an empty activity page", () => {
  it("should say what to do when the filters match nothing", async () => {
    const page = await text("/activity?channel=mcp")
    expect(page).toContain("No activity matches these filters. Widen the dates, choose another channel, result or article, or Reset to see it all.")
  })

  it("should not speak of filters when none is set", async () => {
    const page = await text("/activity?page=1")
    expect(page).not.toContain("No activity matches")
  })
})
