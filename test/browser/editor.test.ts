/**
 * The article page's visual editor in real Chromium (the one `npm ci` installs): typing and
 * formatting, a link, every way of deleting or editing a protected link refused next to it, a
 * move by drag and by cut and paste, a forged protected link pasted as a plain link, the dry-run
 * preview, the save read back through the REST API; the no-change round trip of every demo
 * article (saved for real) and every benign corpus body (through the editor, then the server's
 * sanitiser); the source-mode fallback; the featured-image placeholder; axe-core with the editor
 * open. Screenshots go to test-artifacts/screenshots/editor-*.png.
 */
import { createApiKey, importData, sanitizeArticleHtml } from "@content-site/core"
import { Effect } from "effect"
import { mkdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { demoData } from "../../apps/server/demo.ts"
import { type StartedServer, startServer } from "../../apps/server/server.ts"
import { launchChromium, seriousViolations } from "../support/browser.ts"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const shots = join(root, "test-artifacts", "screenshots")
// the corpora the core's sanitiser tests read (with their sources and licences)
const corpora = join(root, "core", "test", "fixtures", "corpora")

const EMAIL = "editor-tester@example.com"
const PASSWORD = "editor tester password"
const PARTNER = '<a href="https://partner.test/roses" data-service-protected="backlink" rel="nofollow">partner roses</a>'
const SOIL = '<a href="https://garden.test/soil" data-service-protected="internal">our soil guide</a>'
const BODY = `<h2>Why roses</h2><p>Roses like sun and good soil.</p><p>Our partner ${PARTNER} helps, and so does ${SOIL}.</p><ul><li>Water in the morning</li><li>Prune in spring</li></ul>`
/** Markup the editor cannot hold exactly (a block inside a link), which the sanitiser keeps. */
const ODD_BODY = '<p>Intro</p><a href="https://garden.test/">Link <div>with a block inside</div></a>'

const fixture = {
  accounts: [
    {
      id: "acc_ed",
      email: EMAIL,
      password: PASSWORD,
      name: "Edith Editor",
      sites: [
        {
          id: "site_ed",
          name: "Rose Garden",
          url: "https://garden.test",
          articles: [
            { id: "art_ed", title: "Growing roses", url: "https://garden.test/roses", status: "published", published_at: "2026-09-15T09:00:00Z", "target keyword": "roses", body: BODY, "featured image": { url: "https://127.0.0.1:9/missing.jpg", alt: "Roses in a bed" } },
            { id: "art_move", title: "Moving roses", url: "https://garden.test/moving", status: "published", published_at: "2026-09-13T09:00:00Z", "target keyword": "moving", body: BODY },
            { id: "art_odd", title: "Odd markup", url: "https://garden.test/odd", status: "published", published_at: "2026-09-14T09:00:00Z", "target keyword": "odd", body: ODD_BODY },
          ],
          backlinks: [],
        },
      ],
    },
  ],
}

let server: StartedServer
let browser: Browser
let apiKey: string

const signIn = async (context: BrowserContext, email: string, password: string, on: StartedServer = server): Promise<Page> => {
  const page = await context.newPage()
  await page.goto(`${on.url}/`)
  await page.fill("#email", email)
  await page.fill("#password", password)
  await Promise.all([page.waitForURL(`${on.url}/sites`), page.click("button[type=submit]")])
  return page
}

const api = async <T>(path: string): Promise<T> => {
  const res = await fetch(`${server.url}/api/v1${path}`, { headers: { Authorization: `Bearer ${apiKey}` } })
  expect(res.status, path).toBe(200)
  return (await res.json()) as T
}

/** The body the form would save: the hidden textarea the editor keeps filled. */
const body = (page: Page): Promise<string> => page.inputValue("#body")

/**
 * Puts the caret (or a selection) in the editor's text, as a person clicking there would, and waits
 * until ProseMirror has taken it. ProseMirror reads the DOM selection only in its `selectionchange`
 * listener, and Chromium dispatches that event later, in a task of its own (a change made while one
 * is still pending, for instance after ProseMirror's own update on an undo, waits for that one).
 * A key pressed before it is handled acts on ProseMirror's previous selection: Control+x cuts other
 * text, Control+v pastes at the old caret.
 */
const select = async (page: Page, from: { text: string; offset: number }, to?: { text: string; offset: number }): Promise<void> => {
  await page.focus(".editor-content")
  await page.waitForFunction(() => document.querySelector(".editor-content")!.classList.contains("ProseMirror-focused"))
  // True once a selectionchange event has been dispatched with this selection in place: ProseMirror's
  // listener runs in that same dispatch, so before any later key press. False when something moved
  // the selection again first (ProseMirror restores its own after a fresh focus): then set it again.
  await expect
    .poll(() =>
      page.evaluate(
        ([from, to]) =>
          new Promise<boolean>((resolve) => {
            const find = (p: { text: string; offset: number }): [Node, number] => {
              const walker = document.createTreeWalker(document.querySelector(".editor-content")!, NodeFilter.SHOW_TEXT)
              for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
                const i = n.nodeValue!.indexOf(p.text)
                if (i >= 0 && n.parentElement?.closest(".pm-protected") === null) return [n, i + p.offset]
              }
              throw new Error(`no text ${p.text}`)
            }
            const [a, ao] = find(from)
            const [b, bo] = to === undefined ? [a, ao] : find(to)
            const selection = document.getSelection()!
            const isSet = () => selection.anchorNode === a && selection.anchorOffset === ao && selection.focusNode === b && selection.focusOffset === bo
            // Already there: setting it again dispatches no event, and ProseMirror read it when it got there.
            if (isSet()) return resolve(true)
            document.addEventListener("selectionchange", () => resolve(isSet()), { once: true })
            selection.setBaseAndExtent(a, ao, b, bo)
          }),
        [from, to] as const,
      ),
    )
    .toBe(true)
}

