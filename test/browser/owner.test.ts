/**
 * The web pages as a site owner lives with them, in real Chromium (issue 18): a refused save lands
 * on its message under an address that reloads, with the protected links' HTML to copy back; an
 * expired session keeps the edit; leaving unsaved changes asks; a new key survives no reload;
 * Restore and Revoke confirm, with and without script; the activity log reads in words and
 * filters; no page is wider than a phone; the small things. Every page is checked by axe-core
 * and screenshotted at 1280×900 and 390×844 (test-artifacts/screenshots/owner-*.png).
 */
import { extractProtectedBlocks, importData, OAuthStore } from "@content-site/core"
import { createHash } from "node:crypto"
import { mkdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type StartedServer, startServer } from "../../apps/server/server.ts"
import { agentAuthorizeUrl, launchChromium, seriousViolations } from "../support/browser.ts"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const shots = join(root, "test-artifacts", "screenshots")

const OWNER = { email: "owner@example.com", password: "owner password 1" }
const EMPTY = { email: "nosites@example.com", password: "empty password 1" }
const KEY = "cs_OwnerTestKey0123456789abcdefghijklmnopqrs"
const LONG_WORD = "Supercalifragilisticexpialidocious".repeat(4)
const PROTECTED =
  '<p>Start.</p><p>Our partner <a href="https://partner.test/roses" data-service-protected="backlink" rel="nofollow">partner roses</a> helps, ' +
  'and so does <a href="https://garden.test/soil" data-service-protected="internal">our soil guide</a>.</p>'
const PARAGRAPHS = Array.from({ length: 14 }, (_, i) => `<p>Paragraph ${i + 1} about ${i % 2 === 0 ? "tulips" : "roses"}.</p>`)
/** A body of twenty paragraphs for the folded comparison: one edit in the middle leaves long unchanged stretches either side. */
const LONG_READ = Array.from({ length: 20 }, (_, i) => `<p>Section ${i + 1} of the long read, on ${["soil", "light", "water", "frost"][i % 4]}.</p>`)

const fixture = {
  accounts: [
    {
      id: "acc_owner",
      email: OWNER.email,
      password: OWNER.password,
      name: "Olive Owner",
      api_keys: [{ id: "key_owner", name: "Reporting script", key: KEY, scope: "write" as const }],
      sites: [
        {
          id: "site_owner",
          name: "Olive's Garden",
          url: "https://olive.test",
          articles: [
            { id: "art_o1", title: "Roses in pots", url: "https://olive.test/roses", status: "published", published_at: "2026-10-01T09:00:00Z", "target keyword": "roses", body: PROTECTED },
            { id: "art_long", title: `${LONG_WORD} title`, url: `https://olive.test/${"x".repeat(120)}`, status: "published", published_at: "2026-10-02T09:00:00Z", "target keyword": LONG_WORD, body: PARAGRAPHS.join("") },
            { id: "art_conf", title: "Conflicts", url: "https://olive.test/conflicts", status: "draft", "target keyword": "conflicts", body: "<p>One.</p>" },
            { id: "art_restore", title: "Restore with script", url: "https://olive.test/restore", status: "draft", "target keyword": "restore", body: "<p>One.</p>" },
            { id: "art_nojs", title: "Restore without script", url: "https://olive.test/nojs", status: "draft", "target keyword": "nojs", body: "<p>One.</p>" },
            { id: "art_fold", title: "The long read", url: "https://olive.test/long-read", status: "draft", "target keyword": "long read", body: LONG_READ.join("") },
          ],
          backlinks: [
            { id: "bl_o1", date_acquired: "2026-10-03", source_domain: "news.test", source_url: `https://news.test/${"y".repeat(80)}`, target_url: "https://olive.test/roses", anchor_text: "roses", anchor_type: "exact", category: "industry" },
          ],
        },
      ],
    },
    { id: "acc_nosites", email: EMPTY.email, password: EMPTY.password, name: "Nora Nosites" },
  ],
}

let server: StartedServer
let browser: Browser
let url: string

const DESKTOP = { width: 1280, height: 900 }
const PHONE = { width: 390, height: 844 }

