/**
 * Names people give, on the pages in Chromium:
 * - at 320 px wide (or 200 % zoom of 640 px), names of 100 to 200 characters with no spaces run
 *   nothing off the screen, and the Sign out button stays reachable;
 * - a Hebrew or Arabic site name, article title or key name reads right to left (its trailing
 *   punctuation at its end, on the left), isolated from the English around it.
 * One server and one browser for both; each case signs in in a context of its own.
 */
import { importData } from "@content-site/core"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type StartedServer, startServer } from "../../apps/server/server.ts"
import { launchChromium, signedInContext } from "../support/browser.ts"

const LONG = "W".repeat(200)
const SITE = "מאפיית הנמל!"
const TITLE = "مرحبا بالعالم؟"
const KEY = "مفتاح التقارير!"
let server: StartedServer
let browser: Browser

beforeAll(async () => {
  server = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false" } })
  await server.runtime.runPromise(
    importData({
      accounts: [{
        id: "acc_long", email: "long@example.com", password: "password-long", name: LONG.slice(0, 100),
        sites: [{ id: "site_long", name: LONG, url: "https://long.test", articles: [
          { id: "art_long", title: LONG, url: "https://long.test/a", status: "published", published_at: "2026-11-01T09:00:00Z", "target keyword": "k", body: "<p>x</p>" },
        ] }],
      }, {
        id: "acc_rtl", email: "rtl@example.com", password: "password-rtl", name: "Rtl",
        api_keys: [{ id: "key_rtl", name: KEY, key: "cs_test_rtl_known_plaintext_0123456789abcdef", scope: "read-only" }],
        sites: [{ id: "site_rtl", name: SITE, url: "https://rtl.test", articles: [
          { id: "art_rtl", title: TITLE, url: "https://rtl.test/a", status: "published", published_at: "2026-11-01T09:00:00Z", "target keyword": "k", body: "<p>مرحبا</p>" },
        ] }],
      }],
    }),
  )
  browser = await launchChromium()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

/** How far the page runs past the viewport's right edge (0 when nothing is cut off). */
const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)

describe("long names at 320 px", () => {
  it("should wrap a long account name in the header, keeping Sign out on screen", async () => {
    const { context, page } = await signedInContext(browser, server.url, { email: "long@example.com", password: "password-long" }, { width: 320, height: 700 })
    try {
      await page.goto(`${server.url}/connect`)
      expect(await overflow(page)).toBe(0)
      const box = (await page.locator(".signout button").boundingBox())!
      expect(box.x + box.width).toBeLessThanOrEqual(320)
    } finally {
      await context.close()
    }
  })

  it("should wrap a long site name in the sites list's Open button", async () => {
    const { context, page } = await signedInContext(browser, server.url, { email: "long@example.com", password: "password-long" }, { width: 320, height: 700 })
    try {
      await page.goto(`${server.url}/sites`)
      const card = (await page.locator("section.card", { has: page.locator("#site-site_long") }).boundingBox())!
      const open = (await page.locator("#site-site_long ~ p a.button").boundingBox())!
      expect(open.x + open.width).toBeLessThanOrEqual(card.x + card.width)
    } finally {
      await context.close()
    }
  })
})

describe("the sites list at 320 px", () => {
  it("should fit its site cards in the screen (the grid's column is never wider than the page)", async () => {
    const { context, page } = await signedInContext(browser, server.url, { email: "long@example.com", password: "password-long" }, { width: 320, height: 700 })
    try {
      await page.goto(`${server.url}/sites`)
      expect(await overflow(page)).toBe(0)
    } finally {
      await context.close()
    }
  })
})

/** The directions in which the innermost elements holding exactly `text` are laid out. */
const directionsOf = (page: Page, text: string) =>
  page.evaluate((t) => Array.from(document.querySelectorAll("main *"))
    .filter((el) => el.textContent?.trim() === t && Array.from(el.children).every((c) => c.textContent?.trim() !== t))
    .map((el) => getComputedStyle(el).direction), text)

describe("right-to-left names", () => {
  it("should lay out an RTL site name and article title right to left on the sites list, a site's page and a search", async () => {
    const { context, page } = await signedInContext(browser, server.url, { email: "rtl@example.com", password: "password-rtl" }, { width: 1024, height: 800 })
    try {
      for (const [path, texts] of [["/sites", [SITE]], ["/sites/site_rtl", [SITE, TITLE]], ["/search?q=%D9%85%D8%B1%D8%AD%D8%A8%D8%A7&site_id=site_rtl", [SITE, TITLE]], ["/articles/art_rtl/revisions/1", [TITLE]]] as const) {
        await page.goto(`${server.url}${path}`)
        for (const text of texts) {
          const directions = await directionsOf(page, text)
          expect(directions.length, `${text} on ${path}`).toBeGreaterThan(0)
          expect(directions, `${text} on ${path}`).toEqual(directions.map(() => "rtl"))
        }
      }
    } finally {
      await context.close()
    }
  })

  it("should lay out an RTL key name on Connect Site and an RTL article title in the activity log right to left", async () => {
    const read = await fetch(`${server.url}/api/v1/articles/art_rtl`, { headers: { Authorization: "Bearer cs_test_rtl_known_plaintext_0123456789abcdef" } })
    expect(read.status).toBe(200)
    const { context, page } = await signedInContext(browser, server.url, { email: "rtl@example.com", password: "password-rtl" }, { width: 1024, height: 800 })
    try {
      for (const [path, text] of [["/connect", KEY], ["/activity", TITLE]] as const) {
        await page.goto(`${server.url}${path}`)
        const directions = await directionsOf(page, text)
        expect(directions.length, `${text} on ${path}`).toBeGreaterThan(0)
        expect(directions, `${text} on ${path}`).toEqual(directions.map(() => "rtl"))
      }
    } finally {
      await context.close()
    }
  })
})
