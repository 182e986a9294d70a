/**
 * The accessibility audit: axe-core on every page, signed in and with data, in one browser and one
 * server: sign-in (and its error), sites, a site's articles and backlinks, an article with the
 * visual editor, a refused edit, a revision's comparison, the conflict page, activity, search
 * (and its error), a refused site or activity filter,
 * Connect (with a new key shown once), the error page, and the agent sign-in and consent pages.
 * No serious or critical violation is allowed; no rule is disabled. Keyboard cases follow.
 */
import { createApiKey, importData } from "@content-site/core"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type StartedServer, startServer } from "../../apps/server/server.ts"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { agentAuthorizeUrl, launchChromium, seriousViolations, signedInContext } from "../support/browser.ts"
import { WEB_EMAIL, WEB_PASSWORD, webFixture } from "./fixture.ts"

let server: StartedServer
let browser: Browser
let agentKey: string
const person = { email: WEB_EMAIL, password: WEB_PASSWORD }

beforeAll(async () => {
  server = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false" } })
  await server.runtime.runPromise(importData(webFixture))
  agentKey = (await server.runtime.runPromise(createApiKey("acc_web", { name: "Writer bot", scope: "write" }))).key
  browser = await launchChromium()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")
const audited: Array<string> = []
/**
 * Runs axe (every rule but the experimental ones, best practices included) on the page as it is
 * now; collects its serious and critical findings under the page's name. A11Y_REPORT=1 prints the
 * moderate and minor ones too, for a review by hand.
 */
const audit = async (page: Page, name: string, found: Array<string>): Promise<void> => {
  audited.push(name)
  await page.evaluate(axeSource)
  const violations = (await page.evaluate(`axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)`)) as ReadonlyArray<{
    readonly id: string
    readonly impact: string | null
    readonly help: string
    readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<string> }>
  }>
  if (process.env["A11Y_REPORT"] === "1")
    console.log(
      name,
      await page.evaluate(() => [
        document.title,
        [...document.querySelectorAll("h1,h2,h3,h4,h5,h6")].map((h) => `${h.tagName}:${(h.textContent ?? "").trim().slice(0, 40)}`).join(" | "),
        [...document.querySelectorAll("[aria-invalid], [aria-describedby]")].map((e) => `${e.id}:${e.getAttribute("aria-invalid")}:${e.getAttribute("aria-describedby")}`).join(" "),
        [...document.querySelectorAll("[role=alert],[role=status],[aria-live]")].map((e) => `${e.id || e.className}:${e.getAttribute("role") ?? e.getAttribute("aria-live")}`).join(" "),
      ]),
    )
  for (const v of violations) {
    const line = `${name}: ${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`
    if (v.impact === "serious" || v.impact === "critical") found.push(line)
    else if (process.env["A11Y_REPORT"] === "1") console.log(line)
  }
}

/**
 * A form's error state, as a screen reader meets it: the page's title says so, the message is an
 * alert, and each field concerned is invalid and described by the message.
 */
const formError = async (page: Page, title: string, fields: ReadonlyArray<string>, message: string): Promise<void> => {
  expect(await page.title()).toBe(`${title} · Content-Site`)
  expect(await page.getAttribute(message, "role")).toBe("alert")
  for (const field of fields) {
    expect(await page.getAttribute(field, "aria-invalid"), field).toBe("true")
    expect((await page.getAttribute(field, "aria-describedby"))?.split(" "), field).toContain(message.slice(1))
  }
}

/** A sign-in page (the service's or the agent's) sent a wrong password: audited, and its error tied to both fields. */
const signInRefused = async (page: Page, name: string, found: Array<string>): Promise<void> => {
  await page.fill("#email", WEB_EMAIL)
  await page.fill("#password", "wrong password")
  await page.click("button:has-text('Sign in')")
  await page.waitForSelector("[role=alert]")
  await audit(page, name, found)
  await formError(page, "Error: Sign in", ["#email", "#password"], "#signin-error")
}

const editor = async (page: Page, id: string): Promise<void> => {
  await page.goto(`${server.url}/articles/${id}`)
  await page.waitForSelector("html.editor-ready")
}

describe("accessibility audit", () => {
  it("should find no serious or critical axe violation on any page, signed in, with data, in error states", async () => {
    const found: Array<string> = []
    const url = server.url
    const signedOut = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const out = await signedOut.newPage()
    await out.goto(`${url}/`)
    await audit(out, "sign-in", found)
    await signInRefused(out, "sign-in error", found)
    await signedOut.close()

    const { context, page } = await signedInContext(browser, url, person, { width: 1280, height: 900 })
    page.on("dialog", (d) => void d.accept())
    await audit(page, "sites", found)
    await page.goto(`${url}/sites/site_web`)
    await audit(page, "site articles", found)
    await page.goto(`${url}/sites/site_web?tab=backlinks`)
    await audit(page, "site backlinks", found)
    // A refused filter: the field it is about points to the message, the others do not.
    await page.goto(`${url}/sites/site_web?from=2026-12-01&to=2026-11-01`)
    await audit(page, "site articles (filter error)", found)
    await formError(page, "Error: Rose Garden", ["#from"], "#filter-error")
    expect(await page.getAttribute("#to", "aria-invalid")).toBeNull()
    expect(await page.getAttribute("#status", "aria-describedby")).toBeNull()
    await editor(page, "art_roses")
    await audit(page, "article (visual editor)", found)
    await page.click("button.editor-mode:has-text('HTML source')")
    await audit(page, "article (HTML source)", found)
    // A refused edit: the form's error state.
    await page.fill("#body", "<p>The links are gone.</p>")
    await page.click("text=Save as new revision")
    await expect.poll(() => page.locator("#edit-preview").textContent()).toContain("saving will be refused")
    await audit(page, "article (preview: refusal)", found)
    await Promise.all([page.waitForURL(/draft=/), page.click("text=Save as new revision")])
    await page.waitForSelector("#edit-error")
    await audit(page, "article (refused edit)", found)
    await formError(page, "Not saved: Growing roses", ["#body", "#body-visual"], "#edit-error")
    // A saved edit, then the comparison of revision 1 with it.
    await editor(page, "art_tulips")
    await page.fill("#title", "Tulips in big pots")
    await page.click("text=Save as new revision")
    // (the saved article is at the address the form is on already, so a wait for that address
    // returns at once: the saved revision's notice is what only the page it lands on has)
    await page.click("text=Confirm and save")
    await page.locator(".notice[role=status]", { hasText: /Saved as revision \d+\./ }).waitFor()
    await page.waitForLoadState("load")
    await page.waitForSelector("html.editor-ready")
    expect(page.url()).toBe(`${url}/articles/art_tulips`)
    await audit(page, "article (saved)", found)
    await page.goto(`${url}/articles/art_tulips/revisions/1`)
    await audit(page, "revision comparison", found)
    // The conflict page: an agent changes the paragraph the person changes.
    await editor(page, "art_draft")
    await page.click("button.editor-mode:has-text('HTML source')")
    const res = await fetch(`${url}/api/v1/articles/art_draft`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${agentKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({ body: "<p>Later, says the agent.</p>" }),
    })
    expect(res.status).toBe(200)
    await page.fill("#body", "<p>Later, says Wendy.</p>")
    await page.click("text=Save as new revision")
    await expect.poll(() => page.locator("#edit-preview").textContent()).toContain("changed a part you changed too")
    await Promise.all([page.waitForURL(/\/merge\?draft=/), page.click("text=Continue to compare")])
    await audit(page, "conflict page", found)
    await page.goto(`${url}/activity`)
    await audit(page, "activity", found)
    await page.goto(`${url}/activity?status=error`)
    await audit(page, "activity (refused)", found)
    // A refused activity filter: the field it is about points to the message, the others do not.
    await page.goto(`${url}/activity?from=yesterday`)
    await audit(page, "activity (filter error)", found)
    await formError(page, "Error: Activity", ["#from"], "#filter-error")
    for (const other of ["#to", "#channel", "#status", "#article"]) expect(await page.getAttribute(other, "aria-invalid"), other).toBeNull()
    await page.goto(`${url}/activity?status=bogus`)
    await formError(page, "Error: Activity", ["#status"], "#filter-error")
    expect(await page.getAttribute("#from", "aria-describedby")).toBeNull()
    await page.goto(`${url}/search?q=roses`)
    await audit(page, "search", found)
    await page.goto(`${url}/search?q=zzzznothing`)
    await audit(page, "search (nothing found)", found)
    await page.goto(`${url}/search?q=${"a".repeat(201)}`)
    await audit(page, "search (error)", found)
    await formError(page, "Error: Search", ["#search-q"], "#search-error")
    await page.goto(`${url}/connect`)
    await audit(page, "connect", found)
    await page.fill("#key-name", "   ")
    await page.click("button:has-text('Create key')")
    await page.waitForSelector("#key-name-error")
    await audit(page, "connect (name error)", found)
    await formError(page, "Error: Connect Site", ["#key-name"], "#key-name-error")
    await page.fill("#key-name", "Audit key")
    // (the page it lands on, the key shown once: /connect matches the page the form is on already)
    await Promise.all([page.waitForURL(/\/connect\?created=/), page.click("button:has-text('Create key')")])
    await page.waitForSelector("#new-key-title")
    await audit(page, "connect (new key)", found)
    await page.goto(`${url}/no/such/page`)
    await audit(page, "not found", found)

    // The agent's sign-in and consent pages.
    const authorize = await agentAuthorizeUrl(url, "Audit Agent", "mcp")
    const agentContext: BrowserContext = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const agentPage = await agentContext.newPage()
    await agentPage.goto(authorize)
    await audit(agentPage, "agent sign-in", found)
    await signInRefused(agentPage, "agent sign-in error", found)
    await agentPage.fill("#password", WEB_PASSWORD)
    await agentPage.click("button:has-text('Sign in')")
    await agentPage.getByRole("button", { name: "Allow" }).waitFor()
    await audit(agentPage, "agent consent", found)
    await agentContext.close()
    await context.close()
    expect(found).toEqual([])
    expect(audited.length).toBe(26)
  }, 120_000)

  it("should show where the keyboard's focus is, with a ring of at least 3:1 against what is around it", async () => {
    const { context, page } = await signedInContext(browser, server.url, person, { width: 1280, height: 900 })
    const weak: Array<string> = []
    /** The focused element's ring, or that the focus is in a frame (whose own document draws it). */
    const ringOf = () => {
      const el = document.activeElement
      if (el === null || el === document.body) return null
      if (el.tagName === "IFRAME") return "frame" as const
      const luminance = (css: string): number => {
        const [r, g, b] = (css.match(/[\d.]+/g) ?? ["0", "0", "0"]).slice(0, 3).map((c) => {
          const v = Number(c) / 255
          return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4
        }) as [number, number, number]
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
      }
      // What the ring is drawn on: the first ancestor with a background of its own.
      let under: Element | null = el.parentElement
      while (under !== null && /rgba\(0, 0, 0, 0\)|transparent/.test(getComputedStyle(under).backgroundColor)) under = under.parentElement
      const style = getComputedStyle(el)
      const [a, b] = [luminance(style.outlineColor), luminance(under === null ? "rgb(255, 255, 255)" : getComputedStyle(under).backgroundColor)]
      const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)
      return { name: `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""} ${(el.textContent ?? "").trim().slice(0, 30)}`, style: style.outlineStyle, width: parseFloat(style.outlineWidth), ratio }
    }
    // The article page is tabbed through to past its preview frame, whose links take the focus.
    for (const [path, tabs] of [["/sites", 25], ["/sites/site_web", 25], ["/connect", 25], ["/articles/art_roses", 30]] as const) {
      await page.goto(`${server.url}${path}`)
      if (path.startsWith("/articles/")) await page.waitForSelector("html.editor-ready")
      let inFrame = 0
      for (let i = 0; i < tabs; i++) {
        await page.keyboard.press("Tab")
        let ring = await page.evaluate(ringOf)
        if (ring === "frame") {
          inFrame++
          const frame = await (await page.evaluateHandle(() => document.activeElement)).asElement()!.contentFrame()
          ring = frame === null ? null : await frame.evaluate(ringOf)
          if (ring === null || ring === "frame") weak.push(`${path}: a frame with nothing focused in it`)
        }
        if (ring === null || ring === "frame") continue
        if (ring.style === "none" || ring.width < 2 || ring.ratio < 3) weak.push(`${path}: ${ring.name} (${ring.style} ${ring.width}px, ${ring.ratio.toFixed(2)}:1)`)
      }
      if (path.startsWith("/articles/")) expect(inFrame, "Tab reaches the preview frame's links").toBeGreaterThan(0)
    }
    await context.close()
    expect(weak).toEqual([])
  }, 60_000)

  it("should group the headings of the article being edited in a labelled region, apart from the page's own", async () => {
    const { context, page } = await signedInContext(browser, server.url, person, { width: 1280, height: 900 })
    // An article without protected links, its text replaced (an earlier case may have edited it).
    await editor(page, "art_tulips")
    const body = page.getByRole("region", { name: "Article body (visual editor)" })
    await page.locator("#body-visual").click()
    await page.keyboard.press("Control+a")
    await page.keyboard.type("Why tulips")
    await page.selectOption(".editor-block", "h3")
    await page.locator("#body-visual h3").click()
    await page.keyboard.press("End")
    await page.keyboard.press("Enter")
    // A heading typed with the same words as one of the page's own sections.
    await page.keyboard.type("Details")
    await page.selectOption(".editor-block", "h2")
    // The article's headings are in the region, with the field; the page's are not.
    await expect.poll(() => body.getByRole("heading").allTextContents()).toEqual(["Why tulips", "Details"])
    expect(await body.getByRole("textbox", { name: "Article body" }).count()).toBe(1)
    expect(await page.locator("#details-title").evaluate((h) => h.closest("[role=region]") === null)).toBe(true)
    expect(await seriousViolations(page)).toEqual([])
    await context.close()
  }, 60_000)

  it("should ring a focused protected link in the preview frame differently from its permanent dashed outline", async () => {
    const { context, page } = await signedInContext(browser, server.url, person, { width: 1280, height: 900 })
    await editor(page, "art_roses")
    const frame = (await page.locator("iframe.article-preview").elementHandle())!
    const preview = (await frame.contentFrame())!
    const look = (selector: string) =>
      preview.evaluate((sel) => {
        const style = getComputedStyle(document.querySelector(sel)!)
        return { outline: `${style.outlineStyle} ${style.outlineWidth} ${style.outlineColor}`, shadow: style.boxShadow }
      }, selector)
    const link = 'a[href="https://partner.test/roses"]'
    const unfocused = await look(link)
    expect(unfocused.outline).toContain("dashed")
    for (let i = 0; i < 60; i++) {
      await page.keyboard.press("Tab")
      if (await preview.evaluate((sel) => document.activeElement === document.querySelector(sel), link)) break
    }
    expect(await preview.evaluate((sel) => document.querySelector(sel)!.matches(":focus-visible"), link), "Tab reaches the protected link").toBe(true)
    const focused = await look(link)
    expect(focused).not.toEqual(unfocused)
    expect(focused.outline).toMatch(/^solid /)
    // The ring against the white body around it, and against the link's own dashed colour.
    const ratio = await preview.evaluate((sel) => {
      const luminance = (css: string): number => {
        const [r, g, b] = (css.match(/[\d.]+/g) ?? ["0", "0", "0"]).slice(0, 3).map((c) => {
          const v = Number(c) / 255
          return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4
        }) as [number, number, number]
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
      }
      const [a, b] = [luminance(getComputedStyle(document.querySelector(sel)!).outlineColor), luminance(getComputedStyle(document.body).backgroundColor === "rgba(0, 0, 0, 0)" ? "rgb(255, 255, 255)" : getComputedStyle(document.body).backgroundColor)]
      return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)
    }, link)
    expect(ratio).toBeGreaterThanOrEqual(3)
    expect(parseFloat(focused.outline.split(" ")[1]!)).toBeGreaterThanOrEqual(2)
    await context.close()
  }, 60_000)

  it("should ring the preview frame's edge while the keyboard's focus is inside it", async () => {
    const { context, page } = await signedInContext(browser, server.url, person, { width: 1280, height: 900 })
    await editor(page, "art_roses")
    const preview = (await (await page.locator("iframe.article-preview").elementHandle())!.contentFrame())!
    // The ring is the frame document's own (the page's :focus-within does not see into the frame).
    const edge = () =>
      preview.evaluate(() => {
        const style = getComputedStyle(document.documentElement, "::after")
        const luminance = (css: string): number => {
          const [r, g, b] = (css.match(/[\d.]+/g) ?? ["0", "0", "0"]).slice(0, 3).map((c) => {
            const v = Number(c) / 255
            return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4
          }) as [number, number, number]
          return 0.2126 * r + 0.7152 * g + 0.0722 * b
        }
        const a = luminance(style.borderTopColor)
        return {
          shown: style.content !== "none" && style.position === "fixed" && style.borderTopStyle === "solid" && parseFloat(style.borderTopWidth) >= 2,
          ratio: (Math.max(a, 1) + 0.05) / (Math.min(a, 1) + 0.05),
        }
      })
    expect((await edge()).shown, "no ring before the focus is in the frame").toBe(false)
    let inFrame = false
    for (let i = 0; i < 60 && !inFrame; i++) {
      await page.keyboard.press("Tab")
      inFrame = await page.evaluate(() => document.activeElement?.tagName === "IFRAME")
    }
    expect(inFrame, "Tab reaches the preview frame").toBe(true)
    const ring = await edge()
    expect(ring.shown).toBe(true)
    expect(ring.ratio).toBeGreaterThanOrEqual(3)
    // Out of the frame again, the ring goes.
    await page.keyboard.press("Shift+Tab")
    await page.keyboard.press("Shift+Tab")
    expect(await page.evaluate(() => document.activeElement?.tagName)).not.toBe("IFRAME")
    expect((await edge()).shown).toBe(false)
    await context.close()
  }, 60_000)
})

