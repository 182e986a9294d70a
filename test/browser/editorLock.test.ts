/**
 * The protected-link lock of the article editor in Chromium, each case a defect found by using it:
 * - typing over a select-all (Ctrl+A) that holds protected links is refused as Delete over a range
 *   is (docs/editor.md), with the text left as it was on screen and a message that says why and
 *   what to do instead;
 * - switching from the HTML source to the visual editor keeps the undo history: Ctrl+Z after the
 *   switch takes back an edit made before it, and the text shown is the text saved.
 * - a cut that keeps the protected links in its selection leaves the caret where it began, so
 *   Ctrl+A, Ctrl+X and typing replaces the rest of the text (the selection stayed over the links).
 */
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { editorPages } from "../support/editorPages.ts"

const PERSON = { email: "editor-lock@example.com", password: "editor lock password" }
const PARTNER = '<a href="https://127.0.0.1:9/partner" data-service-protected="backlink">our partner</a>'
const SOIL = '<a href="https://127.0.0.1:9/soil" data-service-protected="internal">soil guide</a>'
const ARTICLES = {
  art_all: `<h2>Roses</h2><p>Read ${PARTNER} first.</p><p>Then the ${SOIL}.</p>`,
  art_undo: `<p>First words here.</p><p>Read ${PARTNER} first.</p>`,
}

const { editorOf } = editorPages({ accountId: "acc_lock", siteId: "site_lock", siteName: "Lock", host: "lock.test", person: PERSON }, ARTICLES)

const body = (page: Page): Promise<string> => page.inputValue("#body")
/** The editor's switch to its HTML source. */
const SOURCE = "button.editor-mode:has-text('HTML source')"
/** Back to the visual editor, and the switch says so. */
const toVisual = async (page: Page): Promise<void> => {
  await page.click("button.editor-mode:has-text('Visual')")
  expect(await page.getAttribute("button.editor-mode:has-text('Visual')", "aria-pressed")).toBe("true")
}
/** The editor's visible text, without the Protected badges. */
const shown = (page: Page): Promise<string> =>
  page.evaluate(() => {
    const c = document.querySelector(".editor-content")!.cloneNode(true) as HTMLElement
    for (const b of Array.from(c.querySelectorAll(".pm-lock"))) b.remove()
    return c.textContent ?? ""
  })

describe("the article editor's protected-link lock in Chromium", () => {
  it("should refuse typing over a select-all that holds protected links as Delete is, keep the text shown, and say why and what to do", async () => {
    const { context, page } = await editorOf("art_all")
    const before = await body(page)
    const shownBefore = await shown(page)
    await page.click(".editor-content p >> nth=0")
    await page.keyboard.press("Control+a")
    await page.keyboard.type("x")
    await expect.poll(() => page.locator("#lock-message").isVisible()).toBe(true)
    const message = (await page.locator("#lock-message").textContent()) ?? ""
    // Why: typing replaces the selection, which holds a protected link; what instead: select around
    // it, or cut first (a cut keeps protected links in place).
    expect(message).toMatch(/typing/i)
    expect(message).toContain("our partner")
    expect(message).toMatch(/cut/i)
    await page.waitForTimeout(200)
    expect(await body(page)).toBe(before)
    expect(await shown(page)).toBe(shownBefore)
    expect(await page.locator(".editor-content .pm-protected").count()).toBe(2)
    await context.close()
  }, 60_000)

  it("should keep the undo history across a switch from the HTML source back to the visual editor", async () => {
    const { context, page } = await editorOf("art_undo")
    const before = await body(page)
    await page.click(".editor-content p >> nth=0")
    await page.keyboard.press("End")
    await page.keyboard.type(" Added")
    await expect.poll(() => body(page)).toContain("First words here. Added</p>")
    const added = await body(page)
    // Switching with no edit in the source: the first Ctrl+Z takes back the typing.
    await page.click(SOURCE)
    await toVisual(page)
    await page.focus(".editor-content")
    await page.keyboard.press("Control+z")
    await expect.poll(() => body(page)).toBe(before)
    await page.keyboard.press("Control+y")
    await expect.poll(() => body(page)).toBe(added)
    // With an edit in the source: Ctrl+Z takes it back first, then the typing before it.
    await page.click(SOURCE)
    await page.fill("#body", added.replace("<p>Read ", "<p>Please read "))
    await toVisual(page)
    expect(await shown(page)).toContain("Please read")
    await page.focus(".editor-content")
    await page.keyboard.press("Control+z")
    await expect.poll(() => body(page)).toBe(added)
    await page.keyboard.press("Control+z")
    await expect.poll(() => body(page)).toBe(before)
    expect(await shown(page)).toContain("First words here.Read")
    await context.close()
  }, 60_000)
  it("should bring back by Ctrl+Z a protected link removed in the HTML source, once back in the visual editor", async () => {
    const { context, page } = await editorOf("art_undo")
    const before = await body(page)
    await page.click(SOURCE)
    await page.fill("#body", before.replace(PARTNER, "nobody"))
    await toVisual(page)
    expect(await page.locator(".editor-content .pm-protected").count()).toBe(0)
    await page.focus(".editor-content")
    await page.keyboard.press("Control+z")
    await expect.poll(() => body(page)).toBe(before)
    expect(await page.locator(".editor-content .pm-protected").count()).toBe(1)
    await context.close()
  }, 60_000)
  it("should keep an edit made in the HTML source an undo step of its own, not merged with the typing just before it or after it", async () => {
    const { context, page } = await editorOf("art_undo")
    await page.click(".editor-content p >> nth=0")
    await page.keyboard.press("End")
    await page.keyboard.type(" Added")
    await expect.poll(() => body(page)).toContain("First words here. Added</p>")
    const added = await body(page)
    // At once, and next to the typing: ProseMirror's history groups quick neighbouring changes.
    await page.click(SOURCE)
    await page.fill("#body", added.replace(" Added</p>", " Added more</p>"))
    await toVisual(page)
    const sourced = await body(page)
    expect(sourced).toContain(" Added more</p>")
    await page.focus(".editor-content")
    await page.keyboard.type("!")
    await expect.poll(() => body(page)).not.toBe(sourced)
    await page.keyboard.press("Control+z")
    await expect.poll(() => body(page)).toBe(sourced)
    await page.keyboard.press("Control+z")
    await expect.poll(() => body(page)).toBe(added)
    await context.close()
  }, 60_000)
  it("should leave the caret before the protected links a cut kept, so typing after Ctrl+A, Ctrl+X replaces the rest of the text", async () => {
    const { context, page } = await editorOf("art_all")
    await page.click(".editor-content p >> nth=0")
    await page.keyboard.press("Control+a")
    await page.keyboard.press("Control+x")
    await expect.poll(() => page.locator("#lock-message").textContent()).toContain("cutting leaves it here")
    await expect.poll(() => body(page)).toBe(`<p>${PARTNER}${SOIL}</p>`)
    await page.keyboard.type("New words")
    await expect.poll(() => body(page)).toBe(`<p>New words${PARTNER}${SOIL}</p>`)
    await context.close()
  }, 60_000)
})
