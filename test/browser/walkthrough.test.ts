/**
 * The site owner's walk-through, point by point, in real Chromium at 1280 px and 390 px (and
 * without JavaScript where a point applies): the editor reopens in the mode it was in, Copy works
 * from the visual editor, an unloadable preview says why, revision labels, the activity log's
 * words, Connect Site's buttons and ids, the article page's order, the preview frame's focus,
 * the spaces around protected links, a page past the end, the phone's filters and lock message,
 * the agent sign-in pages' header. Screenshots go to test-artifacts/screenshots/walk-*.png.
 */
import { importData, updateArticle } from "@content-site/core"
import { mkdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type StartedServer, startServer } from "../../apps/server/server.ts"
import { launchChromium, signedInContext } from "../support/browser.ts"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const shots = join(root, "test-artifacts", "screenshots")

const OWNER = { email: "walker@example.com", password: "walker password 1" }
const WRITE_KEY = "cs_WalkerWriteKey0123456789abcdefghijklmnop"
const READ_KEY = "cs_WalkerReadKey0123456789abcdefghijklmnopq"
const LINK = '<a href="https://partner.test/walk" data-service-protected="backlink">partner walk</a>'
const BODY = `<p>Before the ${LINK} and after it.</p><p>Second paragraph.</p>`
const SIZES = [
  { name: "desktop", width: 1280, height: 900 },
  { name: "phone", width: 390, height: 844 },
] as const

let server: StartedServer
let browser: Browser

beforeAll(async () => {
  mkdirSync(shots, { recursive: true })
  server = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false" } })
  await server.runtime.runPromise(
    importData({
      accounts: [
        {
          id: "acc_walk",
          email: OWNER.email,
          password: OWNER.password,
          name: "Wally Walker",
          api_keys: [
            { id: "key_walk_w", name: "Nightly script", key: WRITE_KEY, scope: "write" },
            { id: "key_walk_r", name: "Dashboard", key: READ_KEY, scope: "read-only" },
          ],
          sites: [
            {
              id: "site_walk",
              name: "Walk Garden",
              url: "https://walk.test",
              articles: [
                { id: "art_walk", title: "A walk", url: "https://walk.test/a", status: "published", published_at: "2026-10-01T09:00:00Z", "target keyword": "walk", body: BODY },
                { id: "art_labels", title: "Labels", url: "https://walk.test/labels", status: "published", published_at: "2026-10-02T09:00:00Z", "target keyword": "labels", body: "<p>One.</p>" },
              ],
              backlinks: [],
            },
          ],
        },
      ],
    }),
  )
  // Revisions by each kind of writer: a key over REST, an agent over MCP, and a new featured image.
  const rest = (path: string, init: RequestInit, key = WRITE_KEY) =>
    fetch(`${server.url}/api/v1${path}`, { ...init, headers: { Authorization: `Bearer ${key}`, ...(init.headers ?? {}) } })
  expect((await rest("/articles/art_labels", { method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ title: "Labels by key" }) })).status).toBe(200)
  await server.runtime.runPromise(
    updateArticle(
      { accountId: "acc_walk", actor: { type: "oauth_client", id: "client_walk", name: "Claude" }, scope: "write", channel: "mcp", requestId: "req_walk_mcp", action: "update_article", startedAt: Date.now() },
      "art_labels",
      { title: "Labels by agent" },
      { dryRun: false },
    ),
  )
  const form = new FormData()
  const pixel = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64")
  form.append("image", new Blob([pixel], { type: "image/png" }), "pixel.png")
  expect((await rest("/articles/art_labels/featured-image", { method: "POST", body: form })).status).toBe(200)
  // A read-only key trying to write: refused for its scope.
  expect((await rest("/articles/art_labels", { method: "PUT", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ title: "x" }) }, READ_KEY)).status).toBe(403)
  browser = await launchChromium()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

const signedIn = (size: { width: number; height: number }, javaScript = true): Promise<{ context: BrowserContext; page: Page }> =>
  signedInContext(browser, server.url, OWNER, { ...size, javaScript })

const noWiderThan = async (page: Page, width: number): Promise<void> => {
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width)
}

