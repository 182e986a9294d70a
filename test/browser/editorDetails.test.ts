/**
 * Details of the article editor in Chromium, each a defect found by using it as a person does:
 * - a paste from a word processor (Google Docs, Word online) keeps the bold and italic its spans
 *   say with a style only, as `<strong>` and `<em>`; a heading a web page's copy styles as bold
 *   gets no `<strong>`;
 * - a protected link is part of the text, not a control of its own: Tab leaves the editor past it,
 *   and keys pressed while it has the focus (a click puts it there) change nothing (Enter inserted
 *   an empty paragraph at the top, out of sight);
 * - the list and quote buttons are toggles and say whether they are on with aria-pressed, as Bold does.
 * One server and one browser for the three; each case signs in in a context of its own.
 */
import type { Page } from "playwright-core"
import { describe, expect, it } from "vitest"
import { editorPages } from "../support/editorPages.ts"

const PERSON = { email: "editor-details@example.com", password: "editor details password" }
const ARTICLES = {
  art_paste: "<p>Start here.</p>",
  art_keys: '<h2>Roses</h2><p>Read <a href="https://127.0.0.1:9/partner" data-service-protected="backlink">our partner</a> first.</p><p>More text.</p>',
  art_toggles: "<p>A paragraph.</p><ul><li>Bullet item</li></ul><ol><li>Numbered item</li></ol><blockquote><p>Quoted words</p></blockquote>",
}

const { url, editorOf } = editorPages({ accountId: "acc_ed", siteId: "site_ed", siteName: "Editor", host: "editor.test", person: PERSON }, ARTICLES)

const paste = (page: Page, html: string): Promise<void> =>
  page.evaluate((html) => {
    const data = new DataTransfer()
    data.setData("text/html", html)
    data.setData("text/plain", "pasted")
    document.querySelector(".editor-content")!.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }))
  }, html)

const pressed = (page: Page): Promise<Record<string, string | null>> =>
  page.evaluate(() => Object.fromEntries(["Bulleted list", "Numbered list", "Quote"].map((t) => [t, document.querySelector(`[role=toolbar] button[title="${t}"]`)!.getAttribute("aria-pressed")])))

describe("the article editor in Chromium", () => {
  it("should keep a Google Docs copy's bold and italic spans as strong and em, and not bolden a styled heading", async () => {
    const { context, page } = await editorOf("art_paste")
    // the caret after the article's last word, as the editor itself knows it (a character typed
    // there shows it): the paste goes after it
    await page.click(".editor-content p >> nth=-1")
    await page.keyboard.press("End")
    await page.keyboard.type("!")
    await expect.poll(() => page.inputValue("#body")).toContain("Start here.!</p>")
    await paste(
      page,
      '<meta charset="utf-8"><b style="font-weight:normal;" id="docs-internal-guid-0a1b"><p dir="ltr"><span style="font-weight:400;">Plain words </span><span style="font-size:11pt;font-weight:700;">bold words</span></p>' +
        '<p dir="ltr"><span style="font-style:italic;font-weight:400">italic words</span></p></b><h2 style="font-weight: 700">A heading</h2>',
    )
    await expect.poll(() => page.inputValue("#body")).toContain("A heading")
    const html = await page.inputValue("#body")
    expect(html).not.toContain("style=")
    expect(html).toMatch(/<strong>(<span>)?bold words(<\/span>)?<\/strong>/)
    expect(html).toMatch(/<em>(<span>)?italic words(<\/span>)?<\/em>/)
    expect(html).not.toMatch(/<strong>(<span>)?Plain words/)
    expect(html).toMatch(/^<p>Start here\.!/)
    expect(html).toContain("<h2>A heading</h2>")
    await context.close()
  }, 60_000)

  it("should leave the editor with Tab past a protected link, and change nothing on Enter or Shift+Enter while the link has the focus", async () => {
    const { context, page } = await editorOf("art_keys")
    const before = await page.inputValue("#body")

    await page.focus(".editor-content")
    await page.keyboard.press("Tab")
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("reason")

    // Following the link is the browser's business (kept from leaving here, for the test only).
    await page.evaluate(() => document.addEventListener("click", (e) => e.preventDefault(), true))
    await page.focus(".editor-content .pm-protected a")
    for (const key of ["Enter", "Shift+Enter"]) {
      await page.keyboard.press(key)
      await page.waitForTimeout(100)
      expect(await page.inputValue("#body"), key).toBe(before)
    }
    expect(page.url()).toBe(`${url()}/articles/art_keys`)
    await context.close()
  }, 60_000)

  it("should say with aria-pressed whether the caret is in a bulleted list, a numbered list or a quote, and follow a toggle", async () => {
    const { context, page } = await editorOf("art_toggles")

    await page.click(".editor-content p >> nth=0")
    await expect.poll(() => pressed(page)).toEqual({ "Bulleted list": "false", "Numbered list": "false", Quote: "false" })
    await page.click(".editor-content ul li")
    await expect.poll(() => pressed(page)).toEqual({ "Bulleted list": "true", "Numbered list": "false", Quote: "false" })
    await page.click(".editor-content ol li")
    await expect.poll(() => pressed(page)).toEqual({ "Bulleted list": "false", "Numbered list": "true", Quote: "false" })
    await page.click(".editor-content blockquote p")
    await expect.poll(() => pressed(page)).toEqual({ "Bulleted list": "false", "Numbered list": "false", Quote: "true" })
    // Pressed again, the quote goes, and so does the button's pressed state.
    await page.click("[role=toolbar] button[title=Quote]")
    expect(await page.inputValue("#body")).not.toContain("<blockquote>")
    await expect.poll(() => pressed(page)).toEqual({ "Bulleted list": "false", "Numbered list": "false", Quote: "false" })
    await context.close()
  }, 60_000)
})
