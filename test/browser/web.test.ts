/**
 * The web pages in real Chromium (the Chromium `npm ci` installs, driven by playwright-core): sign in, open an
 * article, edit it, see the revision, view a diff, restore, get a protected-link refusal with the
 * text kept, create an API key and use it, revoke it, and find the calls in the activity log.
 * axe-core runs on every page; screenshots go to test-artifacts/screenshots/.
 */
import { ArticleWriter, importData } from "@content-site/core"
import { Effect } from "effect"
import { mkdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Browser, Page } from "playwright-core"
import { launchChromium, seriousViolations, signedInContext } from "../support/browser.ts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type StartedServer, startServer } from "../../apps/server/server.ts"
import { WEB_EMAIL, WEB_PASSWORD, webFixture } from "./fixture.ts"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const shots = join(root, "test-artifacts", "screenshots")

let server: StartedServer
let browser: Browser

/** Checks accessibility and saves a full-page screenshot. */
const check = async (page: Page, name: string): Promise<void> => {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true })
  expect(await seriousViolations(page), `axe on ${name}`).toEqual([])
}

beforeAll(async () => {
  mkdirSync(shots, { recursive: true })
  server = await startServer({
    storage: "memory",
    quiet: true,
    env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "true", IMAGE_FETCH_ALLOW_PRIVATE: "false" },
  })
  await server.runtime.runPromise(importData(webFixture))
  browser = await launchChromium()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

describe("web pages in Chromium", () => {
  it("should let a person edit, diff, restore, be refused on a protected link, and manage API keys", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    const cspErrors: Array<string> = []
    page.on("console", (m) => {
      if (m.type() === "error" && /Content Security Policy/i.test(m.text())) cspErrors.push(m.text())
    })
    page.on("dialog", (d) => void d.accept())
    const url = server.url

    // Sign in (a plain form: email, password).
    await page.goto(`${url}/`)
    await check(page, "01-sign-in")
    await page.fill("#email", WEB_EMAIL)
    await page.fill("#password", "wrong password")
    await page.click("button[type=submit]")
    await expect.poll(() => page.textContent("[role=alert]")).toContain("Wrong email or password")
    expect(await page.inputValue("#email")).toBe(WEB_EMAIL)
    await page.fill("#password", WEB_PASSWORD)
    await Promise.all([page.waitForURL(`${url}/sites`), page.click("button[type=submit]")])
    const cookies = await context.cookies()
    const session = cookies.find((c) => c.name === "cs_session")
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax" })
    expect(await page.textContent("main")).toContain("Rose Garden")
    await check(page, "02-sites")

    // The site: articles with filters, backlinks.
    await page.click("text=Open Rose Garden")
    await page.waitForURL(`${url}/sites/site_web`)
    expect(await page.textContent("main")).toContain("Growing roses")
    await check(page, "03-site-articles")
    await page.selectOption("#status", "draft")
    await page.click("text=Apply")
    await page.waitForURL(/status=draft/)
    const titles = await page.locator("tbody tr td:first-child").allTextContents()
    expect(titles.map((t) => t.trim())).toEqual(["Autumn draft"])
    await page.click("a:has-text('Backlinks (')")
    await page.waitForURL(/tab=backlinks/)
    expect(await page.textContent("main")).toContain("news.test")
    await check(page, "04-site-backlinks")

    // The article, its protected blocks marked.
    await page.goto(`${url}/sites/site_web`)
    await Promise.all([page.waitForURL(`${url}/articles/art_roses`), page.click("a:has-text('Growing roses')")])
    const preview = page.frameLocator("iframe.article-preview")
    await expect.poll(() => preview.locator("[data-service-protected]").count()).toBe(2)
    const outline = await preview.locator("[data-service-protected]").first().evaluate((el) => getComputedStyle(el).outlineStyle)
    expect(outline).toBe("dashed")
    expect(await page.textContent("#protected-title")).toContain("Protected links (2)")
    await check(page, "05-article")

    // Edit: the sanitiser removes a script, a new editor revision appears.
    const original = await page.inputValue("#body")
    await page.fill("#title", "Growing roses in November")
    // The visual editor is on; its HTML source mode edits the body as HTML.
    await page.click("button.editor-mode:has-text('HTML source')")
    await page.fill("#body", `${original}<p>Fresh paragraph about mulch.<script>alert(1)</script></p>`)
    await page.fill("#reason", "Add a mulch tip")
    // The first press shows the dry run (what sanitising removes); the second saves.
    await page.click("text=Save as new revision")
    await expect.poll(() => page.locator("#edit-preview").textContent()).toContain("1 × script")
    await Promise.all([page.waitForURL(`${url}/articles/art_roses`), page.click("text=Confirm and save")])
    const saved = await page.textContent("[role=status]")
    expect(saved).toContain("Saved as revision 2")
    expect(saved).toContain("Removed 1 × script")
    expect(await page.textContent("h1")).toBe("Growing roses in November")
    const rev2 = page.locator("#revisions li", { hasText: "Revision 2" })
    expect(await rev2.textContent()).toMatch(/Editor[\s\S]*Current[\s\S]*Wendy Editor[\s\S]*Reason: Add a mulch tip/)
    await check(page, "06-article-saved")

    // Diff revision 1 against the current one.
    await page.click("#revisions a:has-text('Compare revision 1')")
    await page.waitForURL(`${url}/articles/art_roses/revisions/1`)
    expect(await page.locator("table.diff ins").allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining("Fresh paragraph about mulch.")]),
    )
    expect(await page.locator("table.diff del").allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining("Growing roses")]))
    await check(page, "07-diff")

    // Restore revision 1: a new editor revision with restored_from.
    await page.fill("#restore-reason", "Back to the original")
    await Promise.all([page.waitForURL(`${url}/articles/art_roses`), page.click("button:has-text('Restore revision 1')")])
    expect(await page.textContent("[role=status]")).toContain("Restored revision 1 as revision 3")
    expect(await page.textContent("h1")).toBe("Growing roses")
    expect(await page.locator("#revisions li", { hasText: "Revision 3" }).textContent()).toContain("restored from revision 1")

    // Featured image upload (multipart, no JavaScript needed): a new revision, served from /media.
    const pixel = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64")
    await page.setInputFiles("#image", { name: "pixel.png", mimeType: "image/png", buffer: pixel })
    await page.fill("#alt", "A single pixel")
    await Promise.all([page.waitForURL(`${url}/articles/art_roses`), page.click("text=Upload image")])
    expect(await page.textContent("[role=status]")).toContain("Featured image replaced (revision 4)")
    const featured = page.locator("img.featured")
    expect(await featured.getAttribute("alt")).toBe("A single pixel")
    expect(await featured.getAttribute("src")).toMatch(new RegExp(`^${url}/media/`))
    await expect.poll(() => featured.evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBe(1)

    // An edit that drops a protected link is refused, and the typed text stays in the form.
    const typed = "<p>A shorter article without the partner link.</p>"
    await page.fill("#title", "My unsaved title")
    await page.click("button.editor-mode:has-text('HTML source')")
    await page.fill("#body", typed)
    await page.fill("#reason", "trim")
    await page.click("text=Save as new revision")
    await expect.poll(() => page.locator("#edit-preview").textContent()).toContain("saving will be refused")
    // A preview that knows the save will be refused does not invite "Confirm and save".
    expect(await page.locator("form[action$='/edit'] button[type=submit]").textContent()).toBe("Save as new revision")
    expect(await page.locator("#edit-preview").textContent()).not.toContain("Saving makes a new revision")
    // Refused, it says why and nothing else: not what sanitising a save that will not happen would remove.
    expect(await page.locator("#edit-preview").textContent()).not.toContain("sanitiser")
    expect(await page.locator("#edit-preview").textContent()).toContain("Removed: “partner roses”")
    await page.click("text=Save as new revision")
    await page.waitForSelector("#edit-error")
    const refusal = await page.textContent("#edit-error")
    expect(refusal).toContain("Not saved")
    expect(refusal).toContain("Removed")
    expect(refusal).toContain("partner roses")
    expect(refusal).toContain("https://partner.test/roses")
    expect(await page.inputValue("#body")).toBe(typed)
    expect(await page.inputValue("#title")).toBe("My unsaved title")
    expect(await page.inputValue("#reason")).toBe("trim")
    await check(page, "08-article-refused")

    // A restore that would drop a protected link the platform added since is refused, clearly.
    await server.runtime.runPromise(
      ArticleWriter.use((w) =>
        w.change("acc_web", "art_tulips", { day: new Date().toISOString().slice(0, 10), limit: 1000, retryAfterSeconds: 60 }, (current) =>
          Effect.succeed({
            title: current.title,
            body: '<p>Tulips are easy. <a href="https://bulbs.test/" data-service-protected="backlink">bulb partner</a></p>',
            word_count: 5,
            featured_image: current.featured_image,
            updated_at: new Date().toISOString(),
            revision: { id: "rev_browser_rewrite", origin: "rewrite" as const, reason: "Inserted backlink", actor: { type: "system" as const, id: "rewrite", name: "Rewrite job" }, restored_from: null, created_at: new Date().toISOString() },
            activity: null,
          }),
        ),
      ),
    )
    await page.goto(`${url}/articles/art_tulips/revisions/1`)
    await page.click("button:has-text('Restore revision 1')")
    await page.waitForSelector("text=Not restored.")
    expect(await page.textContent("[role=alert]")).toContain("bulb partner")
    await check(page, "09-restore-refused")

    // Connect Site: create a write key, use it, revoke it.
    await page.goto(`${url}/connect`)
    expect(await page.textContent("#mcp-url")).toBe(`${url}/mcp`)
    await check(page, "10-connect")
    await page.fill("#key-name", "Browser test key")
    await page.check("input[name=scope][value=write]")
    await page.click("text=Create key")
    await page.waitForSelector("#new-key-value")
    const key = (await page.textContent("#new-key-value"))!.trim()
    expect(key).toMatch(/^cs_[A-Za-z0-9]{32,}$/)
    expect(await page.textContent("#curl-example")).toContain(`curl -H "Authorization: Bearer ${key}" ${url}/api/v1/sites`)
    expect(await page.isVisible("button[data-copy=new-key-value]")).toBe(true)
    await check(page, "11-connect-key-created")
    const withKey = await fetch(`${url}/api/v1/sites`, { headers: { Authorization: `Bearer ${key}` } })
    expect(withKey.status).toBe(200)
    expect(((await withKey.json()) as { data: Array<{ id: string }> }).data.map((s) => s.id)).toEqual(["site_web"])
    await page.goto(`${url}/connect`)
    expect(await page.content()).not.toContain(key)
    await Promise.all([
      page.waitForURL(`${url}/connect`),
      page.locator("tr", { hasText: "Browser test key" }).locator("button:has-text('Revoke')").click(),
    ])
    expect(await page.textContent("[role=status]")).toContain("Revoked the key “Browser test key”")
    const revoked = await fetch(`${url}/api/v1/sites`, { headers: { Authorization: `Bearer ${key}` } })
    expect(revoked.status).toBe(401)
    expect(((await revoked.json()) as { code: string }).code).toBe("unauthenticated")

    // The activity log: the API call, and the refused web edit under "Refused or failed".
    await page.goto(`${url}/activity?channel=api`)
    const apiRows = await page.locator("tbody tr").allTextContents()
    expect(apiRows.some((r) => r.includes("GET /api/v1/sites") && r.includes("200"))).toBe(true)
    await check(page, "12-activity-api")
    await page.goto(`${url}/activity`)
    await page.selectOption("#status", "error")
    await page.click("text=Apply")
    await page.waitForURL(/status=error/)
    const errorRows = await page.locator("tbody tr").allTextContents()
    expect(errorRows.some((r) => r.includes("POST /articles/{id}/edit") && r.includes("protected_link_changed"))).toBe(true)
    expect(errorRows.every((r) => !r.includes("GET /api/v1/sites"))).toBe(true)
    await check(page, "13-activity-errors")

    // The article's own activity log lists the web edits.
    await page.goto(`${url}/articles/art_roses`)
    const articleActivity = await page.locator("#activity tbody tr").allTextContents()
    expect(articleActivity.some((r) => r.includes("POST /articles/{id}/edit") && r.includes("422"))).toBe(true)
    expect(articleActivity.some((r) => r.includes("POST /articles/{id}/revisions/{number}/restore") && r.includes("200"))).toBe(true)

    // Narrow screens get the same pages, readable.
    await page.setViewportSize({ width: 390, height: 844 })
    await page.goto(`${url}/articles/art_roses`)
    await check(page, "14-article-mobile")

    // Sign out ends the session.
    await Promise.all([page.waitForURL(/\/\?signed_out=1$/), page.click("text=Sign out")])
    await page.goto(`${url}/sites`)
    expect(page.url()).toContain("/?next=%2Fsites")
    expect(cspErrors).toEqual([])
    await context.close()
  }, 180_000)

  it("should work with JavaScript turned off: sign in, edit, restore, create a key", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false })
    const page = await context.newPage()
    const url = server.url
    await page.goto(`${url}/`)
    await page.fill("#email", WEB_EMAIL)
    await page.fill("#password", WEB_PASSWORD)
    await Promise.all([page.waitForURL(`${url}/sites`), page.click("button[type=submit]")])
    await page.goto(`${url}/articles/art_draft`)
    await page.fill("#title", "Autumn draft, no script")
    await Promise.all([page.waitForURL(`${url}/articles/art_draft`), page.click("text=Save as new revision")])
    expect(await page.textContent("[role=status]")).toMatch(/Saved as revision \d+/)
    await page.click("#revisions a:has-text('Compare revision 1')")
    // Without script, a confirmation page asks before the restore is done.
    await page.click("button:has-text('Restore revision 1')")
    await page.waitForSelector("#confirm-title")
    await Promise.all([page.waitForURL(`${url}/articles/art_draft`), page.click("button:has-text('Restore revision 1')")])
    expect(await page.textContent("h1")).toBe("Autumn draft")
    await page.goto(`${url}/connect`)
    await page.fill("#key-name", "No-JS key")
    await page.click("text=Create key")
    expect(await page.textContent("#new-key-value")).toMatch(/^cs_/)
    // The copy button is an enhancement: hidden when there is no script to run it.
    expect(await page.isVisible("button[data-copy=new-key-value]")).toBe(false)
    await context.close()
  }, 60_000)

  it("should search from the sites page at 390 px without JavaScript, the matches marked, nothing wider than the screen", async () => {
    const { context, page } = await signedInContext(browser, server.url, { email: WEB_EMAIL, password: WEB_PASSWORD }, { width: 390, height: 844, javaScript: false })
    await page.fill("#search-q", "TULIPS")
    await Promise.all([page.waitForURL(/\/search\?q=TULIPS/), page.click("form[role=search] button[type=submit]")])
    expect(await page.textContent("#results-title")).toMatch(/article/)
    expect(await page.locator(".result a[href='/articles/art_tulips']").count()).toBe(1)
    expect((await page.locator(".snippet mark").allTextContents()).map((t) => t.toLowerCase())).toContain("tulips")
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    // (axe needs script: the other cases run it on the pages that share this layout)
    await page.screenshot({ path: join(shots, "16-search-390.png"), fullPage: true })
    await context.close()
  }, 60_000)

  it("should sign in with the demo credentials the server prints", async () => {
    if (server.demo === null) throw new Error("SEED_DEMO=true should have seeded the demo account")
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${server.url}/`)
    await page.fill("#email", server.demo.email)
    await page.fill("#password", server.demo.password)
    await Promise.all([page.waitForURL(`${server.url}/sites`), page.click("button[type=submit]")])
    expect(await page.locator(".grid .card").count()).toBeGreaterThan(0)
    await check(page, "15-demo-sites")
    await context.close()
  }, 60_000)
})