describe("the walk-through's points in Chromium", () => {
  for (const size of SIZES) {
    it(`should reopen a refused save in HTML source, and open the source when Copy is pressed in the visual editor (${size.name})`, async () => {
      const { context, page } = await signedIn(size)
      await page.goto(`${server.url}/articles/art_walk`)
      await page.waitForSelector("html.editor-ready")
      await page.click("button.editor-mode:has-text('HTML source')")
      await page.fill("#body", "<p>The link is gone.</p>")
      await page.click("text=Save as new revision")
      await expect.poll(() => page.locator("#edit-preview").textContent()).toContain("saving will be refused")
      await Promise.all([page.waitForURL(/draft=/), page.click("text=Save as new revision")])
      await page.waitForSelector("html.editor-ready")
      // Source stays source: the textarea is shown with the person's HTML, the visual surface hidden.
      expect(await page.getAttribute("button.editor-mode:has-text('HTML source')", "aria-pressed")).toBe("true")
      expect(await page.isVisible("#body")).toBe(true)
      expect(await page.inputValue("#body")).toBe("<p>The link is gone.</p>")
      expect(await page.locator("#edit-error").textContent()).toContain("Your text is kept below: check it and save again.")
      expect((await page.locator("#edit-error").textContent())!.split("kept below").length - 1).toBe(1)
      // In the visual editor, Copy opens the HTML source to paste the link's HTML into.
      await page.click("button.editor-mode:has-text('Visual')")
      await page.click("#edit-error [data-copy='keep-1']")
      expect(await page.getAttribute("button.editor-mode:has-text('HTML source')", "aria-pressed")).toBe("true")
      expect(await page.textContent(".editor-notice")).toContain("paste it where the link belongs")
      await page.screenshot({ path: join(shots, `walk-01-refused-source-${size.name}.png`), fullPage: true })
      await noWiderThan(page, size.width)
      await context.close()
    })

    it(`should say why a preview could not be had, and claim nothing about the text (${size.name})`, async () => {
      const { context, page } = await signedIn(size)
      await page.goto(`${server.url}/articles/art_walk`)
      await page.waitForSelector("html.editor-ready")
      await page.route("**/articles/art_walk/preview", (route) => route.abort("internetdisconnected"))
      await page.click("text=Save as new revision")
      await expect.poll(() => page.locator("#edit-preview").textContent()).toContain("No preview: the network did not answer")
      expect(await page.locator("#edit-preview").textContent()).not.toContain("Protected links")
      await page.unroute("**/articles/art_walk/preview")
      // Signed out in another tab: the preview says so.
      await context.clearCookies()
      await page.fill("#reason", "after sign-out")
      await page.click("text=Save as new revision")
      await expect.poll(() => page.locator("#edit-preview").textContent()).toContain("you are signed out")
      await context.close()
    })

    it(`should open the article page with the editor first and the reader's view below it, its frame showing focus (${size.name})`, async () => {
      const { context, page } = await signedIn(size)
      await page.goto(`${server.url}/articles/art_walk`)
      const edit = await page.locator("#edit").boundingBox()
      const preview = await page.locator("iframe.article-preview").boundingBox()
      expect(edit!.y).toBeLessThan(preview!.y)
      expect(edit!.y).toBeLessThan(size.height)
      // The keyboard's focus on a link inside the frame: the frame's own document rings its edge
      // (the page's :focus-within does not see into the frame).
      await page.focus("iframe.article-preview")
      await page.keyboard.press("Tab")
      const inside = page.frameLocator("iframe.article-preview")
      expect(await inside.locator("[data-service-protected]").first().evaluate((el) => el === document.activeElement)).toBe(true)
      expect(await inside.locator("html").evaluate((el) => getComputedStyle(el, "::after").borderTopStyle)).toBe("solid")
      // The dashed outline keeps the spaces either side of a protected link.
      const margin = await page.frameLocator("iframe.article-preview").locator("[data-service-protected]").evaluate((el) => getComputedStyle(el).marginLeft)
      expect(margin).toBe("4px")
      await context.close()
    })

    it(`should label revisions by who made them and what changed (${size.name})`, async () => {
      const { context, page } = await signedIn(size)
      await page.goto(`${server.url}/articles/art_labels`)
      const item = (n: number) => page.locator("#revisions li", { hasText: `Revision ${n}` }).first()
      expect(await item(1).locator(".tag").allTextContents()).toEqual(["Imported"])
      expect(await item(2).textContent()).toContain("API key “Nightly script”")
      expect(await item(3).locator(".tag").allTextContents()).toEqual(["Agent (MCP)"])
      expect(await item(3).textContent()).toContain("agent “Claude”")
      expect(await item(4).textContent()).toContain("featured image changed")
      expect(await item(3).textContent()).not.toContain("featured image changed")
      await noWiderThan(page, size.width)
      await context.close()
    })

    it(`should read the activity log's refusal for scope as read-only, with the To field whole (${size.name})`, async () => {
      const { context, page } = await signedIn(size)
      await page.goto(`${server.url}/activity?status=error`)
      expect(await page.locator("table.activity").textContent()).toContain("Refused: the key is read-only")
      const to = await page.locator("#to").boundingBox()
      const from = await page.locator("#from").boundingBox()
      expect(to!.width).toBeGreaterThanOrEqual(from!.width - 1)
      await page.fill("#from", "2026-11-20")
      await page.fill("#to", "2026-11-01")
      await Promise.all([page.waitForURL(/from=/), page.click("text=Apply")])
      expect(await page.textContent("[role=alert]")).toContain("From must not be after To.")
      await noWiderThan(page, size.width)
      await context.close()
    })

    it(`should show the owner a failed sign-in on their email and name the key an entry is about (${size.name})`, async () => {
      const context = await browser.newContext({ viewport: { width: size.width, height: size.height } })
      const page = await context.newPage()
      await page.goto(`${server.url}/`)
      await page.fill("#email", OWNER.email)
      await page.fill("#password", "a wrong guess")
      page.setDefaultTimeout(8_000)
      await page.click("button[type=submit]")
      await page.waitForSelector("[role=alert]")
      await page.fill("#password", OWNER.password)
      await Promise.all([page.waitForURL(`${server.url}/sites`), page.click("button[type=submit]")])
      await page.goto(`${server.url}/connect`)
      await page.fill("#key-name", `Key made on the ${size.name}`)
      await Promise.all([page.waitForURL(/created=/), page.click("text=Create key")])
      await page.goto(`${server.url}/activity`)
      const log = await page.locator("table.activity").textContent()
      expect(log).toContain(`Created an API key: “Key made on the ${size.name}”`)
      expect(log).toContain("Sign-in with your email and a wrong password")
      expect(log).toContain("Refused: wrong password")
      expect(log).not.toContain("a wrong guess")
      await noWiderThan(page, size.width)
      await page.screenshot({ path: join(shots, `walk-03-activity-${size.name}.png`), fullPage: true })
      await context.close()
    })

    it(`should say that a page past the end is past the end (${size.name})`, async () => {
      const { context, page } = await signedIn(size)
      await page.goto(`${server.url}/sites/site_walk?page=9`)
      expect(await page.textContent("p.empty")).toContain("Page 9 is past the end: there is only 1 page.")
      await Promise.all([page.waitForURL(/page=1/), page.click("text=Go to page 1")])
      expect(await page.locator("table.stacked tbody tr").count()).toBe(2)
      await context.close()
    })
  }

  for (const width of [1024, 1280, 1440]) {
    it(`should keep Connect Site's buttons and key ids whole at ${width} px`, async () => {
      const { context, page } = await signedIn({ width, height: 900 })
      await page.goto(`${server.url}/connect`)
      for (const selector of ["form[action$='/revoke'] button", "code.key-id"]) {
        const lines = await page.locator(selector).evaluateAll((els) =>
          els.map((el) => Math.round(el.getBoundingClientRect().height / parseFloat(getComputedStyle(el).lineHeight || "20"))),
        )
        expect(lines.length).toBeGreaterThan(0)
        for (const n of lines) expect(n, selector).toBeLessThanOrEqual(1)
      }
      await context.close()
    })
  }

  it("should show a protected link's lock message under the editor on a phone, not over the fields below", async () => {
    const { context, page } = await signedIn({ width: 390, height: 844 })
    await page.goto(`${server.url}/articles/art_walk`)
    await page.waitForSelector("html.editor-ready")
    await page.locator(".editor-content .pm-protected").first().click()
    await page.keyboard.press("Backspace")
    await page.locator("#lock-message").waitFor({ state: "visible" })
    expect(await page.locator("#lock-message").evaluate((el) => getComputedStyle(el).position)).toBe("static")
    const message = await page.locator("#lock-message").boundingBox()
    const reason = await page.locator("label[for=reason]").boundingBox()
    expect(message!.y + message!.height).toBeLessThanOrEqual(reason!.y)
    await page.screenshot({ path: join(shots, "walk-02-lock-phone.png"), fullPage: true })
    await context.close()
  })

  it("should serve the past-the-end message and the revision labels without JavaScript too", async () => {
    const { context, page } = await signedIn({ width: 390, height: 844 }, false)
    await page.goto(`${server.url}/sites/site_walk?page=3`)
    expect(await page.textContent("p.empty")).toContain("Page 3 is past the end")
    await page.goto(`${server.url}/articles/art_labels`)
    expect(await page.locator("#revisions li", { hasText: "Revision 3" }).first().locator(".tag").allTextContents()).toEqual(["Agent (MCP)"])
    await context.close()
  })
})
