/**
 * The OAuth sign-in and consent pages in real Chromium (the Chromium `npm ci` installs, playwright-core): the
 * person types, clicks Allow or Deny, and the browser lands on the app's redirect URI (the CSP's
 * form-action must allow that redirect). axe-core checks both pages; the Deny run has JavaScript
 * turned off.
 */
import { readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { createRequire } from "node:module"
import type { Browser, Page } from "playwright-core"
import { launchChromium } from "../support/browser.ts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { StartedServer } from "../../apps/server/server.ts"
import { ALICE, startSeeded } from "./support.ts"

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

let server: StartedServer
let browser: Browser
let callback: Server
let callbackUrl: string
const arrivals: Array<URL> = []

const seriousViolations = async (page: Page): Promise<ReadonlyArray<string>> => {
  await page.evaluate(axeSource)
  const violations = (await page.evaluate(`axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)`)) as ReadonlyArray<{
    id: string
    impact: string | null
    help: string
  }>
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.help}`)
}

const authorizeUrl = async (name: string) => {
  const register = await fetch(`${server.url}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: name, redirect_uris: [callbackUrl], token_endpoint_auth_method: "none" }),
  })
  const { client_id } = (await register.json()) as { client_id: string }
  const url = new URL(`${server.url}/oauth/authorize`)
  url.search = new URLSearchParams({
    client_id,
    response_type: "code",
    redirect_uri: callbackUrl,
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
    scope: "mcp",
    resource: `${server.url}/mcp`,
    state: "s1",
  }).toString()
  return url.toString()
}

beforeAll(async () => {
  server = await startSeeded()
  callback = createServer((req, res) => {
    arrivals.push(new URL(req.url ?? "/", callbackUrl))
    res.writeHead(200, { "content-type": "text/plain" })
    res.end("back in the app")
  })
  await new Promise<void>((resolve) => callback.listen(0, "127.0.0.1", () => resolve()))
  callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`
  browser = await launchChromium()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await new Promise<void>((resolve) => (callback ? callback.close(() => resolve()) : resolve()))
  await server?.close()
})

describe("the OAuth pages in Chromium", () => {
  it("should let a person sign in and Allow, pass axe, and land on the app with a code", async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    const cspErrors: Array<string> = []
    page.on("console", (m) => {
      // The favicon's 404 is not ours to judge; CSP refusals are.
      if (m.type() === "error" && /Content Security Policy|Refused/i.test(m.text())) cspErrors.push(m.text())
    })
    await page.goto(await authorizeUrl("Browser Agent"))
    await expect(page.getByRole("heading", { name: "Sign in" }).count()).resolves.toBe(1)
    expect(await seriousViolations(page)).toEqual([])
    await page.getByLabel("Email").fill(ALICE.email)
    await page.getByLabel("Password").fill(ALICE.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("button", { name: "Allow" }).waitFor()
    expect(await page.textContent("main")).toContain("Browser Agent")
    expect(await seriousViolations(page)).toEqual([])
    await Promise.all([page.waitForURL((u) => u.toString().startsWith(callbackUrl)), page.getByRole("button", { name: "Allow" }).click()])
    const arrived = new URL(page.url())
    expect(arrived.searchParams.get("code")).toBeTruthy()
    expect(arrived.searchParams.get("state")).toBe("s1")
    expect(cspErrors).toEqual([])
    await context.close()
  }, 60_000)

  it("should work without JavaScript and send the person back with access_denied on Deny", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false })
    const page = await context.newPage()
    await page.goto(await authorizeUrl("No Script Agent"))
    await page.getByLabel("Email").fill(ALICE.email)
    await page.getByLabel("Password").fill(ALICE.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("button", { name: "Deny" }).waitFor()
    await Promise.all([page.waitForURL((u) => u.toString().startsWith(callbackUrl)), page.getByRole("button", { name: "Deny" }).click()])
    expect(new URL(page.url()).searchParams.get("error")).toBe("access_denied")
    await context.close()
  }, 60_000)
})
