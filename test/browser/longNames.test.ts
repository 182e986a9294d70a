/**
 * Pages at 320 px wide (or 200 % zoom of 640 px) with names of 100 to 200 characters and no spaces:
 * nothing runs off the screen, the Sign out button stays reachable.
 */
import { importData } from "@content-site/core"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type StartedServer, startServer } from "../../apps/server/server.ts"
import { launchChromium, signedInContext } from "../support/browser.ts"

const LONG = "W".repeat(200)
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
