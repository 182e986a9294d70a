/**
 * Pages with nothing to show: a site with no articles or backlinks at all, or none that match the
 * filters; the activity page of an account whose calls match no filter. One server, one sign-in.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { importData } from "@content-site/core"
import { type StartedServer, startServer } from "../../../apps/server/server.ts"
import { signInCookie } from "../../../test/support/webSignIn.ts"

let server: StartedServer
let cookie = ""

beforeAll(async () => {
  server = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false" } })
  await server.runtime.runPromise(importData({ accounts: [{ id: "acc_e", email: "e@example.com", password: "password-e", name: "E", sites: [
    { id: "site_empty", name: "Empty", url: "https://empty.test", articles: [] },
    { id: "site_one", name: "One", url: "https://one.test", articles: [
      { id: "art_one", title: "T", url: "https://one.test/a", status: "published", published_at: "2026-11-01T09:00:00Z", "target keyword": "k", body: "<p>x</p>" },
    ] },
  ] }] }))
  cookie = await signInCookie(server.url, "e@example.com", "password-e")
}, 60_000)

afterAll(async () => {
  await server?.close()
})

const text = async (path: string) => {
  const res = await fetch(`${server.url}${path}`, { headers: { Cookie: cookie }, redirect: "manual" })
  expect(res.status, path).toBe(200)
  return res.text()
}

describe("a site's empty lists", () => {
  it("should say a site with no articles has none yet, not that filters match nothing", async () => {
    const page = await text("/sites/site_empty")
    expect(page).toContain("This site has no articles yet.")
    expect(page).not.toContain("match these filters")
  })

  it("should say a site with no backlinks has none yet", async () => {
    const page = await text("/sites/site_empty?tab=backlinks")
    expect(page).toContain("This site has no backlinks yet.")
    expect(page).not.toContain("match these filters")
  })

  it("should say what to do when filters match nothing", async () => {
    const page = await text("/sites/site_one?status=draft")
    expect(page).toContain("No articles match these filters. Widen the dates, choose another status, or Reset to see them all.")
  })
})

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
