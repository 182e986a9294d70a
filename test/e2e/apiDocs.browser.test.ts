import { launchChromium, seriousViolations } from "../support/browser.ts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "./helpers.ts"

// The reference page needs no database: memory storage keeps this file fast.
let t: TestServer
beforeAll(async () => {
  t = await startTestServer({}, { storage: "memory", seed: false })
})
afterAll(async () => {
  await t?.close()
})

describe("/api/docs in a browser", () => {
  it("should render every operation from local assets without a CSP violation or script error", async () => {
    const browser = await launchChromium()
    try {
      const page = await browser.newPage()
      const problems: Array<string> = []
      const external: Array<string> = []
      page.on("console", (m) => {
        if (m.type() === "error") problems.push(m.text())
      })
      page.on("pageerror", (e) => problems.push(String(e)))
      page.on("request", (r) => {
        if (!r.url().startsWith(t.url) && !r.url().startsWith("data:")) external.push(r.url())
      })
      await page.goto(`${t.url}/api/docs`)
      await page.waitForSelector(".opblock", { timeout: 20_000 })
      // One block per operation the published OpenAPI document lists, however many there are.
      const doc = (await (await fetch(`${t.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> }
      const methods = new Set(["get", "put", "post", "patch", "delete"])
      const operations = Object.values(doc.paths).flatMap((item) => Object.keys(item).filter((k) => methods.has(k)))
      expect(operations.length).toBeGreaterThanOrEqual(13)
      expect(await page.locator(".opblock").count()).toBe(operations.length)
      expect(problems).toEqual([])
      expect(external).toEqual([])
      // The renderer is themed and configured until axe finds nothing serious, folded and open.
      expect(await seriousViolations(page)).toEqual([])
      await page.locator(".opblock-summary-control").first().click()
      await page.waitForSelector(".opblock-body")
      expect(await page.getAttribute("#servers", "aria-label")).toBe("Server")
      expect(await seriousViolations(page)).toEqual([])
    } finally {
      await browser.close()
    }
  })
})