describe("the key shown once, copied from the keyboard", () => {
  /** Signed in, a new key just made: the page that shows it once. */
  const newKeyPage = async (name: string) => {
    const { context, page } = await signedInContext(browser, server.url, person, { width: 1280, height: 900 })
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url })
    await page.goto(`${server.url}/connect`)
    await page.fill("#key-name", name)
    await Promise.all([page.waitForURL(/\/connect\?created=/), page.click("button:has-text('Create key')")])
    await page.waitForSelector("#new-key-title")
    await page.waitForFunction(() => document.activeElement?.id === "new-key")
    return { context, page }
  }

  it("should say, in a status message a screen reader reads out, that the key was copied (Tab, then Enter)", async () => {
    const { context, page } = await newKeyPage("Copy by keyboard")
    await page.keyboard.press("Tab")
    expect(await page.evaluate(() => document.activeElement?.getAttribute("data-copy"))).toBe("new-key-value")
    await page.keyboard.press("Enter")
    const status = page.locator("[role=status]", { hasText: /Copied|Selected/ })
    await status.waitFor({ timeout: 3000 })
    await context.close()
  }, 60_000)

  it("should say which keys copy the selected key when the clipboard refuses, on an Apple system Command+C", async () => {
    const { context, page } = await newKeyPage("Copy refused")
    // the clipboard refuses (a browser that does not allow it), on an Apple system
    await page.evaluate(() => {
      Object.defineProperty(navigator, "platform", { get: () => "MacIntel" })
      Object.defineProperty(navigator, "clipboard", { get: () => ({ writeText: () => Promise.reject(new Error("not allowed")) }) })
    })
    await page.keyboard.press("Tab")
    await page.keyboard.press("Enter")
    await page.locator("[role=status]", { hasText: "Press Command+C to copy it." }).waitFor({ timeout: 3000 })
    expect(await page.evaluate(() => window.getSelection()?.toString() ?? "")).toMatch(/^cs_/)
    await context.close()
  }, 60_000)

  it("should name each Copy button on the page after what it copies, so no two read the same", async () => {
    const { context, page } = await newKeyPage("Copy names")
    const names = await page.locator("[data-copy]").evaluateAll((els) =>
      els.map((e) => (e.getAttribute("aria-label") ?? e.textContent ?? "").replace(/\s+/g, " ").trim()),
    )
    expect(names.length).toBe(3)
    expect(new Set(names).size).toBe(names.length)
    await context.close()
  }, 60_000)
})