const lockMessage = (page: Page) => page.locator("#lock-message")

/** What has the focus: "editor", a field's id, or a toolbar control's name (its aria-label, else its title). */
const focusedControl = (page: Page): Promise<string | null> =>
  page.evaluate(() => {
    const el = document.activeElement
    if (el === null) return null
    if (el.classList.contains("editor-content")) return "editor"
    if (el.tagName === "INPUT") return el.id
    return el.getAttribute("aria-label") ?? el.getAttribute("title")
  })

/** Both protected links are still in the body, exactly. */
const expectLinksKept = async (page: Page): Promise<void> => {
  const html = await body(page)
  expect(html.split(PARTNER).length - 1, html).toBe(1)
  expect(html.split(SOIL).length - 1, html).toBe(1)
  expect(await page.locator(".editor-content .pm-protected").count()).toBe(2)
}

beforeAll(async () => {
  mkdirSync(shots, { recursive: true })
  // Previews count against the account's requests a minute like API calls: the demo account's
  // 30 reads, previews and 30 checks of one test pass 60, which is not what these tests are about.
  server = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "true", RATE_LIMIT_PER_MINUTE: "1000" } })
  await server.runtime.runPromise(importData(fixture))
  apiKey = (await server.runtime.runPromise(createApiKey("acc_ed", { name: "editor test", scope: "read-only" }))).key
  browser = await launchChromium()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
})

