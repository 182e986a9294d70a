/**
 * The editor toolbar's list and quote buttons are toggles (pressed in a list or quote, they lift
 * out of it), so in Chromium they say whether they are on with aria-pressed, as Bold does: a
 * screen reader, and the pressed look, tell the person where the caret is.
 */
import { importData } from "@content-site/core"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type StartedServer, startServer } from "../../apps/server/server.ts"
import { launchChromium } from "../support/browser.ts"

const EMAIL = "toolbar-toggles@example.com"
const PASSWORD = "toolbar toggles password"
const BODY = "<p>A paragraph.</p><ul><li>Bullet item</li></ul><ol><li>Numbered item</li></ol><blockquote><p>Quoted words</p></blockquote>"

let server: StartedServer
let browser: Browser

beforeAll(async () => {
  server = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false" } })
  await server.runtime.runPromise(importData({
    accounts: [{ id: "acc_tt", email: EMAIL, password: PASSWORD, sites: [{ id: "site_tt", name: "Toggles", url: "https://toggles.test", articles: [{ id: "art_tt", title: "Toggles", url: "https://toggles.test/a", status: "published", body: BODY }] }] }],
  }))
  browser = await launchChromium()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

const pressed = (page: Page): Promise<Record<string, string | null>> =>
  page.evaluate(() => Object.fromEntries(["Bulleted list", "Numbered list", "Quote"].map((t) => [t, document.querySelector(`[role=toolbar] button[title="${t}"]`)!.getAttribute("aria-pressed")])))

describe("the editor toolbar's list and quote toggles", () => {
  it("should say with aria-pressed whether the caret is in a bulleted list, a numbered list or a quote, and follow a toggle", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    await page.goto(`${server.url}/`)
    await page.fill("#email", EMAIL)
    await page.fill("#password", PASSWORD)
    await Promise.all([page.waitForURL(`${server.url}/sites`), page.click("button[type=submit]")])
    await page.goto(`${server.url}/articles/art_tt`)
    await page.waitForSelector(".editor-content")

    await page.click(".editor-content p >> nth=0")
    await expect.poll(() => pressed(page)).toEqual({ "Bulleted list": "false", "Numbered list": "false", Quote: "false" })
    await page.click(".editor-content ul li")
    await expect.poll(() => pressed(page)).toEqual({ "Bulleted list": "true", "Numbered list": "false", Quote: "false" })
    await page.click(".editor-content ol li")
    await expect.poll(() => pressed(page)).toEqual({ "Bulleted list": "false", "Numbered list": "true", Quote: "false" })
    await page.click(".editor-content blockquote p")
    await expect.poll(() => pressed(page)).toEqual({ "Bulleted list": "false", "Numbered list": "false", Quote: "true" })
    // Pressed again, the quote goes, and so does the button's pressed state.
    await page.click("[role=toolbar] button[title=Quote]")
    expect(await page.inputValue("#body")).not.toContain("<blockquote>")
    await expect.poll(() => pressed(page)).toEqual({ "Bulleted list": "false", "Numbered list": "false", Quote: "false" })
    await context.close()
  }, 60_000)
})
