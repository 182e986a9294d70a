/**
 * Two editors, one article, in real Chromium: while a person has the article page open, an agent
 * saves over the REST API. A change to another paragraph is merged (both kept, and the page says
 * with which revision by whom); a change to the same paragraph opens the conflict page, where the
 * person's choice is what is saved. With JavaScript (the preview says what saving will do) at
 * 1280 px and 390 px, and without it. Screenshots go to test-artifacts/screenshots/merge-*.png.
 */
import { createApiKey, importData } from "@content-site/core"
import { mkdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type StartedServer, startServer } from "../../apps/server/server.ts"
import { launchChromium, seriousViolations, signedInContext } from "../support/browser.ts"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const shots = join(root, "test-artifacts", "screenshots")

const EMAIL = "merge-tester@example.com"
const PASSWORD = "merge tester password"
const PARTNER = '<a href="https://partner.test/m" data-service-protected="backlink">partner</a>'
const BODY = ["<h2>Intro</h2>", "<p>First paragraph.</p>", `<p>Second paragraph with the ${PARTNER}.</p>`, "<p>Third paragraph.</p>"].join("\n")
const ARTICLES = ["art_js_merge", "art_js_conflict", "art_phone", "art_nojs_merge", "art_nojs_conflict", "art_twice"]

let server: StartedServer
let browser: Browser
let agentKey: string