/** The page is no wider than its viewport, passes axe, and is screenshotted under its size. */
const check = async (page: Page, name: string): Promise<void> => {
  const viewport = page.viewportSize()!
  const size = viewport.width <= 400 ? "phone" : "desktop"
  await page.screenshot({ path: join(shots, `owner-${name}-${size}.png`), fullPage: true })
  const width = await page.evaluate(() => document.documentElement.scrollWidth)
  // the elements that stick out, to say where in the message
  const wide = await page.evaluate((w) =>
    [...document.querySelectorAll("body *")]
      .filter((el) => el.getBoundingClientRect().right > w + 1)
      // inside a scrolling box, sticking out is what the box is for
      .filter((el) => {
        for (let up = el.parentElement; up; up = up.parentElement) if (["auto", "scroll", "hidden"].includes(getComputedStyle(up).overflowX)) return false
        return true
      })
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}${el.className && typeof el.className === "string" ? `.${el.className.trim().split(/\s+/).join(".")}` : ""} (${Math.round(el.getBoundingClientRect().right)} px)`),
  viewport.width)
  expect(width, `${name} is ${width} px wide at ${viewport.width}: ${wide.join(", ")}`).toBeLessThanOrEqual(viewport.width)
  expect(await seriousViolations(page), `axe on ${name} (${size})`).toEqual([])
}

const activeId = (page: Page) => page.evaluate(() => document.activeElement?.id ?? "")

/** Whether an element is inside the viewport's height. */
const inView = (page: Page, selector: string) =>
  page.locator(selector).evaluate((el) => {
    const r = el.getBoundingClientRect()
    return r.top > -2 && r.top < window.innerHeight - 40 ? true : `top ${r.top} of ${window.innerHeight}`
  })

const signIn = async (page: Page, who = OWNER): Promise<void> => {
  await page.goto(`${url}/`)
  await page.fill("#email", who.email)
  await page.fill("#password", who.password)
  await Promise.all([page.waitForURL(/\/sites$/), page.click("button[type=submit]")])
}

const api = async (path: string, init: { method?: string; body?: unknown; ifMatch?: string } = {}) => {
  const response = await fetch(`${url}/api/v1${path}`, {
    method: init.method ?? "GET",
    headers: {
      authorization: `Bearer ${KEY}`,
      ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
      ...(init.ifMatch !== undefined ? { "if-match": init.ifMatch } : {}),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  })
  return { status: response.status, json: (await response.json()) as Record<string, unknown> }
}

/** Types a body as HTML: in the visual editor's HTML source mode when the editor is on. */
const fillBody = async (page: Page, body: string): Promise<void> => {
  const source = page.locator("button.editor-mode:has-text('HTML source')")
  if ((await source.count()) > 0 && (await source.getAttribute("aria-pressed")) !== "true") await source.click()
  await page.fill("#body", body)
}

/** Presses Save; with the editor on, the first press shows the dry run and the second saves. */
const save = async (page: Page): Promise<void> => {
  await page.click("text=Save as new revision")
  if ((await page.locator("button.editor-mode").count()) > 0) {
    await page.locator("#edit-preview").waitFor({ state: "visible" })
    await page.click("form[action$='/edit'] button[type=submit]")
  }
}

const newContext = async (viewport = DESKTOP, javaScriptEnabled = true): Promise<{ context: BrowserContext; page: Page; dialogs: Array<string> }> => {
  const context = await browser.newContext({ viewport, javaScriptEnabled })
  const page = await context.newPage()
  return { context, page, dialogs: [] }
}

beforeAll(async () => {
  mkdirSync(shots, { recursive: true })
  server = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false" } })
  await server.runtime.runPromise(importData(fixture))
  url = server.url
  browser = await launchChromium()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

describe("the pages as a site owner lives with them", () => {
  it("should land a refused save on its message, under an address that reloads, with the protected HTML to copy (desktop and phone)", async () => {
    const { context, page } = await newContext()
    // Sign-in: the email has the focus; after a wrong password, the password field.
    await page.goto(`${url}/`)
    await expect.poll(() => activeId(page)).toBe("email")
    await check(page, "sign-in")
    await page.fill("#email", OWNER.email)
    await page.fill("#password", "wrong")
    await page.click("button[type=submit]")
    await page.waitForSelector("#signin-error")
    await expect.poll(() => activeId(page)).toBe("password")
    expect(await page.inputValue("#email")).toBe(OWNER.email)
    await page.fill("#password", OWNER.password)
    await Promise.all([page.waitForURL(/\/sites$/), page.click("button[type=submit]")])
    expect(await page.textContent("nav[aria-label=Main]")).toContain("Connect Site")

    // A protected link removed: refused, the page opens on the message, under ?draft=…#edit-error.
    const stored = String((await api("/articles/art_o1")).json["body"])
    const mustStay = extractProtectedBlocks(stored).map((b) => b.canonical)
    expect(mustStay).toHaveLength(2)
    await page.goto(`${url}/articles/art_o1`)
    const typed = "<p>Start.</p><p>No partner any more.</p>"
    await fillBody(page, typed)
    await page.fill("#reason", "shorter")
    await Promise.all([page.waitForURL(/\/articles\/art_o1\?draft=[\w-]+#edit-error$/), save(page)])
    const draftUrl = page.url()
    const assertRefused = async (reason: string) => {
      await expect.poll(() => activeId(page)).toBe("edit-error")
      expect(await inView(page, "#edit-error")).toBe(true)
      const shown = await page.locator("#edit-error .protected-html code").allTextContents()
      expect(shown).toEqual(mustStay)
      expect(await page.textContent("#edit-error")).toContain("partner roses")
      expect(await page.inputValue("#body")).toBe(typed)
      expect(await page.inputValue("#reason")).toBe(reason)
    }
    await assertRefused("shorter")
    await check(page, "article-refused")
    // The HTML as shown passes the check when copied back into the body.
    await fillBody(page, `${typed}<p>${mustStay.join(" ")}</p>`)
    await Promise.all([page.waitForURL(`${url}/articles/art_o1`), save(page)])
    expect(await page.textContent("[role=status]")).toContain("Saved as revision 2")
    // The draft's address still reloads (here: the draft was saved, so it says so and shows the article).
    await page.goto(draftUrl)
    expect(await page.textContent("#edit-error")).toContain("no longer kept")

    // On a phone: the same refusal, reloaded, still lands on the message.
    await page.setViewportSize(PHONE)
    await page.goto(`${url}/articles/art_o1`)
    await fillBody(page, typed)
    await Promise.all([page.waitForURL(/draft=/), save(page)])
    await assertRefused("")
    await page.reload()
    await assertRefused("")
    await check(page, "article-refused")

    // A conflict: someone saved another title meanwhile. Nothing is applied over it: the conflict
    // page shows both titles, the person's kept in its field.
    await page.setViewportSize(DESKTOP)
    await page.goto(`${url}/articles/art_conf`)
    expect((await api("/articles/art_conf", { method: "PUT", body: { title: "Conflicts, edited by a script" } })).status).toBe(200)
    await page.fill("#title", "Conflicts, edited by hand")
    await Promise.all([page.waitForURL(/\/merge\?draft=/), save(page)])
    expect(await page.textContent("h1")).toBe("Your edit and revision 2 changed the same parts")
    expect(await page.textContent("fieldset.merge-unit")).toContain("Conflicts, edited by a script")
    expect(await page.inputValue("#edit_title")).toBe("Conflicts, edited by hand")

    // Validation: messages read as sentences.
    await page.goto(`${url}/articles/art_conf`)
    await page.locator("#title").evaluate((el) => el.removeAttribute("required"))
    await page.fill("#title", "   ")
    await Promise.all([page.waitForURL(/draft=/), save(page)])
    await expect.poll(() => activeId(page)).toBe("edit-error")
    expect(await page.locator("#edit-error li").allTextContents()).toEqual([
      "The title must be 1 to 300 characters long, not counting spaces at either end.",
    ])
    await context.close()
  }, 120_000)

  it("should keep an edit sent after the session expired, and ask before leaving unsaved changes", async () => {
    const { context, page } = await newContext()
    await signIn(page)
    // A form sent from another site carries no session cookie (SameSite) and no checkable CSRF
    // token: nothing of it is kept, so no sign-in can be offered its text as the person's own.
    const sendForm = (headers: Record<string, string>) =>
      fetch(`${url}/articles/art_long/edit`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams({ title: "Planted title", body: "<p>planted</p>" }).toString(),
        redirect: "manual",
      })
    const foreign: Array<Record<string, string>> = [{ "sec-fetch-site": "cross-site", origin: "https://evil.test" }, { "sec-fetch-site": "same-site" }, { origin: "https://evil.test" }, {}]
    for (const headers of foreign) {
      const crossSite = await sendForm(headers)
      expect(crossSite.status, JSON.stringify(headers)).toBe(303)
      expect(crossSite.headers.get("set-cookie") ?? "", JSON.stringify(headers)).not.toContain("cs_draft=")
    }
    // One sent from this site's own page is kept for a sign-in that comes after it, and never
    // offered to a session that was alive all along.
    const planted = await sendForm({ "sec-fetch-site": "same-origin", origin: new URL(url).origin })
    expect(planted.status).toBe(303)
    const plantedCookie = /cs_draft=([\w-]+)/.exec(planted.headers.get("set-cookie") ?? "")?.[1]
    expect(plantedCookie).toBeDefined()
    await context.addCookies([{ name: "cs_draft", value: plantedCookie!, url }])
    await page.goto(`${url}/articles/art_long`)
    expect(page.url()).toBe(`${url}/articles/art_long`)
    expect(await page.inputValue("#title")).toBe(`${LONG_WORD} title`)
    // Leaving with unsaved changes asks first (the browser's own "leave site?" prompt).
    await page.click("#title")
    await page.keyboard.type(" (draft)")
    const asked = new Promise<string>((resolve) => page.once("dialog", (d) => void d.dismiss().then(() => resolve(d.type()))))
    await page.click("nav[aria-label=Main] a:has-text('Sites')", { noWaitAfter: true })
    expect(await asked).toBe("beforeunload")
    expect(page.url()).toBe(`${url}/articles/art_long`)

    // The session ends on the server (it expired) while the person types.
    await page.fill("#title", "Typed while the session expired")
    await page.fill("#reason", "keep me")
    const cookie = (await context.cookies()).find((c) => c.name === "cs_session")!
    const key = createHash("sha256").update(cookie.value).digest("base64url")
    await server.runtime.runPromise(OAuthStore.use((store) => store.destroy("WebSession", key)))
    await Promise.all([page.waitForURL(/\/\?expired=1&next=%2Farticles%2Fart_long$/), save(page)])
    expect(await page.textContent("[role=status]")).toContain("Your session expired")
    await check(page, "sign-in-expired")
    await page.fill("#email", OWNER.email)
    await page.fill("#password", OWNER.password)
    await Promise.all([page.waitForURL(/\/articles\/art_long\?draft=[\w-]+#edit-error$/), page.click("button[type=submit]")])
    await expect.poll(() => activeId(page)).toBe("edit-error")
    expect(await page.textContent("#edit-error")).toContain("Your session had expired, so this edit was not saved")
    expect(await page.inputValue("#title")).toBe("Typed while the session expired")
    expect(await page.inputValue("#reason")).toBe("keep me")
    // Nothing was saved meanwhile.
    expect((await api("/articles/art_long")).json["revision"]).toBe(1)
    await context.close()
  }, 60_000)

  it("should show a new key once after a redirect, and confirm Restore and Revoke with script", async () => {
    const { context, page } = await newContext()
    const dialogs: Array<string> = []
    let answer = false
    page.on("dialog", (d) => {
      dialogs.push(d.message())
      void (answer ? d.accept() : d.dismiss())
    })
    await signIn(page)
    await page.goto(`${url}/connect`)
    await page.fill("#key-name", "Reload test key")
    await Promise.all([page.waitForURL(/\/connect\?created=[\w-]+#new-key$/), page.click("text=Create key")])
    const key = (await page.textContent("#new-key-value"))!.trim()
    expect(key).toMatch(/^cs_/)
    expect(await activeId(page)).toBe("new-key")
    await check(page, "key-created")
    await page.reload()
    expect(await page.locator("#new-key-value").count()).toBe(0)
    expect(await page.textContent("#new-key")).toContain("shown once")
    expect(await page.content()).not.toContain(key)
    expect(await page.locator("tr", { hasText: "Reload test key" }).count()).toBe(1)

    // The confirmation page a browser without script gets (the form sent unconfirmed), at both sizes.
    await page.locator("tr", { hasText: "Reload test key" }).locator("form").evaluate((f) => {
      // a copy without the script's listener and its data-confirm: sent as a browser without script sends it
      const copy = f.cloneNode(true) as HTMLFormElement
      copy.removeAttribute("data-confirm")
      f.replaceWith(copy)
    })
    await Promise.all([page.waitForURL(/\/revoke$/), page.locator("tr", { hasText: "Reload test key" }).locator("button:has-text('Revoke')").click()])
    expect(await page.textContent("#confirm-title")).toBe("Revoke the key “Reload test key”?")
    expect(await page.locator("#confirm-title ~ form button:focus").textContent()).toBe("Revoke the key")
    await check(page, "confirm-revoke")
    await page.setViewportSize(PHONE)
    await check(page, "confirm-revoke")
    await page.setViewportSize(DESKTOP)
    await page.goto(`${url}/connect`)
    // Revoke asks; "Cancel" keeps the key, "OK" revokes it.
    const revoke = page.locator("tr", { hasText: "Reload test key" }).locator("button:has-text('Revoke')")
    await revoke.click()
    expect(dialogs.at(-1)).toContain("Revoke the key “Reload test key”?")
    expect((await fetch(`${url}/api/v1/sites`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200)
    answer = true
    await Promise.all([page.waitForURL(`${url}/connect`), revoke.click()])
    expect(await page.textContent("[role=status]")).toContain("Revoked the key")
    expect((await fetch(`${url}/api/v1/sites`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401)

    // Restore asks too.
    answer = false
    expect((await api("/articles/art_restore", { method: "PUT", body: { body: "<p>Two.</p>" } })).status).toBe(200)
    await page.goto(`${url}/articles/art_restore`)
    const before = await page.locator("#revisions li").count()
    await page.locator("#revisions li", { hasText: "Revision 1" }).locator("button:has-text('Restore')").click()
    expect(dialogs.at(-1)).toContain("Restore revision 1?")
    expect(page.url()).toBe(`${url}/articles/art_restore`)
    expect(await page.locator("#revisions li").count()).toBe(before)
    answer = true
    await Promise.all([
      page.waitForURL(`${url}/articles/art_restore`),
      page.locator("#revisions li", { hasText: "Revision 1" }).locator("button:has-text('Restore')").click(),
    ])
    expect(await page.textContent("[role=status]")).toContain("Restored revision 1 as revision")
    await context.close()
  }, 60_000)

  it("should ask on a confirmation page when scripts are off, and keep a refused edit's address", async () => {
    const { context, page } = await newContext(DESKTOP, false)
    await signIn(page)
    expect((await api("/articles/art_nojs", { method: "PUT", body: { body: "<p>Two.</p>" } })).status).toBe(200)
    await page.goto(`${url}/articles/art_nojs/revisions/1`)
    await page.fill("#restore-reason", "back to one")
    await page.click("button:has-text('Restore revision 1')")
    await page.waitForSelector("#confirm-title")
    expect(await page.textContent("#confirm-title")).toContain("Restore revision 1 of “Restore without script”?")
    expect(await page.getAttribute("input[name=reason]", "value")).toBe("back to one")
    await page.click("text=Cancel")
    expect((await api("/articles/art_nojs")).json["revision"]).toBe(2)
    await page.click("button:has-text('Restore revision 1')")
    await Promise.all([page.waitForURL(`${url}/articles/art_nojs`), page.click("#confirm-title ~ form button")])
    expect((await api("/articles/art_nojs")).json["revision"]).toBe(3)

    await page.goto(`${url}/connect`)
    await page.fill("#key-name", "No-JS key")
    await Promise.all([page.waitForURL(/created=/), page.click("text=Create key")])
    await Promise.all([page.waitForURL(/\/connect\/keys\/.+\/revoke$/), page.locator("tr", { hasText: "No-JS key" }).locator("button:has-text('Revoke')").click()])
    expect(await page.textContent("#confirm-title")).toContain("Revoke the key “No-JS key”?")
    await Promise.all([page.waitForURL(`${url}/connect`), page.click("#confirm-title ~ form button")])
    expect(await page.textContent("[role=status]")).toContain("Revoked the key “No-JS key”")

    // Without script the refused edit still opens on its message (autofocus, fragment) and reloads.
    // (No script runs in this page, so the test asks through selectors and layout, not evaluate.)
    await page.goto(`${url}/articles/art_o1`)
    await page.fill("#body", "<p>Nothing protected.</p>")
    await Promise.all([page.waitForURL(/draft=[\w-]+#edit-error$/), page.click("text=Save as new revision")])
    expect(await page.locator("#edit-error:focus").count()).toBe(1)
    const box = await page.locator("#edit-error").boundingBox()
    expect(box!.y).toBeGreaterThan(-2)
    expect(box!.y).toBeLessThan(DESKTOP.height - 40)
    expect(await page.inputValue("#body")).toBe("<p>Nothing protected.</p>")
    await context.close()
  }, 120_000)

  it("should tell the history in words, filter it, and log changes and sign-ins but not page views", async () => {
    const { context, page } = await newContext()
    await signIn(page)
    // A refused edit on the pages, to read back.
    await page.goto(`${url}/articles/art_o1`)
    await fillBody(page, "<p>No links.</p>")
    await Promise.all([page.waitForURL(/draft=/), save(page)])
    expect((await api("/articles/art_long")).status).toBe(200)
    const current = await api("/articles/art_long")
    const edited = PARAGRAPHS.map((p, i) => (i === 7 ? "<p>Paragraph 8, rewritten by the script.</p>" : p)).join("")
    expect((await api("/articles/art_long", { method: "PUT", body: { body: edited } })).status).toBe(200)
    expect(current.status).toBe(200)

    await page.goto(`${url}/activity`)
    const rows = page.locator("table.activity tbody tr")
    const viewed = rows.filter({ hasText: "Viewed" }).first()
    expect(await viewed.locator("td[data-label=What] a").textContent()).toBe(`${LONG_WORD} title`)
    expect(await viewed.textContent()).toContain("API key “Reporting script”")
    await viewed.locator("summary").click()
    const details = await viewed.locator("details").textContent()
    expect(details).toContain("GET /api/v1/articles/{id}")
    expect(details).toMatch(/Status\s*200/)
    expect(details).toMatch(/\d+ ms/)
    const all = await rows.allTextContents()
    expect(all.some((r) => r.includes("Refused: protected link changed") && r.includes("Olive Owner") && r.includes("Web"))).toBe(true)
    expect(all.some((r) => r.includes("Signed in"))).toBe(true)
    const actions = await page.locator("table.activity details code").allTextContents()
    expect(actions.filter((a) => a.startsWith("GET /articles") || a.startsWith("GET /sites") || a.startsWith("GET /activity"))).toEqual([])
    await check(page, "activity")

    // Filters: changes only, by channel, by article, by result.
    await page.check("input[name=changes]")
    await page.selectOption("#channel", "api")
    await page.selectOption("#article", "art_long")
    await Promise.all([page.waitForURL(/changes=1/), page.click("text=Apply")])
    const changes = await rows.allTextContents()
    expect(changes).toHaveLength(1)
    expect(changes[0]).toContain("Edited")
    await page.goto(`${url}/activity?status=error`)
    expect((await rows.allTextContents()).every((r) => r.includes("Refused") || r.includes("Failed"))).toBe(true)
    await page.goto(`${url}/activity?from=yesterday`)
    expect(await page.textContent("[role=alert]")).toContain("From must be a date such as 2026-11-01.")
    await expect.poll(() => activeId(page)).toBe("filter-error")

    // The article's own activity: its changes by API and web, not its views.
    await page.goto(`${url}/articles/art_o1`)
    const own = await page.locator("#activity tbody tr").allTextContents()
    expect(own.some((r) => r.includes("Edited") && r.includes("Web"))).toBe(true)
    expect(own.some((r) => r.includes("Refused: protected link changed"))).toBe(true)
    expect(own.some((r) => r.includes("Viewed"))).toBe(false)
    await page.goto(`${url}/articles/art_long`)
    expect((await page.locator("#activity tbody tr").allTextContents()).some((r) => r.includes("Edited") && r.includes("API"))).toBe(true)

    // The diff: the site in the breadcrumb, unchanged lines folded and unfoldable, the import labelled.
    await page.goto(`${url}/articles/art_long/revisions/1`)
    expect(await page.locator(".breadcrumbs li").allTextContents()).toEqual(["Sites", "Olive's Garden", `${LONG_WORD} title`, "Revision 1"])
    expect(await page.textContent(".page-head")).toContain("Imported")
    await page.click(".html-changes > summary")
    const gap = page.locator("table.diff tr.gap details").first()
    expect(await gap.locator("pre").isVisible()).toBe(false)
    await gap.locator("summary").click()
    expect(await gap.locator("pre").textContent()).toContain("Paragraph 1 about tulips.")
    // The word comparison folds unchanged paragraphs too, and unfolds them by keyboard.
    const folded = page.locator("table.compare tr.gap details").first()
    expect(await folded.locator("summary").textContent()).toMatch(/^\d+ unchanged paragraphs?: show them$/)
    expect(await folded.locator(".unchanged").isVisible()).toBe(false)
    await folded.locator("summary").focus()
    await page.keyboard.press("Enter")
    await expect.poll(() => folded.locator(".unchanged").isVisible()).toBe(true)
    expect(await folded.locator(".unchanged").textContent()).toContain("Paragraph 1 about tulips.")
    await check(page, "diff")
    await context.close()
  }, 60_000)

  it("should hold every page within a phone's width, wrap long titles, and keep the small promises", async () => {
    for (const viewport of [DESKTOP, PHONE]) {
      const { context, page } = await newContext(viewport)
      await signIn(page)
      for (const [path, name] of [
        ["/sites", "sites"],
        ["/sites/site_owner", "site"],
        ["/sites/site_owner?tab=backlinks", "site-backlinks"],
        ["/articles/art_long", "article-long-title"],
        ["/connect", "connect"],
        ["/activity?article=art_long", "activity-article"],
        ["/articles/art_long/revisions/1", "revision-compare"],
        ["/no/such/page", "not-found"],
      ] as const) {
        const response = await page.goto(`${url}${path}`)
        expect(response?.status(), path).toBe(path === "/no/such/page" ? 404 : 200)
        await check(page, name)
      }
      // The site's table keeps every column in view: nothing scrolls sideways.
      await page.goto(`${url}/sites/site_owner`)
      const table = await page.locator("table.stacked").evaluate((t) => ({ scroll: t.scrollWidth, client: t.parentElement!.clientWidth }))
      expect(table.scroll).toBeLessThanOrEqual(table.client)
      expect(await page.locator("td[data-label='Target keyword']", { hasText: LONG_WORD }).isVisible()).toBe(true)
      // Long titles wrap within the page in the heading and breadcrumb.
      await page.goto(`${url}/articles/art_long`)
      for (const selector of ["h1", ".breadcrumbs"]) {
        const box = await page.locator(selector).first().boundingBox()
        expect(box!.x + box!.width, selector).toBeLessThanOrEqual(viewport.width)
      }
      // The 404 page is the site's own, with a way back.
      await page.goto(`${url}/no/such/page`)
      expect(await page.textContent("h1")).toBe("Page not found")
      expect(await page.getAttribute("a:has-text('Back to your sites')", "href")).toBe("/sites")
      await context.close()
    }
    // An account without sites is told what to do next.
    const { context, page } = await newContext(PHONE)
    await signIn(page, EMPTY)
    expect(await page.textContent("main")).toContain("Websites are added to your account by the Content-Site team")
    expect(await page.getAttribute("main a:has-text('Connect Site')", "href")).toBe("/connect")
    await check(page, "no-sites")
    // The API reference links back to the app.
    await page.goto(`${url}/api/docs`)
    expect(await page.getAttribute("a:has-text('Back to Content-Site')", "href")).toBe("/")
    await context.close()
  }, 120_000)

  it("should fold the word comparison's long unchanged stretches and unfold one by keyboard, with and without script, at both sizes", async () => {
    // Section 10 changes: sections 1-7 and 13-20 are far from it, sections 8-9 and 11-12 its context.
    const edited = LONG_READ.map((p, i) => (i === 9 ? "<p>Section 10 of the long read, on light and shade.</p>" : p)).join("")
    expect((await api("/articles/art_fold", { method: "PUT", body: { body: edited } })).status).toBe(200)
    for (const [viewport, javaScriptEnabled] of [[DESKTOP, true], [PHONE, true], [PHONE, false]] as const) {
      const { context, page } = await newContext(viewport, javaScriptEnabled)
      await signIn(page)
      await page.goto(`${url}/articles/art_fold/revisions/1`)
      const table = page.locator("table.compare")
      const folds = table.locator("tr.gap details")
      expect(await folds.locator("summary").allTextContents()).toEqual(["7 unchanged paragraphs: show them", "8 unchanged paragraphs: show them"])
      // Folded: the far sections are not shown, the context and the change are.
      const shown = await table.innerText()
      for (const far of ["Section 1 of", "Section 7 of", "Section 13 of", "Section 20 of"]) expect(shown, far).not.toContain(far)
      for (const near of ["Section 8 of", "Section 9 of", "Section 11 of", "Section 12 of"]) expect(shown, near).toContain(near)
      expect(shown).toContain("shade")
      // (axe and the width check evaluate script in the page: with scripts off, a screenshot alone)
      const look = (name: string) =>
        javaScriptEnabled ? check(page, name) : page.screenshot({ path: join(shots, `owner-${name}-nojs-phone.png`), fullPage: true })
      await look("word-compare-folded")
      // By keyboard: from the comparison's scrolling box, Tab reaches the first fold; Enter opens it.
      await page.locator("[role=region][aria-label='Side-by-side comparison']").focus()
      await page.keyboard.press("Tab")
      expect(await folds.first().locator("summary:focus").count()).toBe(1)
      await page.keyboard.press("Enter")
      await expect.poll(() => folds.first().locator(".unchanged").isVisible()).toBe(true)
      const unfolded = await table.innerText()
      for (const section of [1, 2, 3, 4, 5, 6, 7]) expect(unfolded).toContain(`Section ${section} of the long read`)
      // the other stretch stays folded until it is opened in turn (Space, this time)
      expect(unfolded).not.toContain("Section 13 of")
      await page.keyboard.press("Tab")
      expect(await folds.last().locator("summary:focus").count()).toBe(1)
      await page.keyboard.press("Space")
      await expect.poll(() => table.innerText()).toContain("Section 20 of the long read")
      await look("word-compare-unfolded")
      await context.close()
    }
  }, 90_000)

  it("should offer read-only access on the consent page, which names the Connect Site page and fits a phone", async () => {
    const authorize = await agentAuthorizeUrl(url, "Phone Agent", "mcp mcp:read")
    for (const viewport of [DESKTOP, PHONE]) {
      const { context, page } = await newContext(viewport)
      await page.goto(authorize)
      await expect.poll(() => activeId(page)).toBe("email")
      await check(page, "oauth-sign-in")
      await page.fill("#email", OWNER.email)
      await page.fill("#password", OWNER.password)
      await page.click("button:has-text('Sign in')")
      await page.getByRole("button", { name: "Allow" }).waitFor()
      expect(await page.getByLabel(/Read only/).count()).toBe(1)
      expect(await page.getAttribute("a:has-text('Connect Site')", "href")).toBe("/connect")
      await check(page, "oauth-consent")
      await context.close()
    }
  }, 60_000)
})
