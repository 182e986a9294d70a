/**
 * The conflict page sanitises the parts a person typed in one call of the sanitiser, not one
 * each: a body of many conflicts would otherwise make as many pool jobs for one form post. The
 * whole app is composed as the server composes it and spoken to over HTTP; only the HTML
 * analyzer is wrapped, to count its calls (on a server each is a job of the sanitiser's pool).
 */
import { type CoreServices, getArticle, HtmlAnalyzer, importData, RateLimited } from "@content-site/core"
import { headerImageInspector, inlineHtmlAnalyzer, memoryStorage, settingsLayer, tableImageFetcher } from "@content-site/memory"
import { nodeSecrets } from "@content-site/platform"
import { randomIds, systemClock } from "@content-site/platform/web"
import { Effect, Layer, ManagedRuntime } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { composeApp } from "../../apps/server/compose.ts"
import { Browser } from "../mcp/support.ts"

const counts = { analyze: 0, sanitizeEach: 0 }
/** Set: the next call of sanitizeEach is refused as a busy pool refuses it (the account's share taken). */
let refuseNextParts = false
let server: Server
let url = ""
let runtime: ManagedRuntime.ManagedRuntime<CoreServices, never>

/** The inline analyzer, counting the calls that sanitise. */
const countingAnalyzer = (): Layer.Layer<HtmlAnalyzer> => {
  const inner = Effect.runSync(Effect.provide(HtmlAnalyzer.use((a) => Effect.succeed(a)), inlineHtmlAnalyzer))
  return Layer.succeed(HtmlAnalyzer, {
    ...inner,
    analyze: (html, owner) => Effect.suspend(() => (counts.analyze++, inner.analyze(html, owner))),
    sanitizeEach: (parts, owner) =>
      Effect.suspend(() => {
        counts.sanitizeEach++
        if (!refuseNextParts) return inner.sanitizeEach(parts, owner)
        refuseNextParts = false
        return Effect.fail(new RateLimited({ limit: 4, retryAfterSeconds: 2, counted: "sanitising jobs running or queued" }))
      }),
  })
}

/** Paragraphs 0 to 199; those at an even index say `word` instead of "Base". */
const bodyOf = (word: string) => Array.from({ length: 200 }, (_, i) => `<p>${i % 2 === 0 ? word : "Base"} ${i}</p>`).join("\n")

beforeAll(async () => {
  server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  runtime = ManagedRuntime.make(
    Layer.mergeAll(memoryStorage(), systemClock, randomIds, nodeSecrets({ N: 2 ** 10, r: 8, p: 1 }), settingsLayer(url, {}), headerImageInspector, countingAnalyzer(), tableImageFetcher(new Map())),
  )
  await runtime.runPromise(
    importData({
      accounts: [
        {
          id: "acc_cp",
          email: "parts@example.com",
          password: "password-parts",
          name: "Parts",
          sites: [{ id: "site_cp", name: "Parts", url: "https://parts.test", articles: [
            { id: "art_cp", title: "Many parts", url: "https://parts.test/a", status: "published", published_at: "2026-11-01T09:00:00Z", "target keyword": "k", body: bodyOf("Base") },
          ] }],
        },
      ],
    }),
  )
  const app = await composeApp({ runtime, publicUrl: url, env: {}, ready: async () => true, trustProxy: false, isDraining: () => false })
  server.on("request", app.callback())
})
afterAll(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve))
  await runtime?.dispose()
})

const hidden = (html: string, name: string): string => {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html)
  if (m === null) throw new Error(`no field ${name}`)
  return m[1]!
}