beforeAll(async () => {
  mkdirSync(shots, { recursive: true })
  server = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false" } })
  await server.runtime.runPromise(
    importData({
      accounts: [
        {
          id: "acc_mg",
          email: EMAIL,
          password: PASSWORD,
          name: "Mia Merge",
          sites: [
            {
              id: "site_mg",
              name: "Merge Garden",
              url: "https://merge.test",
              articles: ARTICLES.map((id, i) => ({ id, title: `Article ${i + 1}`, url: `https://merge.test/${id}`, status: "published", published_at: "2026-09-15T09:00:00Z", "target keyword": "k", body: BODY })),
              backlinks: [],
            },
          ],
        },
      ],
    }),
  )
  agentKey = (await server.runtime.runPromise(createApiKey("acc_mg", { name: "Writer bot", scope: "write" }))).key
  browser = await launchChromium()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

/** The agent's edit over REST, as any client would make it. */
const agentSaves = async (id: string, body: string): Promise<void> => {
  const res = await fetch(`${server.url}/api/v1/articles/${id}`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${agentKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({ body }),
  })
  expect(res.status).toBe(200)
}
const bodyNow = async (id: string): Promise<string> =>
  ((await (await fetch(`${server.url}/api/v1/articles/${id}`, { headers: { Authorization: `Bearer ${agentKey}` } })).json()) as { body: string }).body

const open = async (options: { javaScript: boolean; width: number }, id: string): Promise<{ context: BrowserContext; page: Page }> => {
  const { context, page } = await signedInContext(browser, server.url, { email: EMAIL, password: PASSWORD }, { ...options, height: 900 })
  await page.goto(`${server.url}/articles/${id}`)
  if (options.javaScript) {
    await page.waitForSelector("html.editor-ready")
    await page.click("button.editor-mode:has-text('HTML source')")
  }
  return { context, page }
}

const replace = (from: string, to: string) => BODY.replace(from, to)

describe("two editors, one article, in Chromium", () => {
  it("should merge an agent's change to another paragraph with the person's, say so in the preview and after saving (1280 px)", async () => {
    const { context, page } = await open({ javaScript: true, width: 1280 }, "art_js_merge")
    await agentSaves("art_js_merge", replace("Third paragraph.", "Third paragraph, improved by the agent."))
    await page.fill("#body", replace("First paragraph.", "First paragraph, rewritten by Mia."))
    await page.click("text=Save as new revision")
    const preview = page.locator("#edit-preview")
    await expect.poll(() => preview.textContent()).toContain("Someone saved revision 2 by Writer bot (API) since you opened this page. Saving merges your changes with theirs (1 of their changes kept).")
    expect(await preview.textContent()).not.toContain("Nothing changed")
    await page.locator("#edit").screenshot({ path: join(shots, "merge-01-preview.png") })
    await Promise.all([page.waitForURL(`${server.url}/articles/art_js_merge`), page.click("text=Confirm and save")])
    const status = await page.textContent("[role=status]")
    expect(status).toContain("Saved as revision 3. Merged with revision 2 by Writer bot (API): 1 of their changes kept beside yours.")
    expect(await page.getAttribute("a:has-text('See revision 2')", "href")).toBe("/articles/art_js_merge/revisions/2")
    const saved = await bodyNow("art_js_merge")
    expect(saved).toContain("First paragraph, rewritten by Mia.")
    expect(saved).toContain("Third paragraph, improved by the agent.")
    expect(saved).toContain(PARTNER)
    await context.close()
  })

  it("should open the conflict page for the same paragraph changed differently, and save what the person chose (1280 px)", async () => {
    const { context, page } = await open({ javaScript: true, width: 1280 }, "art_js_conflict")
    await agentSaves("art_js_conflict", replace("First paragraph.", "First paragraph, the agent's way."))
    await page.fill("#body", replace("First paragraph.", "First paragraph, Mia's way."))
    await page.click("text=Save as new revision")
    const preview = page.locator("#edit-preview")
    await expect.poll(() => preview.textContent()).toContain("changed a part you changed too. Saving opens a page where you see their version beside yours and choose")
    expect(await preview.textContent()).not.toContain("Protected links")
    await Promise.all([page.waitForURL(/\/articles\/art_js_conflict\/merge\?draft=/), page.click("text=Continue to compare")])
    expect(await page.textContent("h1")).toBe("Your edit and revision 2 changed the same parts")
    expect(await page.textContent("fieldset.merge-unit")).toContain("Their version (revision 2, by Writer bot (API))")
    expect(await page.locator("fieldset.merge-unit ins").allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining("Mia")]))
    expect(await seriousViolations(page)).toEqual([])
    await page.screenshot({ path: join(shots, "merge-02-conflict.png"), fullPage: true })
    // Saving without a choice is refused by the browser (a required choice): nothing is sent.
    await page.click("text=Save with these choices")
    expect(page.url()).toMatch(/\/merge\?draft=/)
    await page.check("input[value=mine]")
    await Promise.all([page.waitForURL(`${server.url}/articles/art_js_conflict`), page.click("text=Save with these choices")])
    expect(await page.textContent("[role=status]")).toContain("You settled the conflicting part.")
    const saved = await bodyNow("art_js_conflict")
    expect(saved).toContain("First paragraph, Mia's way.")
    expect(saved).not.toContain("the agent's way")
    await context.close()
  })

  it("should show the conflict page whole at 390 px, nothing wider than the screen, and keep an edited text", async () => {
    const { context, page } = await open({ javaScript: true, width: 390 }, "art_phone")
    await agentSaves("art_phone", replace("Third paragraph.", "Third, by the agent."))
    await page.fill("#body", replace("Third paragraph.", "Third, by Mia."))
    await page.click("text=Save as new revision")
    await expect.poll(() => page.locator("#edit-preview").textContent()).toContain("changed a part you changed too")
    await Promise.all([page.waitForURL(/\/merge\?draft=/), page.click("text=Continue to compare")])
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    await page.screenshot({ path: join(shots, "merge-03-conflict-390.png"), fullPage: true })
    await page.check("input[value=edit]")
    await page.fill("textarea[name=edit_body_3]", "<p>Third, by both of us.</p>")
    await Promise.all([page.waitForURL(`${server.url}/articles/art_phone`), page.click("text=Save with these choices")])
    expect(await bodyNow("art_phone")).toBe(replace("Third paragraph.", "Third, by both of us."))
    await context.close()
  })

  it("should merge and settle without JavaScript, with plain forms", async () => {
    const merge = await open({ javaScript: false, width: 1280 }, "art_nojs_merge")
    await agentSaves("art_nojs_merge", replace("Third paragraph.", "Third paragraph, improved by the agent."))
    await merge.page.fill("#body", replace("<h2>Intro</h2>", "<h2>Introduction</h2>"))
    await Promise.all([merge.page.waitForURL(`${server.url}/articles/art_nojs_merge`), merge.page.click("text=Save as new revision")])
    expect(await merge.page.textContent("[role=status]")).toContain("Merged with revision 2 by Writer bot (API)")
    expect(await bodyNow("art_nojs_merge")).toBe(replace("<h2>Intro</h2>", "<h2>Introduction</h2>").replace("Third paragraph.", "Third paragraph, improved by the agent."))
    await merge.context.close()

    const conflict = await open({ javaScript: false, width: 390 }, "art_nojs_conflict")
    await agentSaves("art_nojs_conflict", replace("<h2>Intro</h2>", "<h2>Agent intro</h2>"))
    await conflict.page.fill("#title", "Mia's title")
    await conflict.page.fill("#body", replace("<h2>Intro</h2>", "<h2>Mia intro</h2>"))
    await Promise.all([conflict.page.waitForURL(/\/merge\?draft=/), conflict.page.click("text=Save as new revision")])
    await conflict.page.check("input[name=choice_body_0][value=theirs]")
    await Promise.all([conflict.page.waitForURL(`${server.url}/articles/art_nojs_conflict`), conflict.page.click("text=Save with these choices")])
    expect(await bodyNow("art_nojs_conflict")).toBe(replace("<h2>Intro</h2>", "<h2>Agent intro</h2>"))
    expect(await conflict.page.textContent("h1")).toBe("Mia's title")
    await conflict.context.close()
  })

  it("should save a conflict page sent twice once, and not tell the person the second time that their edit was not saved", async () => {
    const { context, page } = await open({ javaScript: false, width: 1280 }, "art_twice")
    await agentSaves("art_twice", replace("Third paragraph.", "Third, by the agent."))
    await page.fill("#body", replace("Third paragraph.", "Third, by Mia."))
    await Promise.all([page.waitForURL(/\/merge\?draft=/), page.click("text=Save as new revision")])
    await page.check("input[value=mine]")
    // The form as the browser sends it, sent twice (a double click, a retried post).
    const fields = await page.evaluate(() => [...new FormData(document.querySelector("form[action$='/merge']") as HTMLFormElement)].map(([k, v]) => [k, String(v)]))
    const send = () => context.request.post(`${server.url}/articles/art_twice/merge`, { form: Object.fromEntries(fields), maxRedirects: 0, headers: { Origin: server.url, "Sec-Fetch-Site": "same-origin" } })
    expect((await send()).headers()["location"]).toBe("/articles/art_twice")
    expect((await send()).headers()["location"]).toBe("/articles/art_twice")
    await page.goto(`${server.url}/articles/art_twice`)
    expect(await page.textContent("[role=status]")).toContain("This edit is saved already")
    expect(await page.textContent("main")).not.toContain("not saved")
    expect(await bodyNow("art_twice")).toBe(replace("Third paragraph.", "Third, by Mia."))
    const revisions = (await (await fetch(`${server.url}/api/v1/articles/art_twice/revisions`, { headers: { Authorization: `Bearer ${agentKey}` } })).json()) as { data: ReadonlyArray<{ number: number }> }
    expect(revisions.data.map((r) => r.number)).toEqual([3, 2, 1])
    await context.close()
  })
})