describe("the article editor in Chromium", () => {
  it("should edit and format text, keep protected links locked but movable, preview, and save one editor revision", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } })
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url })
    const page = await signIn(context, EMAIL, PASSWORD)
    const cspErrors: Array<string> = []
    const pageErrors: Array<string> = []
    page.on("console", (m) => {
      if (m.type() === "error" && /Content Security Policy/i.test(m.text())) cspErrors.push(m.text())
    })
    page.on("pageerror", (e) => pageErrors.push(e.message))
    await page.goto(`${server.url}/articles/art_ed`)
    await page.waitForSelector(".editor-content")
    expect(await page.getAttribute("button.editor-mode:has-text('Visual')", "aria-pressed")).toBe("true")
    expect(await page.isVisible("#body")).toBe(false)
    await expectLinksKept(page)

    // The featured image cannot load: a clear placeholder instead of a broken-image icon.
    await expect.poll(() => page.isVisible(".featured-missing")).toBe(true)
    expect(await page.isVisible("img.featured")).toBe(false)
    expect(await page.textContent(".featured-missing")).toContain("The image could not be loaded")

    // Type and format: bold by shortcut, italic by the toolbar, a heading by the style menu.
    await select(page, { text: "Roses like sun and good soil.", offset: 29 })
    await page.keyboard.type(" Feed them ")
    await page.keyboard.press("Control+b")
    await page.keyboard.type("every month")
    await page.keyboard.press("Control+b")
    await page.keyboard.type(".")
    await page.keyboard.press("Enter")
    await page.click("button[title=Italic]")
    await page.keyboard.type("Mulch helps too")
    await page.click("button[title=Italic]")
    await page.keyboard.press("Enter")
    await page.keyboard.type("Further reading")
    await page.selectOption(".editor-block", "h3")
    // A link on selected text.
    await page.keyboard.press("Enter")
    await page.keyboard.type("See the rose society.")
    await select(page, { text: "See the rose society.", offset: 8 }, { text: "See the rose society.", offset: 20 })
    await page.click("button[title=Link]")
    await page.fill("#editor-link-href", "https://roses.test/society")
    await page.keyboard.press("Enter")
    let html = await body(page)
    expect(html).toContain("<p>Roses like sun and good soil. Feed them <strong>every month</strong>.</p><p><em>Mulch helps too</em></p><h3>Further reading</h3>")
    expect(html).toContain('<p>See the <a href="https://roses.test/society">rose society</a>.</p>')
    await expectLinksKept(page)

    // Backspace just after a protected link, Delete just before it: refused, said next to it.
    await select(page, { text: " helps, and so does", offset: 0 })
    await page.keyboard.press("Backspace")
    await expect.poll(() => lockMessage(page).textContent()).toContain("“partner roses” is a protected link")
    expect(await lockMessage(page).isVisible()).toBe(true)
    await expectLinksKept(page)
    await page.screenshot({ path: join(shots, "editor-01-backspace-refused.png") })
    await select(page, { text: " helps, and so does", offset: 20 })
    await page.keyboard.press("Delete")
    await expect.poll(() => lockMessage(page).textContent()).toContain("“our soil guide” is a protected link")
    await expectLinksKept(page)
    // The message sits next to the link it is about.
    const linkBox = (await page.locator(".pm-protected", { hasText: "our soil guide" }).boundingBox())!
    const messageBox = (await lockMessage(page).boundingBox())!
    expect(Math.abs(messageBox.y - (linkBox.y + linkBox.height))).toBeLessThan(40)

    // Selecting across it and typing; selecting all and deleting; editing the link itself.
    await select(page, { text: "Our partner", offset: 4 }, { text: " helps, and so does", offset: 3 })
    await page.keyboard.type("x")
    await expectLinksKept(page)
    expect(await body(page)).toContain(`<p>Our partner ${PARTNER} helps`)
    await page.keyboard.press("Control+a")
    await page.keyboard.press("Delete")
    await expectLinksKept(page)
    await page.click(".pm-protected:has-text('partner roses')")
    await page.keyboard.type("changed")
    await page.keyboard.press("Backspace")
    await expectLinksKept(page)
    expect(await body(page)).not.toContain("changed")
    // The link tool does not wrap a protected link in another link.
    await select(page, { text: "Our partner", offset: 0 }, { text: " helps, and so does", offset: 6 })
    await page.click("button[title=Link]")
    await page.fill("#editor-link-href", "https://evil.test/")
    await page.keyboard.press("Enter")
    html = await body(page)
    expect(html).toContain(`<a href="https://evil.test/">Our partner </a>${PARTNER}<a href="https://evil.test/"> helps</a>`)
    await page.keyboard.press("Control+z")
    expect(await body(page)).not.toContain("evil.test")

    // Cut without paste: the rest of the selection goes, the protected link stays, and says why.
    await select(page, { text: "Our partner", offset: 4 }, { text: " helps, and so does", offset: 7 })
    await page.keyboard.press("Control+x")
    await expect.poll(() => lockMessage(page).textContent()).toContain("cutting leaves it here")
    expect(await body(page)).toContain(`<p>Our ${PARTNER} and so does ${SOIL}.</p>`)
    await expectLinksKept(page)
    // ...and the paste moves it (the cut text comes along, the link leaves its old place).
    await select(page, { text: "Prune in spring", offset: 15 })
    await page.keyboard.press("Control+v")
    await expect.poll(() => body(page)).toContain(`<li>Prune in springpartner ${PARTNER} helps,</li>`)
    expect(await body(page)).toContain(`<p>Our  and so does ${SOIL}.</p>`)
    await expectLinksKept(page)

    // Drag the other one to the start of the "Further reading" heading.
    await page.locator(".pm-protected", { hasText: "our soil guide" }).dragTo(page.locator(".editor-content h3"), { targetPosition: { x: 3, y: 5 } })
    await expect.poll(() => body(page)).toContain(`<h3>${SOIL}Further reading</h3>`)
    expect(await body(page)).toContain("<p>Our  and so does .</p>")
    await expectLinksKept(page)

    // A pasted element claiming to be protected is pasted as a plain link.
    await select(page, { text: "Mulch helps too", offset: 15 })
    await page.evaluate(() => {
      const data = new DataTransfer()
      data.setData("text/html", '<a href="https://forged.test/" data-service-protected="backlink">forged link</a>')
      data.setData("text/plain", "forged link")
      document.querySelector(".editor-content")!.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }))
    })
    await expect.poll(() => body(page)).toContain('<em>Mulch helps too</em><a href="https://forged.test/">forged link</a>')
    expect(await body(page)).not.toContain('data-service-protected="backlink">forged')
    await expectLinksKept(page)

    // axe-core with the editor open; the screenshot of the edited article.
    await page.locator("#edit").screenshot({ path: join(shots, "editor-02-edited.png") })
    expect(await seriousViolations(page)).toEqual([])

    // Save: first the dry run, then one revision tagged editor.
    await page.fill("#reason", "Editor test")
    await page.click("text=Save as new revision")
    const preview = page.locator("#edit-preview")
    await expect.poll(() => preview.textContent()).toContain("Protected links: all 2 kept.")
    expect(await preview.textContent()).toContain("The sanitiser keeps everything.")
    expect(await preview.textContent()).toContain("Saving makes a new revision (body changed).")
    await page.locator("#edit").screenshot({ path: join(shots, "editor-03-preview.png") })
    expect(await seriousViolations(page)).toEqual([])
    const saved = await body(page)
    await Promise.all([page.waitForURL(`${server.url}/articles/art_ed`), page.click("text=Confirm and save")])
    expect(await page.textContent("[role=status]")).toContain("Saved as revision 2")

    const revisions = await api<{ data: Array<{ number: number; origin: string; reason: string | null }> }>("/articles/art_ed/revisions")
    expect(revisions.data.map((r) => r.number)).toEqual([2, 1])
    expect(revisions.data[0]).toMatchObject({ number: 2, origin: "editor", reason: "Editor test" })
    const revision = await api<{ body: string }>("/articles/art_ed/revisions/2")
    expect(revision.body).toBe(saved)
    expect(revision.body).toContain(PARTNER)
    expect(revision.body).toContain(SOIL)
    expect(revision.body).toContain("<strong>every month</strong>")

    // The revisions side by side, word by word, from the core's diff.
    await page.goto(`${server.url}/articles/art_ed/revisions/1`)
    expect(await page.locator("table.compare thead").textContent()).toContain("Current (revision 2)")
    expect(await page.locator("table.compare ins").allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining("every month"), expect.stringContaining("See the rose society.")]))
    expect((await page.locator("table.compare del").allTextContents()).join(" ")).toContain("[removed: Our]")
    await page.screenshot({ path: join(shots, "editor-05-compare.png"), fullPage: true })
    expect(await seriousViolations(page)).toEqual([])
    expect(cspErrors).toEqual([])
    expect(pageErrors).toEqual([])
    await context.close()
  }, 120_000)

  it("should make the toolbar one Tab stop whose controls the arrow keys, Home and End move between, remembering the last one", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await signIn(context, EMAIL, PASSWORD)
    await page.goto(`${server.url}/articles/art_move`)
    await page.waitForSelector(".editor-content")
    const focused = () => focusedControl(page)
    /** The toolbar's controls that Tab stops at (tabindex 0, or none given). */
    const tabStops = () => page.evaluate(() => [...document.querySelectorAll<HTMLElement>("[role=toolbar] button, [role=toolbar] select")].filter((e) => e.tabIndex >= 0).map((e) => e.getAttribute("aria-label") ?? e.getAttribute("title")))
    expect(await tabStops()).toEqual(["Text style"])
    // One Tab stop: from the mode buttons, Tab enters the toolbar at its first control, the next Tab leaves it.
    await page.focus("button.editor-mode:has-text('HTML source')")
    await page.keyboard.press("Tab")
    expect(await focused()).toBe("Text style")
    await page.keyboard.press("Tab")
    expect(await focused()).toBe("editor")
    await page.keyboard.press("Shift+Tab")
    expect(await focused()).toBe("Text style")
    // The arrows move between the enabled controls (round the ends), Home and End to the first and last;
    // none of them changes the text style.
    const enabled = await page.evaluate(() => [...document.querySelectorAll<HTMLButtonElement | HTMLSelectElement>("[role=toolbar] button, [role=toolbar] select")].filter((e) => !e.disabled).map((e) => e.getAttribute("aria-label") ?? e.getAttribute("title")))
    expect(enabled).toContain("Insert image")
    expect(enabled).not.toContain("Undo") // nothing to undo yet
    for (const next of [...enabled.slice(1), enabled[0]]) {
      await page.keyboard.press("ArrowRight")
      expect(await focused()).toBe(next)
    }
    await page.keyboard.press("ArrowLeft")
    expect(await focused()).toBe(enabled.at(-1))
    await page.keyboard.press("Home")
    expect(await focused()).toBe("Text style")
    await page.keyboard.press("End")
    expect(await focused()).toBe(enabled.at(-1))
    await page.keyboard.press("Home")
    await page.keyboard.press("ArrowRight")
    await page.keyboard.press("ArrowRight")
    expect(await focused()).toBe("Italic")
    expect(await page.inputValue(".editor-block")).toBe("h2")
    // The last control focused is the toolbar's Tab stop when the focus comes back.
    expect(await tabStops()).toEqual(["Italic"])
    await page.keyboard.press("Tab")
    expect(await focused()).toBe("editor")
    await page.keyboard.press("Shift+Tab")
    expect(await focused()).toBe("Italic")
    // A remembered control that becomes disabled leaves the Tab stop on the first control, not none.
    await select(page, { text: "Roses like sun and good soil.", offset: 29 })
    await page.keyboard.type("!")
    await page.keyboard.press("Shift+Tab")
    expect(await focused()).toBe("Italic")
    await page.keyboard.press("End")
    expect(await focused()).toBe("Undo")
    await page.keyboard.press("Enter")
    expect(await focused()).toBe("editor")
    expect(await body(page)).toContain("<p>Roses like sun and good soil.</p>")
    expect(await tabStops()).toEqual(["Text style"])
    await page.keyboard.press("Shift+Tab")
    expect(await focused()).toBe("Text style")
    expect(await seriousViolations(page)).toEqual([])
    await context.close()
  }, 60_000)

  it("should name the toolbar's buttons by their words, without the symbols shown before them", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await signIn(context, EMAIL, PASSWORD)
    await page.goto(`${server.url}/articles/art_move`)
    await page.waitForSelector(".editor-content")
    const toolbar = page.getByRole("toolbar", { name: "Formatting" })
    for (const [name, symbol] of [["Bulleted list", "•"], ["Numbered list", "1."], ["Quote", "❝"]] as const) {
      const control = toolbar.getByRole("button", { name, exact: true })
      expect(await control.count(), name).toBe(1)
      expect(await control.innerText(), name).toBe(`${symbol} ${name}`)
    }
    await context.close()
  }, 60_000)

  it("should apply the image and link boxes with Enter and cancel them with Escape, back to the control that opened them", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await signIn(context, EMAIL, PASSWORD)
    await page.goto(`${server.url}/articles/art_move`)
    await page.waitForSelector(".editor-content")
    const focused = () => focusedControl(page)
    const before = await body(page)
    await select(page, { text: "Roses like sun and good soil.", offset: 29 })
    await page.keyboard.press("Shift+Tab")
    for (let i = 0; i < 12 && (await focused()) !== "Insert image"; i++) await page.keyboard.press("ArrowRight")
    // Opened from the keyboard, the box has the focus; Enter in its fields inserts the image.
    await page.keyboard.press("Enter")
    expect(await focused()).toBe("editor-image-src")
    await page.keyboard.type("https://img.test/rose.jpg")
    await page.keyboard.press("Tab")
    expect(await focused()).toBe("editor-image-alt")
    await page.keyboard.type("A red rose")
    await page.keyboard.press("Enter")
    expect(await page.isVisible("#editor-image-src")).toBe(false)
    expect(await focused()).toBe("editor")
    expect(await body(page)).toMatch(/<img src="https:\/\/img\.test\/rose\.jpg" alt="A red rose">/)
    // Escape, in either field, closes the box, inserts nothing, and gives the focus back to the Image button.
    for (const field of ["editor-image-src", "editor-image-alt"]) {
      await page.keyboard.press("Shift+Tab")
      expect(await focused()).toBe("Insert image")
      await page.keyboard.press("Enter")
      await page.fill("#editor-image-src", "https://img.test/other.jpg")
      await page.focus(`#${field}`)
      await page.keyboard.press("Escape")
      expect(await page.isVisible("#editor-image-src")).toBe(false)
      expect(await focused(), field).toBe("Insert image")
      expect(await body(page)).not.toContain("other.jpg")
      await page.keyboard.press("Tab")
    }
    // The link box does the same: Escape goes back to the Link button.
    await page.keyboard.press("Shift+Tab")
    for (let i = 0; i < 12 && (await focused()) !== "Link"; i++) await page.keyboard.press("ArrowLeft")
    await page.keyboard.press("Enter")
    expect(await focused()).toBe("editor-link-href")
    await page.keyboard.type("https://evil.test/")
    await page.keyboard.press("Escape")
    expect(await page.isVisible("#editor-link-href")).toBe(false)
    expect(await focused()).toBe("Link")
    expect(await body(page)).not.toContain("evil.test")
    expect((await body(page)).replace(/<img[^>]*>/, "")).toBe(before)
    await context.close()
  }, 60_000)

  it("should move a protected link selected on its own (from the keyboard) by cut and paste, not paste a plain copy", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url })
    const page = await signIn(context, EMAIL, PASSWORD)
    await page.goto(`${server.url}/articles/art_move`)
    await page.waitForSelector(".editor-content")
    // The arrow key selects the link itself (a node selection), whose copied HTML carries ProseMirror's
    // slice marker on the link's own element.
    await select(page, { text: " helps, and so does", offset: 0 })
    await page.keyboard.press("ArrowLeft")
    await expect.poll(() => page.locator(".ProseMirror-selectednode").textContent()).toContain("partner roses")
    await page.keyboard.press("Control+x")
    await expect.poll(() => lockMessage(page).textContent()).toContain("cutting leaves it here")
    await select(page, { text: "Prune in spring", offset: 15 })
    await page.keyboard.press("Control+v")
    await expect.poll(() => body(page)).toContain(`<li>Prune in spring${PARTNER}</li>`)
    expect(await body(page)).toContain("<p>Our partner  helps, and so does")
    await expectLinksKept(page)
    await context.close()
  }, 60_000)

  it("should not let an article's class attributes take the page's own styles in the editor (hidden text, a fake notice or lock), and still save them", async () => {
    // Whoever writes the body (an API key, an agent) chooses its classes: in the editor they must not
    // become this page's `visually-hidden`, `notice` or `pm-protected`, which would hide a link from
    // the owner editing it, or dress text as the service's own notice or a protected link.
    const classy = '<p>Seen <span class="visually-hidden">hidden spam</span> text</p><p class="notice notice-error">Your session expired</p><p><a class="pm-protected" href="https://spam.test/">fake lock</a></p>'
    await server.runtime.runPromise(importData({ accounts: [{ id: "acc_cls", email: "classes@example.com", password: PASSWORD, sites: [{ id: "site_cls", name: "Classes", url: "https://classes.test", articles: [{ id: "art_cls", title: "Classes", url: "https://classes.test/a", status: "published", body: classy }] }] }] }))
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await signIn(context, "classes@example.com", PASSWORD)
    await page.goto(`${server.url}/articles/art_cls`)
    await page.waitForSelector(".editor-content")
    expect(await page.textContent(".editor-content")).toContain("hidden spam")
    expect(await page.locator(".editor-content .visually-hidden, .editor-content .notice, .editor-content .pm-protected").count()).toBe(0)
    expect((await page.locator(".editor-content :text('hidden spam')").boundingBox())?.width ?? 0).toBeGreaterThan(20)
    // The classes are the article's: saved as they were.
    expect(await body(page)).toBe(classy)
    await context.close()
  }, 60_000)

  it("should paste from a word processor or a web page without its styles and event handlers, so editing on reports no CSP violation", async () => {
    // A document copied from a word processor or a web page carries inline styles and handlers. The
    // page's CSP refuses them (a console error each); in the editor they are the article's, not the page's.
    await server.runtime.runPromise(importData({ accounts: [{ id: "acc_paste", email: "paste@example.com", password: PASSWORD, sites: [{ id: "site_paste", name: "Paste", url: "https://paste.test", articles: [{ id: "art_paste", title: "Paste", url: "https://paste.test/a", status: "published", body: "<p>Start here.</p>" }] }] }] }))
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await signIn(context, "paste@example.com", PASSWORD)
    const cspErrors: Array<string> = []
    page.on("console", (m) => {
      if (m.type() === "error" && /Content Security Policy/i.test(m.text())) cspErrors.push(m.text())
    })
    await page.goto(`${server.url}/articles/art_paste`)
    await page.waitForSelector(".editor-content")
    await select(page, { text: "Start here.", offset: 11 })
    await page.evaluate(() => {
      const data = new DataTransfer()
      data.setData("text/html", '<p class="MsoNormal" style="color:red"><b style="mso-bidi-font-weight:normal">Bold</b> <span style="font-family:Arial" onmouseover="alert(1)">arial</span> <a href="https://x.test/" onclick="alert(2)">link</a><img src="https://127.0.0.1:9/x.jpg" onerror="alert(3)"></p>')
      data.setData("text/plain", "Bold arial link")
      document.querySelector(".editor-content")!.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }))
    })
    await expect.poll(() => body(page)).toContain("arial")
    expect(await page.locator(".editor-content [style], .editor-content [onmouseover], .editor-content [onclick], .editor-content [onerror]").count()).toBe(0)
    // Reading the pasted HTML at all reports its styles (Chromium checks them in any document, inert
    // or not); after that the body has none, so typing on (each keystroke serialises it) reports nothing.
    await page.waitForTimeout(300)
    const atPaste = cspErrors.length
    await page.keyboard.type(" More.")
    await expect.poll(() => body(page)).toContain("More.")
    await page.waitForTimeout(300)
    expect(cspErrors.slice(atPaste)).toEqual([])
    // What the sanitiser would remove is gone; the text and the formatting it keeps stay.
    const html = await body(page)
    expect(html).not.toMatch(/style=|onmouseover|onclick|onerror/)
    expect(html).toContain('<b>Bold</b> <span>arial</span> <a href="https://x.test/">link</a><img src="https://127.0.0.1:9/x.jpg">')
    await context.close()
  }, 60_000)

  it("should not make a copy from Google Docs bold: its <b style=\"font-weight:normal\"> wrapper is not bold", async () => {
    await server.runtime.runPromise(importData({ accounts: [{ id: "acc_gdocs", email: "gdocs@example.com", password: PASSWORD, sites: [{ id: "site_gdocs", name: "Docs", url: "https://docs.test", articles: [{ id: "art_gdocs", title: "Docs", url: "https://docs.test/a", status: "published", body: "<p>Start here.</p>" }] }] }] }))
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await signIn(context, "gdocs@example.com", PASSWORD)
    await page.goto(`${server.url}/articles/art_gdocs`)
    await page.waitForSelector(".editor-content")
    await select(page, { text: "Start here.", offset: 11 })
    await page.evaluate(() => {
      const data = new DataTransfer()
      data.setData("text/html", '<meta charset="utf-8"><b style="font-weight:normal;" id="docs-internal-guid-0a1b"><p dir="ltr"><span>Plain words</span></p><p dir="ltr"><span>More plain words</span></p></b>')
      data.setData("text/plain", "Plain words\n\nMore plain words")
      document.querySelector(".editor-content")!.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }))
    })
    await expect.poll(() => body(page)).toContain("More plain words")
    expect(await body(page)).toBe('<p>Start here.<span>Plain words</span></p><p dir="ltr"><span>More plain words</span></p>')
    expect(await page.locator(".editor-content b, .editor-content strong").count()).toBe(0)
    await context.close()
  }, 60_000)

  it("should ask before leaving a change made by Enter, a paste, a shortcut or the toolbar, not only by typing", async () => {
    await server.runtime.runPromise(importData({ accounts: [{ id: "acc_leave", email: "leave@example.com", password: PASSWORD, sites: [{ id: "site_leave", name: "Leave", url: "https://leave.test", articles: [{ id: "art_leave", title: "Leave", url: "https://leave.test/a", status: "published", body: "<p>First words here.</p>" }] }] }] }))
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await signIn(context, "leave@example.com", PASSWORD)
    const changes: ReadonlyArray<readonly [string, () => Promise<void>]> = [
      ["Enter", () => page.keyboard.press("Enter")],
      ["Control+b", async () => {
        await select(page, { text: "First", offset: 0 }, { text: "First", offset: 5 })
        await page.keyboard.press("Control+b")
      }],
      ["the Bold button", async () => {
        await select(page, { text: "First", offset: 0 }, { text: "First", offset: 5 })
        await page.click(".editor-toolbar button[aria-label=Bold]")
      }],
      ["a paste", () =>
        page.evaluate(() => {
          const data = new DataTransfer()
          data.setData("text/html", "<p>A pasted paragraph</p>")
          data.setData("text/plain", "A pasted paragraph")
          document.querySelector(".editor-content")!.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }))
        })],
    ]
    for (const [how, change] of changes) {
      await page.goto(`${server.url}/articles/art_leave`)
      await page.waitForSelector(".editor-content")
      await select(page, { text: "here.", offset: 5 })
      await change()
      await expect.poll(() => body(page), { message: how }).not.toBe("<p>First words here.</p>")
      const asked = new Promise<string>((resolve) => page.once("dialog", (d) => void d.dismiss().then(() => resolve(d.type()))))
      await page.click("nav[aria-label=Main] a:has-text('Sites')", { noWaitAfter: true })
      expect(await Promise.race([asked, new Promise((resolve) => setTimeout(() => resolve("left without asking"), 3000))]), how).toBe("beforeunload")
      expect(page.url(), how).toBe(`${server.url}/articles/art_leave`)
    }
    // Unchanged, it leaves without asking.
    await page.goto(`${server.url}/articles/art_leave`)
    await page.waitForSelector(".editor-content")
    await select(page, { text: "here.", offset: 5 })
    let asked = false
    page.on("dialog", (d) => {
      asked = true
      void d.accept()
    })
    await Promise.all([page.waitForURL(`${server.url}/sites`), page.click("nav[aria-label=Main] a:has-text('Sites')")])
    expect(asked).toBe(false)
    await context.close()
  }, 60_000)

  it("should open markup it cannot show in HTML source mode, say so, and save it unchanged", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await signIn(context, EMAIL, PASSWORD)
    await page.goto(`${server.url}/articles/art_odd`)
    await expect.poll(() => page.textContent("#editor-notice")).toContain("opens in HTML source mode")
    expect(await page.isVisible("#body")).toBe(true)
    expect(await page.isVisible(".editor-content")).toBe(false)
    await page.locator("#edit").screenshot({ path: join(shots, "editor-04-source-mode.png") })
    expect(await seriousViolations(page)).toEqual([])
    // Trying the visual mode again keeps the source and says why.
    await page.click("button.editor-mode:has-text('Visual')")
    expect(await page.getAttribute("button.editor-mode:has-text('HTML source')", "aria-pressed")).toBe("true")
    await page.click("text=Save as new revision")
    await expect.poll(() => page.locator("#edit-preview").textContent()).toContain("Nothing changed")
    await Promise.all([page.waitForURL(`${server.url}/articles/art_odd`), page.click("text=Confirm and save")])
    expect(await page.textContent("[role=status]")).toContain("Nothing changed, so no new revision was made.")
    // Source edits come back to the visual editor when they are representable.
    await page.fill("#body", "<p>Plain now</p>")
    await page.click("button.editor-mode:has-text('Visual')")
    expect(await page.getAttribute("button.editor-mode:has-text('Visual')", "aria-pressed")).toBe("true")
    expect(await page.textContent(".editor-content")).toBe("Plain now")
    await context.close()
  }, 60_000)

  it("should save every demo article unchanged without a new revision", async () => {
    const demo = server.demo!
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await signIn(context, demo.email, demo.password)
    const articles = demoData().accounts[0]!.sites!.flatMap((s) => (s as unknown as { articles: Array<{ id: string; title: string }> }).articles)
    expect(articles.length).toBe(30)
    // Two of them the way a person does it: open, save, read the dry run, confirm.
    for (const { id } of articles.slice(0, 2)) {
      // Not waiting for the load event: the demo's featured images point at hosts that do not exist.
      await page.goto(`${server.url}/articles/${id}`, { waitUntil: "domcontentloaded" })
      await page.waitForSelector(".editor-content")
      expect(await page.getAttribute("button.editor-mode:has-text('Visual')", "aria-pressed"), id).toBe("true")
      await page.click("text=Save as new revision")
      await expect.poll(() => page.locator("#edit-preview").textContent()).toContain("Nothing changed")
      await Promise.all([page.waitForURL(`${server.url}/articles/${id}`, { waitUntil: "domcontentloaded" }), page.click("text=Confirm and save")])
      expect(await page.textContent("[role=status]"), id).toContain("Nothing changed, so no new revision was made.")
    }
    // All of them: each stored body through the editor on this page, then posted by the edit form's route.
    const demoKey = { Authorization: `Bearer ${demo.apiKey}` }
    const stored = await Promise.all(
      articles.map(async ({ id }) => (await (await fetch(`${server.url}/api/v1/articles/${id}`, { headers: demoKey })).json()) as { id: string; title: string; body: string; revision: number }),
    )
    const outcomes = await page.evaluate(async (stored) => {
      const textarea = document.querySelector<HTMLTextAreaElement>("#body")!
      const visual = document.querySelector<HTMLButtonElement>("button.editor-mode:nth-child(1)")!
      const source = document.querySelector<HTMLButtonElement>("button.editor-mode:nth-child(2)")!
      const csrf = document.querySelector<HTMLInputElement>("input[name=_csrf]")!.value
      const out: Array<{ id: string; visual: boolean; status: string }> = []
      for (const a of stored) {
        source.click()
        textarea.value = a.body
        visual.click()
        const inVisual = visual.getAttribute("aria-pressed") === "true"
        source.click()
        const form = new URLSearchParams({ _csrf: csrf, title: a.title, body: textarea.value, revision: String(a.revision), reason: "" })
        const res = await fetch(`/articles/${a.id}/edit`, { method: "POST", body: form })
        const page = new DOMParser().parseFromString(await res.text(), "text/html")
        out.push({ id: a.id, visual: inVisual, status: page.querySelector("[role=status]")?.textContent?.trim() ?? `${res.status} ${res.url} ${(page.querySelector("[role=alert]") ?? page.querySelector("h1"))?.textContent?.trim()}` })
      }
      return out
    }, stored)
    for (const o of outcomes) expect(o, o.id).toEqual({ id: o.id, visual: true, status: "Nothing changed, so no new revision was made." })
    for (const { id } of articles) {
      const res = await fetch(`${server.url}/api/v1/articles/${id}`, { headers: demoKey })
      expect(((await res.json()) as { revision: number }).revision, id).toBe(1)
    }
    await context.close()
  }, 120_000)

  it("should keep every benign corpus body exactly, in the visual editor or, failing that, in source mode", async () => {
    const inputs: Array<string> = [
      ...(JSON.parse(readFileSync(join(corpora, "dompurify-expect.json"), "utf8")) as Array<{ payload: string }>).map((c) => c.payload),
      ...(JSON.parse(readFileSync(join(corpora, "owasp-xss-filter-evasion.json"), "utf8")) as Array<{ payload: string }>).map((c) => c.payload),
      ...(JSON.parse(readFileSync(join(corpora, "html5lib-tree-construction-inputs.json"), "utf8")) as Array<{ data: string }>).map((c) => c.data),
    ]
    // Benign: the sanitiser removes nothing. The stored article is its sanitised form.
    const bodies = [...new Set(inputs.flatMap((x) => {
      const r = Effect.runSync(Effect.result(sanitizeArticleHtml(x)))
      return r._tag === "Success" && r.success.report.removed.length === 0 ? [r.success.html] : []
    }))]
    expect(bodies.length).toBeGreaterThan(200)
    const context = await browser.newContext()
    const page = await signIn(context, EMAIL, PASSWORD)
    await page.goto(`${server.url}/articles/art_ed`)
    await page.waitForSelector(".editor-content")
    // Each body goes through the page's own controls: into the source, to the visual editor, back.
    const results = await page.evaluate((bodies) => {
      const textarea = document.querySelector<HTMLTextAreaElement>("#body")!
      const visual = document.querySelector<HTMLButtonElement>("button.editor-mode:nth-child(1)")!
      const source = document.querySelector<HTMLButtonElement>("button.editor-mode:nth-child(2)")!
      return bodies.map((b) => {
        source.click()
        textarea.value = b
        visual.click()
        if (visual.getAttribute("aria-pressed") !== "true") return { visual: false, out: textarea.value, notice: document.querySelector("#editor-notice")!.textContent ?? "" }
        source.click()
        return { visual: true, out: textarea.value, notice: "" }
      })
    }, bodies)
    let visual = 0
    results.forEach((r, i) => {
      const stored = bodies[i]!
      const resaved = Effect.runSync(sanitizeArticleHtml(r.out)).html
      expect(resaved, `${JSON.stringify(stored)} came back as ${JSON.stringify(r.out)}`).toBe(stored)
      if (r.visual) visual++
      else expect(r.notice, stored).toContain("stays in source mode")
    })
    console.log(`corpus round trip: ${bodies.length} benign bodies, ${visual} in the visual editor, ${bodies.length - visual} in source mode`)
    // Everyday structures open in the visual editor.
    for (const s of ["<p>hello</p>", "<ul><li>A </li> <li>B</li></ul>", "<table><tbody><tr><td>A</td></tr></tbody></table>", "<pre>x\ny</pre>", "Line1<br>Line2<br>Line3<br>Line4"]) {
      expect(results[bodies.indexOf(s)]?.visual, s).toBe(true)
    }
    await context.close()
  }, 120_000)

  it("should tell a preview refused past the account's limit in place of the preview, and ask for a preview again on the next press", async () => {
    // One request a minute: the first preview is counted, the second is refused.
    const limited = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false", RATE_LIMIT_PER_MINUTE: "1" } })
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } })
    try {
      await limited.runtime.runPromise(importData(fixture))
      const page = await signIn(context, EMAIL, PASSWORD, limited)
      await page.goto(`${limited.url}/articles/art_ed`)
      await page.waitForSelector(".editor-content")
      await page.click("text=Save as new revision")
      await expect.poll(() => page.locator("#edit-preview").textContent()).toContain("Before you save")
      // An edit after the preview asks for a new one, which is over the limit.
      await select(page, { text: "Roses like sun and good soil.", offset: 29 })
      await page.keyboard.type(" More.")
      await page.click("text=Save as new revision")
      await expect.poll(() => page.locator("#edit-preview").textContent()).toMatch(/No preview now: your account has made more than 1 requests in a minute \(previews count like API calls\)\. Wait \d+ seconds, then press Save again\./)
      expect(await page.locator("#edit-preview").textContent()).not.toContain("Before you save")
      // Nothing was saved, and the button still asks for a preview first.
      expect(await page.locator("button:has-text('Save as new revision')").count()).toBe(1)
      expect(await page.locator("button:has-text('Confirm and save')").count()).toBe(0)
    } finally {
      await context.close()
      await limited.close()
    }
  }, 120_000)
})