/** Signs in, makes `conflicts` of the article's paragraphs conflict (someone saves every other one; the person, on the revision before, changes the same ones) and answers the conflict page's form, its units and the browser. */
const conflictPage = async (revision: number) => {
  const browser = new Browser()
  const signInPage = await (await browser.request(`${url}/`)).text()
  expect((await browser.request(`${url}/`, { form: { _csrf: hidden(signInPage, "_csrf"), email: "parts@example.com", password: "password-parts", next: "/sites" } })).status).toBe(303)
  const csrf = hidden(await (await browser.request(`${url}/articles/art_cp`)).text(), "_csrf")
  expect((await browser.request(`${url}/articles/art_cp/edit`, { form: { _csrf: csrf, revision: String(revision), title: "Many parts", body: bodyOf(`Theirs ${revision}`) } })).status).toBe(303)
  const refused = await browser.request(`${url}/articles/art_cp/edit`, { form: { _csrf: csrf, revision: String(revision), title: "Many parts", body: bodyOf(`Mine ${revision}`) } })
  const at = refused.headers.get("location")!
  expect(at).toMatch(/^\/articles\/art_cp\/merge\?draft=/)
  const page = await (await browser.request(`${url}${at}`)).text()
  const units = [...new Set([...page.matchAll(/name="choice_(body_[0-9]+)"/g)].map((m) => m[1]!))]
  expect(units).toHaveLength(100)
  const form: Record<string, string> = { _csrf: csrf, draft: hidden(page, "draft"), theirs: String(revision + 1) }
  return { browser, units, form }
}

const caller = { accountId: "acc_cp", actor: { type: "user" as const, id: "acc_cp", name: "Parts" }, scope: "write" as const, channel: "web" as const, requestId: "req_parts", action: "TEST", startedAt: Date.now() }

describe("the conflict page's typed parts", () => {
  it("should sanitise 100 typed parts in one call of the sanitiser, each on its own", async () => {
    const { browser, units, form } = await conflictPage(1)
    // each part typed with a tag left open (and one with an unclosed comment): it must end where it was typed
    units.forEach((unit, i) => {
      form[`choice_${unit}`] = "edit"
      form[`edit_${unit}`] = i === 0 ? "<p>Typed 0 <!-- left open" : `<p>Typed ${i} <b>bold`
    })
    const before = { ...counts }
    const settled = await browser.request(`${url}/articles/art_cp/merge`, { form })
    expect(settled.status).toBe(303)
    expect(settled.headers.get("location")).toBe("/articles/art_cp")
    // one call for the 100 typed parts (and a handful for the merge and the save), not one call a part
    expect(counts.sanitizeEach - before.sanitizeEach).toBe(1)
    expect(counts.analyze - before.analyze).toBeLessThan(10)
    const saved = await runtime.runPromise(getArticle(caller, "art_cp"))
    expect(saved.revision).toBe(3)
    expect(saved.body).toContain("<p>Typed 0 </p>\n<p>Base 1</p>")
    for (let i = 1; i < 100; i++) expect(saved.body).toContain(`<p>Typed ${i} <b>bold</b></p>\n<p>Base ${2 * i + 1}</p>`)
  })

  it("should show the conflict page again with every typed part when the sanitiser cannot take them now, never join them as typed", async () => {
    const { browser, units, form } = await conflictPage(3)
    // the first typed part leaves a comment open: joined as typed, it would swallow every part after it
    units.forEach((unit, i) => {
      form[`choice_${unit}`] = "edit"
      form[`edit_${unit}`] = i === 0 ? "<p>Typed again 0 <!-- left open" : `<p>Typed again ${i}</p>`
    })
    refuseNextParts = true
    const refused = await browser.request(`${url}/articles/art_cp/merge`, { form })
    expect(refused.status).toBe(429)
    expect(refused.headers.get("retry-after")).toBe("2")
    const page = await refused.text()
    expect(page).toContain("Your edit was not saved")
    // everything typed is on the page again, in its field
    for (let i = 1; i < 100; i++) expect(page).toContain(`Typed again ${i}`)
    expect((await runtime.runPromise(getArticle(caller, "art_cp"))).revision).toBe(4)
    // sent again once the pool has room: saved, every part where it was typed
    const settled = await browser.request(`${url}/articles/art_cp/merge`, { form })
    expect(settled.status).toBe(303)
    const saved = await runtime.runPromise(getArticle(caller, "art_cp"))
    expect(saved.revision).toBe(5)
    for (let i = 1; i < 100; i++) expect(saved.body).toContain(`<p>Typed again ${i}</p>`)
  })
})
