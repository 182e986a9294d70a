/**
 * A protected link in the article editor in Chromium is part of the text, not a control of its own:
 * Tab leaves the editor past it, and keys pressed while the link has the focus (a click puts it
 * there) change nothing in the article (Enter inserted an empty paragraph at the top, out of sight).
 */
import { importData } from "@content-site/core"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type StartedServer, startServer } from "../../apps/server/server.ts"
import { launchChromium } from "../support/browser.ts"

const EMAIL = "link-keys@example.com"
const PASSWORD = "link keys password"
const BODY = '<h2>Roses</h2><p>Read <a href="https://127.0.0.1:9/partner" data-service-protected="backlink">our partner</a> first.</p><p>More text.</p>'

let server: StartedServer
let browser: Browser

beforeAll(async () => {
  server = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false" } })
  await server.runtime.runPromise(importData({
    accounts: [{ id: "acc_lk", email: EMAIL, password: PASSWORD, sites: [{ id: "site_lk", name: "Keys", url: "https://keys.test", articles: [{ id: "art_lk", title: "Keys", url: "https://keys.test/a", status: "published", body: BODY }] }] }],
  }))
  browser = await launchChromium()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

describe("keys on a protected link in the editor", () => {
  it("should leave the editor with Tab past a protected link, and change nothing on Enter or Shift+Enter while the link has the focus", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    await page.goto(`${server.url}/`)
    await page.fill("#email", EMAIL)
    await page.fill("#password", PASSWORD)
    await Promise.all([page.waitForURL(`${server.url}/sites`), page.click("button[type=submit]")])
    await page.goto(`${server.url}/articles/art_lk`)
    await page.waitForSelector(".editor-content")
    const before = await page.inputValue("#body")

    await page.focus(".editor-content")
    await page.keyboard.press("Tab")
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("reason")

    // Following the link is the browser's business (kept from leaving here, for the test only).
    await page.evaluate(() => document.addEventListener("click", (e) => e.preventDefault(), true))
    await page.focus(".editor-content .pm-protected a")
    for (const key of ["Enter", "Shift+Enter"]) {
      await page.keyboard.press(key)
      await page.waitForTimeout(100)
      expect(await page.inputValue("#body"), key).toBe(before)
    }
    expect(page.url()).toBe(`${server.url}/articles/art_lk`)
    await context.close()
  }, 60_000)
})
