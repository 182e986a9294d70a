/**
 * Pasting into the article editor in Chromium keeps the bold and italic a word processor says with
 * a span's style only (Google Docs, Word online): the styles go, the formatting stays as
 * `<strong>` and `<em>`; a heading a web page's copy styles as bold gets no `<strong>`.
 */
import { importData } from "@content-site/core"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type StartedServer, startServer } from "../../apps/server/server.ts"
import { launchChromium } from "../support/browser.ts"

const EMAIL = "paste-format@example.com"
const PASSWORD = "paste format password"

let server: StartedServer
let browser: Browser

beforeAll(async () => {
  server = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false" } })
  await server.runtime.runPromise(importData({
    accounts: [{ id: "acc_pf", email: EMAIL, password: PASSWORD, sites: [{ id: "site_pf", name: "Paste", url: "https://paste.test", articles: [{ id: "art_pf", title: "Paste", url: "https://paste.test/a", status: "published", body: "<p>Start here.</p>" }] }] }],
  }))
  browser = await launchChromium()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

const paste = (page: Page, html: string): Promise<void> =>
  page.evaluate((html) => {
    const data = new DataTransfer()
    data.setData("text/html", html)
    data.setData("text/plain", "pasted")
    document.querySelector(".editor-content")!.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }))
  }, html)

describe("pasting formatted text into the editor", () => {
  it("should keep a Google Docs copy's bold and italic spans as strong and em, and not bolden a styled heading", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    await page.goto(`${server.url}/`)
    await page.fill("#email", EMAIL)
    await page.fill("#password", PASSWORD)
    await Promise.all([page.waitForURL(`${server.url}/sites`), page.click("button[type=submit]")])
    await page.goto(`${server.url}/articles/art_pf`)
    await page.waitForSelector(".editor-content")
    await page.focus(".editor-content")
    await page.keyboard.press("Control+End")
    await paste(
      page,
      '<meta charset="utf-8"><b style="font-weight:normal;" id="docs-internal-guid-0a1b"><p dir="ltr"><span style="font-weight:400;">Plain words </span><span style="font-size:11pt;font-weight:700;">bold words</span></p>' +
        '<p dir="ltr"><span style="font-style:italic;font-weight:400">italic words</span></p></b><h2 style="font-weight: 700">A heading</h2>',
    )
    await expect.poll(() => page.inputValue("#body")).toContain("A heading")
    const html = await page.inputValue("#body")
    expect(html).not.toContain("style=")
    expect(html).toMatch(/<strong>(<span>)?bold words(<\/span>)?<\/strong>/)
    expect(html).toMatch(/<em>(<span>)?italic words(<\/span>)?<\/em>/)
    expect(html).not.toMatch(/<strong>(<span>)?Plain words/)
    expect(html).toContain("<h2>A heading</h2>")
    await context.close()
  }, 60_000)
})
