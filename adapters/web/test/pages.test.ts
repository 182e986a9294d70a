/** The web pages over HTTP, as a browser without JavaScript would use them. */
import { ActivityLog, ArticleWriter, getArticle, HtmlAnalyzer, importData, listActivity, makeRewriteBatch, OAuthStore, updateArticle } from "@content-site/core"
import { Effect, Option } from "effect"
import { createHash } from "node:crypto"
import { request } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type StartedServer, type StartOptions, startServer } from "../../../apps/server/server.ts"
import { cookieClient } from "../../../test/support/webSignIn.ts"
import type { HttpDeps } from "@content-site/http"
import type { ParameterizedContext } from "koa"
import { adoptPendingDraft, dropDraft, findDraft, findPendingDraft, keepDraft, MAX_DRAFTS } from "../src/drafts.ts"

const fixture = {
  accounts: [
    {
      id: "acc_p1",
      email: "one@example.com",
      password: "password-one",
      name: "One",
      sites: [
        {
          id: "site_p1",
          name: "First <Site>",
          url: "https://one.test",
          articles: [
            {
              id: "art_p3",
              title: "Plain",
              url: "https://one.test/plain",
              status: "published",
              published_at: "2026-10-01T09:00:00Z",
              "target keyword": "k",
              body: "<p>No links yet.</p>",
            },
            {
              id: "art_p1",
              title: "<img src=x onerror=alert(1)> Title",
              url: "https://one.test/a",
              status: "published",
              published_at: "2026-11-01T09:00:00Z",
              "target keyword": "k",
              body: '<p>Hello <a href="https://partner.test/" data-service-protected="backlink">partner</a></p>',
            },
          ],
        },
      ],
    },
    {
      id: "acc_p2",
      email: "two@example.com",
      password: "password-two",
      name: "Two",
      sites: [{ id: "site_p2", name: "Second", url: "https://two.test", articles: [
        { id: "art_p2", title: "Theirs", url: "https://two.test/a", status: "published", published_at: "2026-11-01T09:00:00Z", "target keyword": "k", body: "<p>x</p>" },
        { id: "art_m1", title: "Merge one", url: "https://two.test/m1", status: "published", published_at: "2026-11-01T09:00:00Z", "target keyword": "k", body: "<p>One</p>" },
        { id: "art_m2", title: "Merge two", url: "https://two.test/m2", status: "published", published_at: "2026-11-01T09:00:00Z", "target keyword": "k", body: "<p>Before</p>\n<p>Shared</p>" },
        { id: "art_m3", title: "Merge three", url: "https://two.test/m3", status: "published", published_at: "2026-11-01T09:00:00Z", "target keyword": "k", body: "<p>Before</p>\n<p>Shared</p>" },
        { id: "art_m4", title: "Merge four", url: "https://two.test/m4", status: "published", published_at: "2026-11-01T09:00:00Z", "target keyword": "k", body: "<p>Before</p>\n<p>Shared</p>" },
        { id: "art_m5", title: "Merge five", url: "https://two.test/m5", status: "published", published_at: "2026-11-01T09:00:00Z", "target keyword": "k", body: "<p>Before</p>\n<p>Shared</p>" },
        { id: "art_m6", title: "Merge six", url: "https://two.test/m6", status: "published", published_at: "2026-11-01T09:00:00Z", "target keyword": "k", body: "<p>Before</p>\n<p>Shared</p>" },
        { id: "art_m7", title: "Merge seven", url: "https://two.test/m7", status: "published", published_at: "2026-11-01T09:00:00Z", "target keyword": "k", body: "<p>Before</p>\n<p>Shared</p>" },
        { id: "art_m8", title: "Merge eight", url: "https://two.test/m8", status: "published", published_at: "2026-11-01T09:00:00Z", "target keyword": "k", body: "<p>Eight</p>" },
        { id: "art_m9", title: "Merge nine", url: "https://two.test/m9", status: "published", published_at: "2026-11-01T09:00:00Z", "target keyword": "k", body: "<p>Before</p>\n<p>Shared</p>" },
        { id: "art_m10", title: "Merge ten", url: "https://two.test/m10", status: "published", published_at: "2026-11-01T09:00:00Z", "target keyword": "k", body: "<p>Before</p>\n<p>Shared</p>" },
        { id: "art_t1", title: "Two\nlines", url: "https://two.test/t1", status: "published", published_at: "2026-11-01T09:00:00Z", "target keyword": "k", body: "<p>Lines</p>" },
      ] }],
    },
  ],
}

let server: StartedServer

/** A cookie-keeping client of `target` that does not follow redirects, and signs in on the sign-in page. */
const client = (target: () => StartedServer = () => server) => {
  const { jar, request, csrfOf } = cookieClient(() => target().url)
  const signIn = async (email: string, password: string) => {
    const csrf = await csrfOf("/")
    return request("/", { method: "POST", form: { _csrf: csrf, email, password, next: "/sites" } })
  }
  return { jar, request, csrfOf, signIn }
}

beforeAll(async () => {
  // A low MAX_PER_PAGE proves the pages never ask the core for more than the operator allows.
  server = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false", MAX_PER_PAGE: "5" } })
  await server.runtime.runPromise(importData(fixture))
}, 60_000)

afterAll(async () => {
  await server?.close()
})

describe("web pages over HTTP", () => {
  it("should send pages to sign-in when signed out, keeping where they were going", async () => {
    const c = client()
    const res = await c.request("/articles/art_p1")
    expect(res.status).toBe(303)
    expect(res.headers.get("location")).toBe("/?next=%2Farticles%2Fart_p1")
  })

  it("should bring a person back to a search of several words after sign-in (a GET form sends its spaces as +)", async () => {
    const c = client()
    const asked = await c.request("/search?q=red+roses")
    const signInAt = asked.headers.get("location")!
    expect(signInAt).toBe("/?next=%2Fsearch%3Fq%3Dred%2Broses")
    const form = await (await c.request(signInAt)).text()
    const next = /name="next" value="([^"]*)"/.exec(form)![1]!
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form)![1]!
    const res = await c.request("/", { method: "POST", form: { _csrf: csrf, email: "one@example.com", password: "password-one", next } })
    expect(res.status).toBe(303)
    expect(res.headers.get("location")).toBe("/search?q=red+roses")
  })

  it("should answer a page's address asked with a method it does not take with its 405 page and Allow, and any other address with the 404 page", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const put = await c.request("/sites", { method: "PUT" })
    expect(put.status).toBe(405)
    expect(put.headers.get("allow")?.split(", ").sort()).toEqual(["GET", "HEAD"])
    expect(put.headers.get("content-type")).toContain("text/html")
    expect(await put.text()).toContain("This page does not take PUT")
    const nowhere = await c.request("/no-such-page", { method: "POST" })
    expect(nowhere.status).toBe(404)
    expect(nowhere.headers.get("content-type")).toContain("text/html")
    expect(await nowhere.text()).toContain("Page not found")
    // the API keeps its own answers
    expect((await c.request("/api/v1/no-such-path", { method: "POST" })).headers.get("content-type")).toContain("problem+json")
  })

  it("should refuse a sign-in without the form's CSRF token", async () => {
    const c = client()
    await c.request("/")
    const res = await c.request("/", { method: "POST", form: { email: "one@example.com", password: "password-one" } })
    expect(res.status).toBe(403)
    expect(c.jar.has("cs_session")).toBe(false)
  })

  it("should set an HttpOnly SameSite=Lax session cookie with a fresh id, never the one the browser brought", async () => {
    const c = client()
    c.jar.set("cs_session", "planted_session_value_123456")
    const res = await c.signIn("one@example.com", "password-one")
    expect(res.status).toBe(303)
    expect(res.headers.get("location")).toBe("/sites")
    const cookie = res.headers.getSetCookie().find((s) => s.startsWith("cs_session=") && !s.includes("Max-Age=0"))!
    expect(cookie).toMatch(/HttpOnly/)
    expect(cookie).toMatch(/SameSite=Lax/)
    expect(cookie).not.toMatch(/Secure/)
    expect(c.jar.get("cs_session")).not.toBe("planted_session_value_123456")
    expect((await c.request("/sites")).status).toBe(200)
  })

  it("should mark cookies Secure when PUBLIC_URL is https", async () => {
    const secure = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false", PUBLIC_URL: "https://cs.example" } })
    try {
      const res = await fetch(`${secure.url}/`, { redirect: "manual" })
      const cookie = res.headers.getSetCookie().find((s) => s.startsWith("cs_csrf="))!
      expect(cookie).toMatch(/; Secure/)
      expect(cookie).toMatch(/HttpOnly/)
    } finally {
      await secure.close()
    }
  })

  it("should keep the email and say why when the password is wrong", async () => {
    const c = client()
    const res = await c.signIn("one@example.com", "nope")
    expect(res.status).toBe(401)
    const text = await res.text()
    expect(text).toContain("Wrong email or password.")
    expect(text).toContain('value="one@example.com"')
  })

  it("should show the owner a sign-in with their email and a wrong password (when, never the password)", async () => {
    const stranger = client()
    expect((await stranger.signIn("two@example.com", "guessed-secret-42")).status).toBe(401)
    const owner = client()
    await owner.signIn("two@example.com", "password-two")
    await expect
      .poll(async () => (await (await owner.request("/activity")).text()).includes("Sign-in with your email and a wrong password"))
      .toBe(true)
    const page = await (await owner.request("/activity")).text()
    expect(page).toContain("Refused: wrong password")
    expect(page).toContain("Someone on the sign-in page")
    expect(page).not.toContain("guessed-secret-42")
  })

  it("should send a strict CSP and no inline script, and escape every value", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const res = await c.request("/articles/art_p1")
    expect(res.status).toBe(200)
    const csp = res.headers.get("content-security-policy")!
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).not.toContain("unsafe-inline")
    expect(res.headers.get("x-content-type-options")).toBe("nosniff")
    expect(res.headers.get("cache-control")).toBe("no-store")
    const text = await res.text()
    expect([...text.matchAll(/<script\b[^>]*>/g)].every((m) => / src="\/static\/(app|editor)\.js"/.test(m[0]))).toBe(true)
    expect(text).not.toContain("<img src=x onerror")
    expect(text).toContain("&lt;img src=x onerror=alert(1)&gt; Title")
    expect(text).toContain('sandbox=""')
  })

  it("should refuse a POST without the session's CSRF token and change nothing", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const res = await c.request("/articles/art_p1/edit", {
      method: "POST",
      headers: { "sec-fetch-site": "same-origin" },
      form: { _csrf: "forged-token-value-000000", title: "Hacked", body: "<p>x</p>" },
    })
    // Sent from this service's page: nothing is saved; what was sent is kept as a draft of this session and offered back.
    expect(res.status).toBe(303)
    const kept = res.headers.get("location")!
    expect(kept).toMatch(/^\/articles\/art_p1\?draft=[\w-]+#edit-error$/)
    const offered = await (await c.request(kept.replace(/#.*$/, ""))).text()
    expect(offered).toContain("This form was opened before you last signed in, so it was not saved.")
    expect(offered).toContain('value="Hacked"')
    const caller = { accountId: "acc_p1", actor: { type: "user" as const, id: "acc_p1", name: "One" }, scope: "write" as const, channel: "web" as const, requestId: "req_check_1", action: "TEST", startedAt: Date.now() }
    expect((await server.runtime.runPromise(getArticle(caller, "art_p1"))).title).toBe("<img src=x onerror=alert(1)> Title")
  })

  it("should keep no draft of a POST with a wrong CSRF token sent from another site, or not known to be from ours", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const foreign: Array<Record<string, string>> = [{ "sec-fetch-site": "cross-site", origin: "https://evil.test" }, { origin: "https://evil.test" }, { "sec-fetch-site": "same-site" }, {}]
    for (const headers of foreign) {
      const res = await c.request("/articles/art_p1/edit", { method: "POST", headers, form: { _csrf: "forged-token-value-000000", title: "Planted", body: "<p>planted</p>" } })
      expect(res.status).toBe(403)
      expect(res.headers.get("location")).toBeNull()
    }
    // and the editor offers nothing back
    expect(await (await c.request("/articles/art_p1")).text()).not.toContain("Planted")
  })

  it("should keep at most 5 drafts a session, the oldest going first, and none over 1 MiB", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const refusedEdit = (title: string, body = "<p>x</p>") =>
      c.request("/articles/art_p1/edit", { method: "POST", headers: { "sec-fetch-site": "same-origin" }, form: { _csrf: "forged-token-value-000000", title, body } })
    const drafts: Array<string> = []
    for (let i = 0; i < 7; i++) drafts.push((await refusedEdit(`Draft ${i}`)).headers.get("location")!.replace(/#.*$/, ""))
    for (const [i, address] of drafts.entries()) {
      const page = await (await c.request(address)).text()
      if (i < 2) expect(page, address).not.toContain(`value="Draft ${i}"`)
      else expect(page, address).toContain(`value="Draft ${i}"`)
    }
    // a text over 1 MiB is not kept: it is shown again at once, once, and says so
    const big = await refusedEdit("Too big", `<p>${"x".repeat(1024 * 1024)}</p>`)
    expect(big.status).toBe(403)
    const said = await big.text()
    expect(said).toContain("too large to keep as a draft")
    expect(said).toContain('value="Too big"')
    expect(await (await c.request("/articles/art_p1")).text()).not.toContain('value="Too big"')
    // the five newest are still there
    expect(await (await c.request(drafts[6]!)).text()).toContain('value="Draft 6"')
  })

  it("should keep a long title and reason as typed in a draft (within the draft's 16 KiB for both), not cut at 1 000 characters", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const title = `A title pasted too long ${"t".repeat(1_500)}`
    const reason = `A reason ${"r".repeat(1_500)}`
    const refused = await c.request("/articles/art_p1/edit", {
      method: "POST",
      headers: { "sec-fetch-site": "same-origin" },
      form: { _csrf: "forged-token-value-000000", title, body: "<p>x</p>", reason },
    })
    const page = await (await c.request(refused.headers.get("location")!.replace(/#.*$/, ""))).text()
    expect(page).toContain(`value="${title}"`)
    expect(page).toContain(reason)
  })

  it("should keep at most 5 pending drafts of a signed-out address, the oldest going first, and none over 1 MiB", async () => {
    const origin = new URL(server.url).origin
    const post = (title: string, body = "<p>x</p>") =>
      fetch(`${server.url}/articles/art_p1/edit`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", origin, "sec-fetch-site": "same-origin" },
        body: new URLSearchParams({ title, body, revision: "1" }).toString(),
      })
    const cookieOf = (res: Response) => /cs_draft=([\w-]+)/.exec(res.headers.get("set-cookie") ?? "")?.[1]
    const cookies: Array<string | undefined> = []
    for (let i = 0; i < 7; i++) cookies.push(cookieOf(await post(`Pending ${i}`)))
    expect(cookies.every((v) => v !== undefined)).toBe(true)
    expect(cookieOf(await post("Too big", `<p>${"x".repeat(1024 * 1024)}</p>`))).toBeUndefined()
    const stored = async (value: string) => (await findPendingDraft({ runtime: server.runtime } as Parameters<typeof findPendingDraft>[0], value)) !== null
    expect(await Promise.all(cookies.map((v) => stored(v!)))).toEqual([false, false, true, true, true, true, true])
  })

  it("should keep the edits of two articles sent after the session ended in one browser, and offer each back after sign-in", async () => {
    const c = client()
    const own = { "Sec-Fetch-Site": "same-origin" }
    for (const [id, title] of [["art_p1", "First pending title"], ["art_p3", "Second pending title"], ["art_p1", "Third pending title"]] as const) {
      const res = await c.request(`/articles/${id}/edit`, { method: "POST", headers: own, form: { _csrf: "from-the-ended-session-000", title, body: `<p>${title} body</p>`, revision: "1" } })
      expect(res.status).toBe(303)
      expect(res.headers.get("location")).toBe(`/?expired=1&next=%2Farticles%2F${id}`)
    }
    await c.signIn("one@example.com", "password-one")
    // (two of art_p1: the newest first, the other on the next visit)
    for (const [id, title] of [["art_p1", "Third pending title"], ["art_p3", "Second pending title"], ["art_p1", "First pending title"]] as const) {
      const back = await c.request(`/articles/${id}`)
      expect(back.status, id).toBe(303)
      const kept = await (await c.request(back.headers.get("location")!.replace(/#.*$/, ""))).text()
      expect(kept).toContain(`value="${title}"`)
      expect(kept).toContain("Your session had expired, so this edit was not saved.")
    }
  })

  it("should leave an edit sent after the session ended pending when another account signs in and opens its article", async () => {
    const c = client()
    const own = { "Sec-Fetch-Site": "same-origin" }
    const title = "Pending across accounts"
    const sent = await c.request("/articles/art_p1/edit", { method: "POST", headers: own, form: { _csrf: "from-the-ended-session-000", title, body: "<p>kept</p>", revision: "1" } })
    expect(sent.headers.get("location")).toBe("/?expired=1&next=%2Farticles%2Fart_p1")
    // the wrong account signs in on this browser and is brought back to the article: not its own
    await c.signIn("two@example.com", "password-two")
    expect((await c.request("/articles/art_p1")).status).toBe(404)
    // the article's own account still gets the edit back (after the other's sign-in has ended)
    c.jar.delete("cs_session")
    await c.signIn("one@example.com", "password-one")
    const back = await c.request("/articles/art_p1")
    expect(back.status).toBe(303)
    expect(await (await c.request(back.headers.get("location")!.replace(/#.*$/, ""))).text()).toContain(`value="${title}"`)
  })

  it("should keep an edit form opened by one account and posted after another signed in on the browser for the first, never as the second's draft", async () => {
    const c = client()
    const own = { "Sec-Fetch-Site": "same-origin" }
    await c.signIn("one@example.com", "password-one")
    const page = await (await c.request("/articles/art_p3")).text()
    expect(page).toContain('name="account" value="acc_p1"')
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!
    // another person signs in on this browser; the first one's tab, still open, is saved
    c.jar.delete("cs_session")
    await c.signIn("two@example.com", "password-two")
    const title = "Written by One, sent under Two"
    const sent = await c.request("/articles/art_p3/edit", { method: "POST", headers: own, form: { _csrf: csrf, account: "acc_p1", revision: "1", title, body: "<p>One's words</p>" } })
    expect(sent.status).toBe(303)
    expect(sent.headers.get("location")).toBe("/sites")
    const told = await (await c.request("/sites")).text()
    expect(told).toContain("An edit was not saved: its page was opened while another account was signed in on this browser. Its text is kept for that account")
    // not Two's draft, not offered to Two
    expect((await c.request("/articles/art_p3")).status).toBe(404)
    // One signs in again on this browser and gets the text back, saying why it was not saved
    c.jar.delete("cs_session")
    await c.signIn("one@example.com", "password-one")
    const back = await c.request("/articles/art_p3")
    expect(back.status).toBe(303)
    const offered = await (await c.request(back.headers.get("location")!.replace(/#.*$/, ""))).text()
    expect(offered).toContain(`value="${title}"`)
    expect(offered).toContain("This edit was sent while another account was signed in on this browser, so it was not saved.")
  })

  it("should give an edit sent after the session ended to one of two sign-ins adopting it at the same moment", async () => {
    const title = "Pending for one tab"
    const sent = await fetch(`${server.url}/articles/art_p1/edit`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
      body: new URLSearchParams({ title, body: "<p>once</p>", revision: "1" }).toString(),
    })
    const pending = /cs_draft=([\w-]+)/.exec(sent.headers.get("set-cookie") ?? "")![1]!
    // two tabs of that browser, each signed in (its own session), open the article at once
    const deps = { runtime: server.runtime, publicUrl: server.url } as unknown as HttpDeps
    const tab = (key: string) => ({
      ctx: { cookies: { get: () => pending }, append: () => {} } as unknown as ParameterizedContext,
      session: { key, accountId: "acc_p1", csrf: "c", createdAt: Date.now(), flash: null },
    })
    const tabs = [tab("tab-one-session"), tab("tab-two-session")]
    const adopted = await Promise.all(tabs.map((t) => adoptPendingDraft(t.ctx, deps, t.session, "art_p1", async () => true)))
    expect(adopted.filter((id) => id !== null)).toHaveLength(1)
    const i = adopted.findIndex((id) => id !== null)
    expect(await findDraft(deps, tabs[i]!.session, "art_p1", adopted[i]!)).toMatchObject({ title })
    expect(await findPendingDraft(deps, pending)).toBeNull()
  })

  it("should drop a draft in one step: of two drops at once one removes it, and a newer draft kept in its slot meanwhile stays", async () => {
    const deps = { runtime: server.runtime, publicUrl: server.url } as unknown as HttpDeps
    const session = { key: `drop-session-${Date.now()}`, accountId: "acc_p1", csrf: "c", createdAt: Date.now(), flash: null }
    const draft = (title: string) => ({ articleId: "art_p1", title, body: "<p>x</p>", reason: "", revision: 1, refusal: { message: "m", blocks: [], details: [] } })
    const first = (await keepDraft(deps, session, draft("Dropped twice")))!
    expect((await Promise.all([dropDraft(deps, session, first), dropDraft(deps, session, first)])).sort()).toEqual([false, true])
    expect(await findDraft(deps, session, "art_p1", first)).toBeNull()
    expect(await dropDraft(deps, session, first)).toBe(false)
    // the oldest draft's slot is taken by a new one while the oldest is dropped: the new one stays
    const oldest = (await keepDraft(deps, session, draft("Oldest")))!
    for (let i = 1; i < MAX_DRAFTS; i++) await keepDraft(deps, session, draft(`Between ${i}`))
    const [newest, dropped] = await Promise.all([keepDraft(deps, session, draft("Newest")), dropDraft(deps, session, oldest)])
    expect(newest!.slice(0, 1)).toBe(oldest.slice(0, 1))
    expect(await findDraft(deps, session, "art_p1", newest!)).toMatchObject({ title: "Newest" })
    expect(typeof dropped).toBe("boolean")
  })

  it("should show another account's article and site as not found", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    expect((await c.request("/articles/art_p2")).status).toBe(404)
    expect((await c.request("/sites/site_p2")).status).toBe(404)
    expect((await c.request("/articles/art_p2/revisions/1")).status).toBe(404)
  })

  it("should say a page of the sites list past the last is past the end, not that the account has no websites", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const res = await c.request("/sites?page=3")
    expect(res.status).toBe(200)
    const page = await res.text()
    expect(page).not.toContain("No websites on this account yet")
    expect(page).toContain("Page 3 is past the end: there is only 1 page.")
    expect(page).toContain('href="/sites?page=1"')
  })

  it("should say a page of the activity log, an article's revisions or its activity past the last is past the end, not that nothing happened", async () => {
    const c = client()
    await c.signIn("two@example.com", "password-two")
    // one change on the article, so that its activity and the log have an entry each
    const csrf = await c.csrfOf("/articles/art_m5")
    expect((await c.request("/articles/art_m5/edit", { method: "POST", form: { _csrf: csrf, revision: "1", title: "Merge five", body: "<p>Before, edited</p>\n<p>Shared</p>" } })).status).toBe(303)
    const log = await (await c.request("/activity?channel=web&page=9")).text()
    expect(log).not.toContain("No activity matches")
    expect(log).toMatch(/Page 9 is past the end: there (is only 1 page|are only \d+ pages)\./)
    expect(log).toContain('href="/activity?channel=web&amp;page=')
    expect(log).not.toContain('rel="prev"')
    const article = await (await c.request("/articles/art_m5?rev_page=9&act_page=9")).text()
    expect(article).not.toContain("No changes to this article yet.")
    expect(article).toContain('Page 9 is past the end: there is only 1 page. <a href="/articles/art_m5?rev_page=9&amp;act_page=1#activity">')
    expect(article).toContain('Page 9 is past the end: there is only 1 page. <a href="/articles/art_m5?act_page=9&amp;rev_page=1#revisions">')
  })

  it("should tell a site page's filter or page number the API would refuse in the activity page's words, not the decoder's", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    for (const [query, sentence] of [
      ["page=0", "The page must be a whole number from 1."],
      ["tab=backlinks&page=abc", "The page must be a whole number from 1."],
      ["from=2026-13-01", "From must be a date such as 2026-11-01."],
      ["from=2026-11-30&to=2026-11-01", "From must not be after To."],
      ["status=bogus", "The status must be Draft, Scheduled, Published or Archived."],
    ] as const) {
      const res = await c.request(`/sites/site_p1?${query}`)
      expect(res.status, query).toBe(400)
      const page = await res.text()
      expect(page, query).toContain(sentence)
      expect(page, query).not.toContain("Filters:")
      expect(page, query).not.toContain("Expected")
    }
  })

  it("should mark the main link to the page as the current page, and only as the current section on the pages under it", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    expect(await (await c.request("/sites")).text()).toContain('<a href="/sites" aria-current="page">Sites</a>')
    for (const path of ["/sites/site_p1", "/articles/art_p1", "/articles/art_p1/revisions/1", "/search?q=plain"]) {
      const page = await (await c.request(path)).text()
      expect(page, path).toContain('<a href="/sites" aria-current="true">Sites</a>')
      expect(page, path).not.toContain('<a href="/sites" aria-current="page">')
    }
    expect(await (await c.request("/activity?channel=web")).text()).toContain('<a href="/activity" aria-current="page">Activity</a>')
  })

  it("should search from a box on the sites pages, without JavaScript: results with marked snippets, everything else escaped", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const sites = await (await c.request("/sites")).text()
    expect(sites).toMatch(/<form method="get" action="\/search" role="search"/)
    const site = await (await c.request("/sites/site_p1")).text()
    expect(site).toContain('<input type="hidden" name="site_id" value="site_p1">')
    const res = await c.request("/search?q=hello%20partner&site_id=site_p1")
    expect(res.status).toBe(200)
    const page = await res.text()
    expect(page).toContain("<mark>Hello</mark> <mark>partner</mark>")
    expect(page).toContain('href="/articles/art_p1"')
    expect(page).toContain("&lt;img src=x onerror=alert(1)&gt; Title")
    expect(page).not.toContain("<img src=x")
    expect(page).toContain("1 article found")
    // the title is searched too, and found in all sites
    expect(await (await c.request("/search?q=plain")).text()).toContain('href="/articles/art_p3"')
    // the box alone, a refused query, another account's site
    expect((await c.request("/search")).status).toBe(200)
    const tooLong = await c.request(`/search?q=${"a".repeat(201)}`)
    expect(tooLong.status).toBe(400)
    expect(await tooLong.text()).toContain("200")
    expect((await c.request("/search?q=theirs&site_id=site_p2")).status).toBe(404)
    expect(await (await c.request("/search?q=theirs")).text()).toContain("0 articles found")
  })

  it("should refuse an edit that changes a protected link, and a stale form, keeping the article", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const csrf = await c.csrfOf("/articles/art_p1")
    // Revision 2 keeps the protected link and rewrites the text around it.
    const saved = await c.request("/articles/art_p1/edit", {
      method: "POST",
      form: { _csrf: csrf, revision: "1", title: "T2", body: '<p>Bye <a href="https://partner.test/" data-service-protected="backlink">partner</a></p>' },
    })
    expect(saved.status).toBe(303)
    const refused = await c.request("/articles/art_p1/edit", {
      method: "POST",
      form: { _csrf: csrf, revision: "2", title: "T3", body: '<p>Bye <a href="https://evil.test/" data-service-protected="backlink">partner</a></p>' },
    })
    // Post/redirect/get: the refusal waits under an address that reloads.
    expect(refused.status).toBe(303)
    const draft = refused.headers.get("location")!.replace(/#.*$/, "")
    for (let i = 0; i < 2; i++) {
      const page = await c.request(draft)
      expect(page.status).toBe(200)
      const text = await page.text()
      expect(text).toContain("Not saved.")
      expect(text).toContain("https://partner.test/")
      expect(text).toContain("https://evil.test/")
      expect(text).toContain('<code id="keep-1">&lt;a data-service-protected=&quot;backlink&quot; href=&quot;https://partner.test/&quot;&gt;partner&lt;/a&gt;</code>')
    }
    // A stale form (revision 1) whose title conflicts with revision 2's is never applied over it:
    // it waits on the conflict page, their title beside the person's.
    const stale = await c.request("/articles/art_p1/edit", { method: "POST", form: { _csrf: csrf, revision: "1", title: "Stale", body: '<p>Bye <a href="https://partner.test/" data-service-protected="backlink">partner</a></p>' } })
    expect(stale.status).toBe(303)
    expect(stale.headers.get("location")).toMatch(/^\/articles\/art_p1\/merge\?draft=/)
    const conflict = await (await c.request(stale.headers.get("location")!)).text()
    expect(conflict).toContain("Your edit and revision 2 changed the same parts")
    expect(conflict).toContain("T2")
    expect(conflict).toContain("Stale")
    expect(await (await c.request("/articles/art_p1")).text()).toContain("<h1>T2</h1>")
  })

  it("should merge a stale form's change with the revision saved meanwhile, and say with which", async () => {
    const c = client()
    await c.signIn("two@example.com", "password-two")
    const csrf = await c.csrfOf("/articles/art_m1")
    // Someone saves a new title meanwhile; the person, still on revision 1, changes the body.
    expect((await c.request("/articles/art_m1/edit", { method: "POST", form: { _csrf: csrf, revision: "1", title: "Their title", body: "<p>One</p>" } })).status).toBe(303)
    const saved = await c.request("/articles/art_m1/edit", { method: "POST", form: { _csrf: csrf, revision: "1", title: "Merge one", body: "<p>One, rewritten by me</p>" } })
    expect(saved.headers.get("location")).toBe("/articles/art_m1")
    const page = await (await c.request("/articles/art_m1")).text()
    expect(page).toContain("<h1>Their title</h1>")
    expect(page).toContain("&lt;p&gt;One, rewritten by me&lt;/p&gt;")
    expect(page).toContain("Saved as revision 3. Merged with revision 2 by Two (Editor): 1 of their changes kept beside yours.")
    expect(page).toContain('<a href="/articles/art_m1/revisions/2">See revision 2</a>')
  })

  it("should say that an edit form sent twice is saved already, not that nothing changed, and make one revision", async () => {
    const c = client()
    await c.signIn("two@example.com", "password-two")
    const csrf = await c.csrfOf("/articles/art_m8")
    const form = { _csrf: csrf, revision: "1", title: "Merge eight", body: "<p>Eight, edited once</p>" }
    expect((await c.request("/articles/art_m8/edit", { method: "POST", form })).headers.get("location")).toBe("/articles/art_m8")
    expect(await (await c.request("/articles/art_m8")).text()).toContain("Saved as revision 2.")
    // the same form again (a double click, the back button and Save again): found saved, not saved twice
    const again = await c.request("/articles/art_m8/edit", { method: "POST", form })
    expect(again.headers.get("location")).toBe("/articles/art_m8")
    const page = await (await c.request("/articles/art_m8")).text()
    expect(page).toContain("This edit is saved already (the form was sent twice): nothing changed.")
    expect(page).not.toContain("Nothing changed, so no new revision was made.")
    expect(page).not.toContain("revisions/3")
    // an edit that is the article as it is still says that nothing changed
    const same = { ...form, revision: "2" }
    expect((await c.request("/articles/art_m8/edit", { method: "POST", form: same })).headers.get("location")).toBe("/articles/art_m8")
    expect(await (await c.request("/articles/art_m8")).text()).toContain("Nothing changed, so no new revision was made.")
  })

  it("should make no conflict and no second revision when an edit whose answer was lost (a database outage) is saved again after someone else saved", async () => {
    const c = client()
    await c.signIn("two@example.com", "password-two")
    const csrf = await c.csrfOf("/articles/art_m10")
    const form = { _csrf: csrf, revision: "1", title: "Merge ten", body: "<p>Before, mine</p>\n<p>Shared</p>" }
    // the first save lands (its answer, in an outage, would have been lost) ...
    expect((await c.request("/articles/art_m10/edit", { method: "POST", form })).headers.get("location")).toBe("/articles/art_m10")
    // ... someone else saves meanwhile ...
    const bot = { accountId: "acc_p2", actor: { type: "api_key" as const, id: "key_bot", name: "Writer bot" }, scope: "write" as const, channel: "api" as const, requestId: "req_bot_m10", action: "PUT /api/v1/articles/{id}", startedAt: Date.now() }
    await server.runtime.runPromise(updateArticle(bot, "art_m10", { title: "Merge ten", body: "<p>Before, mine</p>\n<p>Shared, by the bot</p>" }, { dryRun: false }))
    // ... and the person, told it may not have been saved, saves the same text again from the page it was kept on
    const again = await c.request("/articles/art_m10/edit", { method: "POST", form })
    expect(again.headers.get("location")).toBe("/articles/art_m10")
    const page = await (await c.request("/articles/art_m10")).text()
    expect(page).toContain("This edit is saved already (the form was sent twice): nothing changed.")
    expect(page).toContain("Shared, by the bot")
    expect(page).not.toContain("revisions/4")
  })

  it("should name every maker of the revisions a merge kept changes of, each once", async () => {
    const c = client()
    await c.signIn("two@example.com", "password-two")
    const csrf = await c.csrfOf("/articles/art_m6")
    // revision 2 by an agent over the API (a new title), revision 3 by the person (the second paragraph) ...
    const bot = { accountId: "acc_p2", actor: { type: "api_key" as const, id: "key_bot", name: "Writer bot" }, scope: "write" as const, channel: "api" as const, requestId: "req_bot_m6", action: "PUT /api/v1/articles/{id}", startedAt: Date.now() }
    await server.runtime.runPromise(updateArticle(bot, "art_m6", { title: "Bot title" }, { dryRun: false }))
    expect((await c.request("/articles/art_m6/edit", { method: "POST", form: { _csrf: csrf, revision: "2", title: "Bot title", body: "<p>Before</p>\n<p>Shared, by two</p>" } })).status).toBe(303)
    // ... and a form still on revision 1 changes the first paragraph: both revisions' changes are kept
    await c.request("/articles/art_m6/edit", { method: "POST", form: { _csrf: csrf, revision: "1", title: "Merge six", body: "<p>Before, changed</p>\n<p>Shared</p>" } })
    const page = await (await c.request("/articles/art_m6")).text()
    expect(page).toContain("Saved as revision 4. Merged with revisions 2 to 3 by Two (Editor) and Writer bot (API): 2 of their changes kept beside yours.")
  })

  it("should keep a title's line break that the form's text field cannot show, unless the person changed the title", async () => {
    const c = client()
    await c.signIn("two@example.com", "password-two")
    const csrf = await c.csrfOf("/articles/art_t1")
    const form = await (await c.request("/articles/art_t1")).text()
    expect(form).toContain('name="title_as_stored" value="&quot;Two\\nlines&quot;"')
    // what a browser sends: the text field's value without its line break, the hidden one as the
    // page wrote it, for a form sent urlencoded turns every line break of a value into CRLF
    const stored = /name="title_as_stored" value="([^"]*)"/.exec(form)![1]!.replaceAll("&quot;", '"').replace(/\r?\n/g, "\r\n")
    const asSent = { _csrf: csrf, title: "Twolines", title_as_stored: stored }
    const preview = await c.request("/articles/art_t1/preview", { method: "POST", form: { ...asSent, revision: "1", body: "<p>Lines, more</p>" } })
    expect(((await preview.json()) as { title_changed: boolean }).title_changed).toBe(false)
    expect((await c.request("/articles/art_t1/edit", { method: "POST", form: { ...asSent, revision: "1", body: "<p>Lines, more</p>" } })).status).toBe(303)
    const page = await (await c.request("/articles/art_t1")).text()
    expect(page).toContain("<h1>Two\nlines</h1>")
    expect(page).toContain("&lt;p&gt;Lines, more&lt;/p&gt;")
    // typed anew: the person's title
    expect((await c.request("/articles/art_t1/edit", { method: "POST", form: { ...asSent, title: "One line", revision: "2", body: "<p>Lines, more</p>" } })).status).toBe(303)
    expect(await (await c.request("/articles/art_t1")).text()).toContain("<h1>One line</h1>")
  })

  /**
   * Two saves of article `id` from its revision 1 by the same person, theirs first: mine lands on
   * the conflict page. Answers the signed-in client, its CSRF token, the page's address and HTML,
   * and its draft.
   */
  const openConflict = async (id: string, theirs: { title: string; body: string }, mine: { title: string; body: string; reason?: string }) => {
    const c = client()
    await c.signIn("two@example.com", "password-two")
    const csrf = await c.csrfOf(`/articles/${id}`)
    expect((await c.request(`/articles/${id}/edit`, { method: "POST", form: { _csrf: csrf, revision: "1", ...theirs } })).status).toBe(303)
    const saved = await c.request(`/articles/${id}/edit`, { method: "POST", form: { _csrf: csrf, revision: "1", ...mine } })
    const at = saved.headers.get("location")!
    expect(at.startsWith(`/articles/${id}/merge?draft=`)).toBe(true)
    const form = await (await c.request(at)).text()
    const draft = /name="draft" value="([^"]+)"/.exec(form)![1]!
    return { c, csrf, at, form, draft }
  }

  it("should settle a conflict part by part on the conflict page, refusing a form without a choice for each", async () => {
    const { c, csrf, form, draft } = await openConflict(
      "art_m2",
      { title: "Merge two", body: "<p>Theirs first</p>\n<p>Shared</p>" },
      { title: "Merge two", body: "<p>Mine first</p>\n<p>Shared</p>", reason: "my take" },
    )
    expect(form).toContain('name="theirs" value="2"')
    expect(form).toContain("Their version (revision 2, by Two (Editor))")
    expect(form).toContain('name="choice_body_0" value="theirs" required>')
    expect(form).not.toMatch(/name="choice_body_0" value="[a-z]+"[^>]* checked/)
    // No choice: not saved, the page comes back with the text as it was.
    const none = await c.request("/articles/art_m2/merge", { method: "POST", form: { _csrf: csrf, draft, theirs: "2", reason: "my take" } })
    expect(none.status).toBe(400)
    expect(await none.text()).toContain("Choose a version for each part (1 without a choice)")
    expect(await (await c.request("/articles/art_m2")).text()).toContain("Theirs first")
    // An edited version of the part: saved on top of theirs, the rest as merged.
    const settled = await c.request("/articles/art_m2/merge", {
      method: "POST",
      form: { _csrf: csrf, draft, theirs: "2", reason: "my take", choice_body_0: "edit", edit_body_0: "<p>Both of ours</p>" },
    })
    expect(settled.status).toBe(303)
    expect(settled.headers.get("location")).toBe("/articles/art_m2")
    const page = await (await c.request("/articles/art_m2")).text()
    expect(page).toContain("Saved as revision 3. You settled the conflicting part.")
    expect(page).toContain("&lt;p&gt;Both of ours&lt;/p&gt;\n&lt;p&gt;Shared&lt;/p&gt;")
    // The save from the conflict page is a change, in words: under "Changes only" and on the article's own activity.
    expect(page).toMatch(/Activity on this article[\s\S]*Saved after settling a conflict/)
    const log = await (await c.request("/activity?changes=1&article=art_m2")).text()
    expect(log).toContain("Saved after settling a conflict")
    expect(log).not.toContain("POST /articles/{id}/merge</strong>")
  })

  it("should keep every other part when a part typed on the conflict page leaves a comment or a tag open", async () => {
    const { c, csrf, draft } = await openConflict(
      "art_m7",
      { title: "Merge seven", body: "<p>Theirs first</p>\n<p>Shared</p>\n<p>Their new ending</p>" },
      { title: "Merge seven", body: "<p>Mine first</p>\n<p>Shared, and mine</p>" },
    )
    const settled = await c.request("/articles/art_m7/merge", {
      method: "POST",
      form: { _csrf: csrf, draft, theirs: "2", choice_body_0: "edit", edit_body_0: "<p>Both, <b>of us <!-- to check" },
    })
    expect(settled.headers.get("location")).toBe("/articles/art_m7")
    const page = await (await c.request("/articles/art_m7")).text()
    expect(page).toContain("Saved as revision 3.")
    // the typed part ends where it was typed: the person's other paragraph and their ending are kept, outside the bold
    expect(page).toContain("&lt;b&gt;of us &lt;/b&gt;&lt;/p&gt;\n&lt;p&gt;Shared, and mine&lt;/p&gt;\n&lt;p&gt;Their new ending&lt;/p&gt;</textarea>")
  })

  it("should keep a conflict page opened by one account and posted after another signed in on the browser for the first, with what was typed there", async () => {
    const { c, csrf, form, draft } = await openConflict(
      "art_m9",
      { title: "Merge nine", body: "<p>Theirs nine</p>\n<p>Shared</p>" },
      { title: "Merge nine", body: "<p>Mine nine</p>\n<p>Shared</p>" },
    )
    expect(form).toContain('name="account" value="acc_p2"')
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(form)![1]!.replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")
    c.jar.delete("cs_session")
    await c.signIn("one@example.com", "password-one")
    const sent = await c.request("/articles/art_m9/merge", {
      method: "POST",
      headers: { "Sec-Fetch-Site": "same-origin" },
      form: { _csrf: csrf, account: "acc_p2", draft, theirs: "2", base: "1", mine_title: field("mine_title"), mine_body: field("mine_body"), choice_body_0: "edit", edit_body_0: "<p>Typed by Two</p>" },
    })
    expect(sent.headers.get("location")).toBe("/sites")
    expect(await (await c.request("/sites")).text()).toContain("An edit was not saved: its page was opened while another account was signed in on this browser.")
    c.jar.delete("cs_session")
    await c.signIn("two@example.com", "password-two")
    const back = await c.request("/articles/art_m9")
    expect(back.headers.get("location")).toMatch(/^\/articles\/art_m9\/merge\?draft=/)
    const page = await (await c.request(back.headers.get("location")!)).text()
    expect(page).toContain("This edit was sent while another account was signed in on this browser, so it was not saved.")
    expect(page).toContain("&lt;p&gt;Typed by Two&lt;/p&gt;")
  })

  it("should carry back what the person typed on the conflict page when the form is refused for a missing choice", async () => {
    const { c, csrf, draft } = await openConflict(
      "art_m4",
      { title: "Their four", body: "<p>Theirs first</p>\n<p>Shared</p>" },
      { title: "My four", body: "<p>Mine first</p>\n<p>Shared</p>" },
    )
    // The title's text is typed, then "theirs" chosen; the body's part is typed, its choice forgotten.
    const sent = await c.request("/articles/art_m4/merge", {
      method: "POST",
      form: { _csrf: csrf, draft, theirs: "2", choice_title: "theirs", edit_title: "A title typed here", edit_body_0: "<p>Typed by hand on the conflict page</p>" },
    })
    expect(sent.status).toBe(400)
    const back = await sent.text()
    expect(back).toContain("Choose a version for each part (1 without a choice)")
    expect(back).toMatch(/name="choice_title" value="theirs"[^>]* checked/)
    expect(back).toContain('name="edit_title" value="A title typed here"')
    expect(back).toMatch(/<textarea id="edit_body_0" name="edit_body_0"[^>]*>\n&lt;p&gt;Typed by hand on the conflict page&lt;\/p&gt;<\/textarea>/)
    expect(await (await c.request("/articles/art_m4")).text()).toContain("Theirs first")
  })

  it("should keep the person's text and what they chose and typed when the conflict page's form arrives after the session ended, and offer them back on the conflict page after sign-in", async () => {
    const { c, csrf, form: page } = await openConflict(
      "art_m3",
      { title: "Merge three", body: "<p>Theirs first</p>\n<p>Shared</p>" },
      { title: "Merge three, mine", body: "<p>Mine first</p>\n<p>Shared and mine too</p>", reason: "my take" },
    )
    const unescape = (v: string) => v.replace(/&(amp|lt|gt|quot|#39|#96);/g, (_, e: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", "#96": "`" })[e]!)
    const formHtml = page.slice(page.indexOf('<form method="post" action="/articles/art_m3/merge"'))
    const fields: Record<string, string> = {}
    for (const m of formHtml.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]!] = unescape(m[2]!)
    // The person signs out in another tab (or the sign-in ends) while choosing on the conflict page.
    expect((await c.request("/signout", { method: "POST", form: { _csrf: csrf } })).status).toBe(303)
    const sent = await c.request("/articles/art_m3/merge", {
      method: "POST",
      headers: { "Sec-Fetch-Site": "same-origin" },
      form: { ...fields, reason: "my take", choice_body_0: "edit", edit_body_0: "<p>Settled by hand</p>" },
    })
    expect(sent.status).toBe(303)
    expect(sent.headers.get("location")).toBe("/?expired=1&next=%2Farticles%2Fart_m3")
    await c.signIn("two@example.com", "password-two")
    const back = await c.request("/articles/art_m3")
    expect(back.status).toBe(303)
    // back on the conflict page, with what was chosen and typed there, and the whole edit
    expect(back.headers.get("location")).toMatch(/^\/articles\/art_m3\/merge\?draft=[A-Za-z0-9_-]+$/)
    const kept = await (await c.request(back.headers.get("location")!)).text()
    expect(kept).toContain("&lt;p&gt;Mine first&lt;/p&gt;\n&lt;p&gt;Shared and mine too&lt;/p&gt;")
    // the person's title, carried as JSON (its own line breaks would come back as CR LF otherwise)
    expect(kept).toContain('name="mine_title" value="&quot;Merge three, mine&quot;"')
    expect(kept).toContain("Your session had expired, so this edit was not saved.")
    expect(kept).toMatch(/name="choice_body_0" value="edit"[^>]* checked/)
    expect(kept).toMatch(/<textarea id="edit_body_0" name="edit_body_0"[^>]*>\n&lt;p&gt;Settled by hand&lt;\/p&gt;<\/textarea>/)
    expect(kept).toContain('value="my take"')
    // Saved again from there: the conflict page again, in this session.
    const csrf2 = await c.csrfOf("/articles/art_m3")
    const again = await c.request("/articles/art_m3/edit", { method: "POST", form: { _csrf: csrf2, revision: "1", title: "Merge three, mine", body: "<p>Mine first</p>\n<p>Shared and mine too</p>" } })
    expect(again.headers.get("location")).toMatch(/^\/articles\/art_m3\/merge\?draft=/)
    const page2 = await (await c.request(again.headers.get("location")!)).text()
    const fields2: Record<string, string> = {}
    for (const m of page2.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields2[m[1]!] = unescape(m[2]!)
    // Signed out and in again in another tab: the page's form is of an earlier sign-in, its draft that session's.
    expect((await c.request("/signout", { method: "POST", form: { _csrf: csrf2 } })).status).toBe(303)
    await c.signIn("two@example.com", "password-two")
    const stale = await c.request("/articles/art_m3/merge", { method: "POST", headers: { "Sec-Fetch-Site": "same-origin" }, form: { ...fields2, choice_body_0: "mine" } })
    expect(stale.status).toBe(303)
    expect(stale.headers.get("location")).toMatch(/^\/articles\/art_m3\/merge\?draft=[A-Za-z0-9_-]+$/)
    const keptAgain = await (await c.request(stale.headers.get("location")!)).text()
    expect(keptAgain).toContain("&lt;p&gt;Mine first&lt;/p&gt;\n&lt;p&gt;Shared and mine too&lt;/p&gt;")
    expect(keptAgain).toContain("This form was opened before you last signed in")
    expect(keptAgain).toMatch(/name="choice_body_0" value="mine"[^>]* checked/)
    // A draft no longer kept (a day old, or past the session's five): the text sent back is kept anew.
    const csrf3 = await c.csrfOf("/sites")
    const gone = await c.request("/articles/art_m3/merge", { method: "POST", form: { ...fields2, _csrf: csrf3, draft: "unknownDraftId000000", choice_body_0: "mine" } })
    expect(gone.headers.get("location")).toMatch(/^\/articles\/art_m3\/merge\?draft=[A-Za-z0-9_-]+$/)
    expect(await (await c.request(gone.headers.get("location")!)).text()).toContain("&lt;p&gt;Shared and mine too&lt;/p&gt;")
    // A form of more conflict-page fields than a draft keeps (3 000 parts): its edit is kept, on
    // the article page, and the parts are not read on (no records of a million units from 4 MiB)
    const many = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`choice_body_${i}`, "mine"]))
    const tooMany = await c.request("/articles/art_m3/merge", { method: "POST", form: { ...fields2, ...many, _csrf: csrf3, draft: "unknownDraftId000000" } })
    expect(tooMany.headers.get("location")).toMatch(/^\/articles\/art_m3\?draft=[A-Za-z0-9_-]+/)
    expect(await (await c.request(tooMany.headers.get("location")!)).text()).toContain("&lt;p&gt;Shared and mine too&lt;/p&gt;")
    // From another site, nothing is kept.
    const forged = await c.request("/articles/art_m3/merge", { method: "POST", headers: { "Sec-Fetch-Site": "cross-site" }, form: { ...fields2, choice_body_0: "mine" } })
    expect(forged.status).toBe(403)
  })

  it("should show the conflict page again as it was sent when the settled text is too large to keep, keeping its draft", async () => {
    const { c, csrf, at, draft } = await openConflict(
      "art_m5",
      { title: "Merge five", body: "<p>Theirs first</p>\n<p>Shared</p>" },
      { title: "Merge five", body: "<p>Mine first</p>\n<p>Shared</p>" },
    )
    const typed = `<p>Typed on the conflict page ${"c".repeat(1024 * 1024)}</p>`
    const sent = await c.request("/articles/art_m5/merge", { method: "POST", form: { _csrf: csrf, draft, theirs: "2", reason: "long", choice_body_0: "edit", edit_body_0: typed } })
    expect(sent.status).toBe(400)
    const back = await sent.text()
    expect(back).toContain("The body must be at most 1 MiB of HTML.")
    expect(back).toContain("too large to keep as a draft")
    expect(back).toMatch(/name="choice_body_0" value="edit"[^>]* checked/)
    expect(back).toContain(`>\n&lt;p&gt;Typed on the conflict page ${"c".repeat(1024 * 1024)}&lt;/p&gt;</textarea>`)
    expect(back).toContain('value="long"')
    // the draft is still there: the conflict page opens again
    const again = await c.request(at)
    expect(again.status).toBe(200)
    expect(await again.text()).toContain("Your edit and revision 2 changed the same parts")
  })

  it("should refuse a restore that would drop a protected link the platform added since, and show the rewrite tag", async () => {
    // The platform's rewrite job inserts a backlink: revision 2, origin rewrite.
    const body = '<p>No links yet. <a href="https://partner.test/new" data-service-protected="backlink">new partner</a></p>'
    await server.runtime.runPromise(
      ArticleWriter.use((w) =>
        w.change("acc_p1", "art_p3", { day: new Date().toISOString().slice(0, 10), limit: 1000, retryAfterSeconds: 60 }, (current) =>
          Effect.succeed({
            title: current.title,
            body,
            word_count: 5,
            featured_image: current.featured_image,
            updated_at: new Date().toISOString(),
            revision: { id: "rev_rewrite_p3", origin: "rewrite" as const, reason: "Inserted backlink", actor: { type: "platform" as const, id: "rewrite", name: "Rewrite job" }, restored_from: null, created_at: new Date().toISOString() },
            activity: null,
          }),
        ),
      ),
    )
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const page = await (await c.request("/articles/art_p3")).text()
    expect(page).toContain('<span class="tag tag-rewrite">Rewrite</span>')
    expect(page).toContain("Rewrite job")
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!
    // Unconfirmed (no script asked): a confirmation page, nothing done.
    const asked = await c.request("/articles/art_p3/revisions/1/restore", { method: "POST", form: { _csrf: csrf } })
    expect(asked.status).toBe(200)
    expect(await asked.text()).toContain('<input type="hidden" name="confirmed" value="yes">')
    const res = await c.request("/articles/art_p3/revisions/1/restore", { method: "POST", form: { _csrf: csrf, confirmed: "yes" } })
    expect(res.status).toBe(422)
    const text = await res.text()
    expect(text).toContain("Not restored.")
    expect(text).toContain("new partner")
    expect(text).toContain("https://partner.test/new")
    // The revision compared with the current article, by the analyzer (one comparison).
    expect(text).toContain('class="legend compare-legend"')
    const caller = { accountId: "acc_p1", actor: { type: "user" as const, id: "acc_p1", name: "One" }, scope: "write" as const, channel: "web" as const, requestId: "req_check_2", action: "TEST", startedAt: Date.now() }
    const article = await server.runtime.runPromise(getArticle(caller, "art_p3"))
    expect([article.revision, article.body]).toEqual([2, body])
  })

  it("should refuse a restore sent over a revision that is no longer the current one, and restore once the person has seen the newest", async () => {
    const caller = { accountId: "acc_p1", actor: { type: "user" as const, id: "acc_p1", name: "One" }, scope: "write" as const, channel: "web" as const, requestId: "req_check_3", action: "TEST", startedAt: Date.now() }
    const current = () => server.runtime.runPromise(getArticle(caller, "art_p3"))
    // a change by someone else (the platform here): the body so far and one paragraph more
    const change = (paragraph: string) =>
      server.runtime.runPromise(
        ArticleWriter.use((w) =>
          w.change("acc_p1", "art_p3", { day: new Date().toISOString().slice(0, 10), limit: 1000, retryAfterSeconds: 60 }, (now) =>
            Effect.succeed({
              title: now.title,
              body: `${now.body}<p>${paragraph}</p>`,
              word_count: now.word_count + 2,
              featured_image: now.featured_image,
              updated_at: new Date().toISOString(),
              revision: { id: `rev_${paragraph.length}_${Date.now()}`, origin: "rewrite" as const, reason: paragraph, actor: { type: "platform" as const, id: "rewrite", name: "Rewrite job" }, restored_from: null, created_at: new Date().toISOString() },
              activity: null,
            }),
          ),
        ),
      )
    const start = (await current()).revision
    await change("First change.")
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const fieldsOf = (page: string) => ({
      _csrf: /name="_csrf" value="([^"]+)"/.exec(page)![1]!,
      current_revision: /name="current_revision" value="([0-9]+)"/.exec(page)?.[1] ?? "none",
    })
    const opened = fieldsOf(await (await c.request(`/articles/art_p3/revisions/${start}`)).text())
    expect(opened.current_revision).toBe(String(start + 1))
    // the confirmation asked without a script sends the revision on
    const asked = await (await c.request(`/articles/art_p3/revisions/${start}/restore`, { method: "POST", form: opened })).text()
    expect(asked).toContain(`<input type="hidden" name="current_revision" value="${start + 1}">`)
    // saved while the person looked: their restore would replace it unseen, so it is refused
    await change("Saved meanwhile.")
    const refused = await c.request(`/articles/art_p3/revisions/${start}/restore`, { method: "POST", form: { ...opened, confirmed: "yes", reason: "Undo the <b>rewrite</b> & \"more\"" } })
    expect(refused.status).toBe(412)
    const page = await refused.text()
    // the reason the person typed is offered back with the form to restore again, escaped
    expect(page).toContain('name="reason" maxlength="500" value="Undo the &lt;b&gt;rewrite&lt;/b&gt; &amp; &quot;more&quot;"')
    expect(page).toContain(`Revision ${start + 2} was saved after the page you restored from was opened, so revision ${start} was not restored.`)
    expect((await current()).revision).toBe(start + 2)
    expect((await current()).body).toContain("Saved meanwhile.")
    // the page shown now is over the newest revision: restoring from it restores
    const seen = fieldsOf(page)
    expect(seen.current_revision).toBe(String(start + 2))
    const restored = await c.request(`/articles/art_p3/revisions/${start}/restore`, { method: "POST", form: { ...seen, confirmed: "yes" } })
    expect(restored.status).toBe(303)
    const after = await current()
    expect(after.revision).toBe(start + 3)
    expect(after.body).not.toContain("Saved meanwhile.")
  })

  it("should carry a restore's reason of up to 500 characters counted as code points whole: 300 emoji after a letter", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const csrf = await c.csrfOf("/articles/art_p3/revisions/1")
    const reason = `a${"😀".repeat(300)}`
    // unconfirmed: the confirmation page sends the reason on, as it will be saved
    const asked = await c.request("/articles/art_p3/revisions/1/restore", { method: "POST", form: { _csrf: csrf, reason } })
    expect(asked.status).toBe(200)
    expect(await asked.text()).toContain(`value="${reason}"`)
  })

  it("should list a revision of the rewrite job with the Rewrite tag on the article page", async () => {
    const batch = makeRewriteBatch({ dryRun: false })
    const line = { rewrite_id: "rw-page-1", article_id: "art_p2", title: "Theirs, rewritten", body: "<p>Rewritten by the platform.</p>", reason: "Seasonal refresh" }
    const applied = await server.runtime.runPromise(batch.apply(JSON.stringify(line)))
    expect(applied.outcome).toEqual({ kind: "applied", revision: 2 })
    const c = client()
    await c.signIn("two@example.com", "password-two")
    const page = await (await c.request("/articles/art_p2")).text()
    const item = (n: number) => new RegExp(`<li>\\s*<div>\\s*<strong>Revision ${n}</strong>[\\s\\S]*?</li>`).exec(page)?.[0] ?? ""
    expect(item(2)).toContain('<span class="tag tag-rewrite">Rewrite</span>')
    expect(item(2)).toContain("Rewrite job")
    expect(item(2)).toContain("Reason: Seasonal refresh")
    expect(item(1)).not.toContain("tag-rewrite")
    expect(page).toContain("Rewritten by the platform.")
  })

  it("should sign out with the CSRF token and forget the session", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const old = c.jar.get("cs_session")!
    const csrf = await c.csrfOf("/sites")
    const res = await c.request("/signout", { method: "POST", form: { _csrf: csrf } })
    expect(res.status).toBe(303)
    const replay = await fetch(`${server.url}/sites`, { headers: { Cookie: `cs_session=${old}` }, redirect: "manual" })
    expect(replay.status).toBe(303)
  })

  it("should not bring a signed-out session back when a request that began before the sign-out leaves a message", async () => {
    // A server of its own, whose page spans say when the upload's handler starts: by then its
    // session has been read (`signedIn` reads it first), so the sign-out below lands after that
    // read on any machine, however loaded, instead of after a guessed while.
    let handlerStarted: () => void = () => {}
    const uploadHandled = new Promise<void>((resolve) => (handlerStarted = resolve))
    const tracing: NonNullable<StartOptions["tracing"]> = {
      traceId: () => undefined,
      serve: (_req, _res, work) => work(),
      nameServerSpan: () => {},
      span: (name, work) => {
        if (name === "page POST /articles/{id}/image") handlerStarted()
        return work()
      },
      shutdown: async () => ({ exported: 0, failed: 0, dropped: 0 }),
    }
    const own = await startServer({ storage: "memory", quiet: true, tracing, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false" } })
    try {
      await own.runtime.runPromise(importData(fixture))
      const c = client(() => own)
      await c.signIn("one@example.com", "password-one")
      const old = c.jar.get("cs_session")!
      const csrf = await c.csrfOf("/articles/art_p3")
      // An upload that read the session, then sends its body slowly (a stolen cookie's holder can).
      const boundary = "----slowupload"
      const url = new URL(`${own.url}/articles/art_p3/image`)
      const upload = request({ host: url.hostname, port: url.port, path: url.pathname, method: "POST", headers: { cookie: `cs_session=${old}`, "content-type": `multipart/form-data; boundary=${boundary}`, "transfer-encoding": "chunked" } })
      const answered = new Promise<{ status: number; location: string | undefined }>((resolve, reject) => {
        upload.on("response", (res) => {
          res.resume()
          resolve({ status: res.statusCode ?? 0, location: res.headers.location })
        })
        upload.on("error", reject)
      })
      upload.write(`--${boundary}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${csrf}\r\n`)
      await uploadHandled
      const signOut = await c.request("/signout", { method: "POST", form: { _csrf: await c.csrfOf("/sites") } })
      expect(signOut.status).toBe(303)
      // the upload ends without a file: its answer leaves a message ("Choose an image file"), as a
      // signed-in request (back to the article, not to the sign-in page)
      upload.end(`--${boundary}--\r\n`)
      expect(await answered).toEqual({ status: 303, location: "/articles/art_p3" })
      const replay = await fetch(`${own.url}/sites`, { headers: { Cookie: `cs_session=${old}` }, redirect: "manual" })
      expect(replay.status).toBe(303)
    } finally {
      await own.close()
    }
  })

  it("should end a session 7 days after its sign-in, however recently a message refreshed its record", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const value = c.jar.get("cs_session")!
    const key = createHash("sha256").update(value).digest("base64url")
    const stored = await server.runtime.runPromise(OAuthStore.use((store) => store.find("WebSession", key)))
    expect(Option.isSome(stored)).toBe(true)
    const day = 24 * 60 * 60 * 1000
    // Signed in 8 days ago; a saved edit's message (setFlash) wrote the record again yesterday, for another 7 days.
    const signedInAt = Date.now() - 8 * day
    await server.runtime.runPromise(OAuthStore.use((store) => store.upsert("WebSession", key, { ...Option.getOrThrow(stored), createdAt: signedInAt }, 6 * 24 * 60 * 60)))
    const res = await fetch(`${server.url}/sites`, { headers: { Cookie: `cs_session=${value}` }, redirect: "manual" })
    expect(res.status).toBe(303)
    expect(res.headers.get("location")).toBe("/?next=%2Fsites")
  })

  it("should list connected agents through the MCP adapter, and the MCP address", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const text = await (await c.request("/connect")).text()
    expect(text).toContain("No agents connected yet.")
    expect(text).toContain(`${server.url}/mcp`)
  })

  it("should name in the activity log the key created or revoked and the agent disconnected, changes only included", async () => {
    const c = client()
    await c.signIn("two@example.com", "password-two")
    const csrf = await c.csrfOf("/connect")
    expect((await c.request("/connect/keys", { method: "POST", form: { _csrf: csrf, name: "Named in the log", scope: "read-only" } })).status).toBe(303)
    const page = await (await c.request("/connect")).text()
    const keyId = new RegExp('<td data-label="Name"><bdi>Named in the log</bdi></td><td data-label="Key id"><code class="key-id">([^<]+)</code>').exec(page)![1]!
    expect((await c.request(`/connect/keys/${keyId}/revoke`, { method: "POST", form: { _csrf: csrf, confirmed: "yes" } })).status).toBe(303)
    for (const path of ["/activity", "/activity?changes=1"]) {
      const log = await (await c.request(path)).text()
      expect(log, path).toContain("Created an API key: “Named in the log”")
      expect(log, path).toContain("Revoked an API key: “Named in the log”")
    }
    // revoked again (the form sent twice, another tab): said so, and logged once
    const again = await c.request(`/connect/keys/${keyId}/revoke`, { method: "POST", form: { _csrf: csrf, confirmed: "yes" } })
    expect(again.status).toBe(303)
    expect(await (await c.request("/connect")).text()).toContain("The key “Named in the log” was revoked already.")
    expect((await (await c.request("/activity")).text()).split("Revoked an API key: “Named in the log”")).toHaveLength(2)
  })

  it("should revoke a connected agent from Connect Site", async () => {
    // What the OAuth provider stores once a person clicked Allow.
    await server.runtime.runPromise(
      Effect.gen(function* () {
        const store = yield* OAuthStore
        yield* store.upsert("Client", "client_web_1", { client_id: "client_web_1", client_name: "Test Agent", redirect_uris: ["https://agent.test/cb"] }, undefined)
        yield* store.upsert("Grant", "grant_web_1", { accountId: "acc_p1", clientId: "client_web_1", iat: Math.floor(Date.now() / 1000) }, 3600)
      }),
    )
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const page = await (await c.request("/connect")).text()
    expect(page).toContain("Test Agent")
    expect(page).toContain("agent.test")
    // The button says what the confirmation says: Disconnect.
    expect(page).toContain('class="button button-danger button-small">Disconnect<span class="visually-hidden"> Test Agent</span></button>')
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!
    const asked = await c.request("/connect/clients/client_web_1/revoke", { method: "POST", form: { _csrf: csrf } })
    expect(asked.status).toBe(200)
    expect(await asked.text()).toContain("Disconnect Test Agent?")
    expect(await (await c.request("/connect")).text()).toContain("Test Agent")
    const res = await c.request("/connect/clients/client_web_1/revoke", { method: "POST", form: { _csrf: csrf, confirmed: "yes" } })
    expect(res.status).toBe(303)
    const after = await (await c.request("/connect")).text()
    expect(after).toContain("The agent is disconnected")
    expect(after).not.toContain("Test Agent")
    expect(await (await c.request("/activity?changes=1")).text()).toContain("Disconnected an agent: “Test Agent”")
  })

  it("should tell apart two agents registered under one name, by when each was first seen and its client id", async () => {
    await server.runtime.runPromise(
      Effect.gen(function* () {
        const store = yield* OAuthStore
        for (const [n, iat] of [[1, 1_700_000_000], [2, 1_700_086_400]] as const) {
          yield* store.upsert("Client", `client_twin_${n}`, { client_id: `client_twin_${n}`, client_name: "Twin Agent", redirect_uris: ["https://twin.test/cb"] }, undefined)
          yield* store.upsert("Grant", `grant_twin_${n}`, { accountId: "acc_p1", clientId: `client_twin_${n}`, iat }, 3600)
        }
      }),
    )
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const page = await (await c.request("/connect")).text()
    expect(page).toContain('(1 of 2 named so, client <code class="key-id">t_twin_1</code>)')
    expect(page).toContain('(2 of 2 named so, client <code class="key-id">t_twin_2</code>)')
    expect(page.split("First seen").length - 1).toBeGreaterThanOrEqual(2)
  })

  it("should filter the activity log and say so when a filter is invalid", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    expect((await c.request("/activity?status=error")).status).toBe(200)
    const bad = await c.request("/activity?from=2026-11-10&to=2026-11-01")
    expect(bad.status).toBe(400)
    const said = await bad.text()
    expect(said).toContain("role=\"alert\"")
    // Both are dates: what is wrong is their order.
    expect(said).toContain("From must not be after To.")
    expect(said).not.toContain("must be a date such as")
    const notDate = await c.request("/activity?from=yesterday")
    expect(notDate.status).toBe(400)
    expect(await notDate.text()).toContain("From must be a date such as 2026-11-01.")
    expect((await c.request("/activity?status=bogus")).status).toBe(400)
    // the sentence names every channel the filter offers
    const channel = await c.request("/activity?channel=email")
    expect(channel.status).toBe(400)
    expect(await channel.text()).toContain("The channel must be API, Agent (MCP), Web or Platform (rewrite job, administrator).")
    expect((await c.request("/activity?channel=platform")).status).toBe(200)
  })

  it("should read a list page's number as the API does on every page: a malformed one is the 400 page naming it, not page 1", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const cases: Array<[string, string]> = [
      ["/sites?page=abc", "The page number page=&#39;abc&#39; is not valid"],
      ["/search?q=hello&page=0", "The page number page=&#39;0&#39; is not valid"],
      ["/articles/art_p1?rev_page=-1", "The page number rev_page=&#39;-1&#39; is not valid"],
      ["/articles/art_p1?act_page=1.5", "The page number act_page=&#39;1.5&#39; is not valid"],
      // the activity page says it beside its filters, as it says any filter's mistake
      ["/activity?page=abc", 'role="alert"'],
    ]
    for (const [path, said] of cases) {
      const res = await c.request(path)
      expect(res.status, path).toBe(400)
      expect(await res.text(), path).toContain(said)
    }
    // the API's own reading: leading zeros are the number
    for (const path of ["/sites?page=01", "/search?q=hello&page=1", "/articles/art_p1?rev_page=001&act_page=2"]) expect((await c.request(path)).status, path).toBe(200)
  })
})

/** The web activity entry of a response (found by its request id), as the log keeps it. */
const entryOf = async (res: Response, from: StartedServer = server) => {
  const requestId = res.headers.get("x-request-id")
  const caller = { accountId: "acc_p1", actor: { type: "user" as const, id: "acc_p1", name: "One" }, scope: "write" as const, channel: "web" as const, requestId: "req_check_log", action: "TEST", startedAt: Date.now() }
  for (let page = 1; ; page++) {
    const got = await from.runtime.runPromise(listActivity(caller, { channel: "web", page, per_page: 5 }))
    const found = got.data.find((e) => e.request_id === requestId)
    if (found !== undefined) return found
    if (page >= got.pagination.total_pages) return undefined
  }
}

describe("refused web actions in the activity log", () => {
  it("should log a POST refused for its CSRF token as 403 with a code, never as done", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const image = new FormData()
    image.set("image", new Blob([new Uint8Array([1, 2, 3])], { type: "image/png" }), "x.png")
    const refused = [
      ["POST /connect/keys", await c.request("/connect/keys", { method: "POST", form: { name: "Sneaky", scope: "write" } })],
      ["POST /connect/clients/{id}/revoke", await c.request("/connect/clients/client_any/revoke", { method: "POST", form: { _csrf: "forged-token-value-000000", confirmed: "yes" } })],
      ["POST /articles/{id}/revisions/{number}/restore", await c.request("/articles/art_p3/revisions/1/restore", { method: "POST", form: { confirmed: "yes" } })],
      ["POST /articles/{id}/image", await c.request("/articles/art_p3/image", { method: "POST", body: image })],
    ] as const
    for (const [action, res] of refused) {
      expect(res.status, action).toBe(403)
      expect(await entryOf(res), action).toMatchObject({ action, channel: "web", status: 403, error_code: "invalid_request" })
    }
  })

  it("should not log a page view asked for with HEAD, and send a signed-out HEAD to sign-in like a GET", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const viewed = await c.request("/articles/art_p3", { method: "HEAD" })
    expect(viewed.status).toBe(200)
    expect(await entryOf(viewed)).toBeUndefined()
    const signedOut = await client().request("/articles/art_p3", { method: "HEAD" })
    expect(signedOut.status).toBe(303)
    expect(signedOut.headers.get("location")).toBe("/?next=%2Farticles%2Fart_p3")
  })

  it("should offer a refused key form back as it was sent: the name typed and the access chosen, the field marked invalid", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const csrf = await c.csrfOf("/connect")
    const res = await c.request("/connect/keys", { method: "POST", form: { _csrf: csrf, name: `  ${"n".repeat(101)}`, scope: "write" } })
    expect(res.status).toBe(400)
    const page = await res.text()
    expect(page).toContain("Give the key a name of 1 to 100 characters")
    expect(page).toMatch(/<input type="text" id="key-name" name="name"[^>]* value="  n{101}"/)
    expect(page).toMatch(/<input type="text" id="key-name"[^>]* aria-invalid="true"/)
    expect(page).toMatch(/<input type="radio" name="scope" value="write" checked>/)
    expect(page).not.toMatch(/<input type="radio" name="scope" value="read-only" checked>/)
  })

  it("should count a key name's characters as code points, as the key's schema does: 100 emoji fit, 101 do not", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const csrf = await c.csrfOf("/connect")
    const fits = await c.request("/connect/keys", { method: "POST", form: { _csrf: csrf, name: "😀".repeat(100), scope: "read-only" } })
    expect(fits.status).toBe(303)
    const over = await c.request("/connect/keys", { method: "POST", form: { _csrf: csrf, name: "😀".repeat(101), scope: "read-only" } })
    expect(over.status).toBe(400)
    expect(await over.text()).toContain("Give the key a name of 1 to 100 characters")
  })

  it("should refuse a key name with nothing to see (zero-width spaces, bidi controls), which the list would show blank", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const csrf = await c.csrfOf("/connect")
    for (const name of ["\u200B\u200B", "\u202E", "\u2066\u00AD\u2069"]) {
      const res = await c.request("/connect/keys", { method: "POST", form: { _csrf: csrf, name, scope: "read-only" } })
      expect(res.status, JSON.stringify(name)).toBe(400)
      expect(await res.text()).toContain("Give the key a name of 1 to 100 characters")
    }
    expect((await c.request("/connect/keys", { method: "POST", form: { _csrf: csrf, name: "Zero\u200Bwidth inside", scope: "read-only" } })).status).toBe(303)
  })

  it("should log an edit posted as JSON as 415 unsupported_media_type", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const res = await c.request("/articles/art_p3/edit", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ title: "JSON" }) })
    expect(res.status).toBe(415)
    expect(await entryOf(res)).toMatchObject({ action: "POST /articles/{id}/edit", article_id: "art_p3", status: 415, error_code: "unsupported_media_type" })
  })

  it("should log an image upload without a file as refused (400 invalid_request), never as done", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const csrf = await c.csrfOf("/articles/art_p3")
    for (const image of [null, new Blob([], { type: "image/png" })]) {
      const form = new FormData()
      form.set("_csrf", csrf)
      if (image !== null) form.set("image", image, "empty.png")
      const res = await c.request("/articles/art_p3/image", { method: "POST", body: form })
      expect(res.status).toBe(303)
      expect(await (await c.request("/articles/art_p3")).text()).toContain("Choose an image file to upload.")
      expect(await entryOf(res)).toMatchObject({ action: "POST /articles/{id}/image", status: 400, error_code: "invalid_request" })
    }
  })

  it("should log revoking an unknown or another account's agent as 404 not_found, like an unknown key", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const csrf = await c.csrfOf("/connect")
    const res = await c.request("/connect/clients/bogus_client/revoke", { method: "POST", form: { _csrf: csrf, confirmed: "yes" } })
    expect(res.status).toBe(303)
    expect(await (await c.request("/connect")).text()).toContain("No such connected agent.")
    expect(await entryOf(res)).toMatchObject({ action: "POST /connect/clients/{id}/revoke", status: 404, error_code: "not_found" })
    const key = await c.request("/connect/keys/key_bogus/revoke", { method: "POST", form: { _csrf: csrf, confirmed: "yes" } })
    expect(key.status).toBe(404)
    expect(await entryOf(key)).toMatchObject({ action: "POST /connect/keys/{id}/revoke", status: 404, error_code: "not_found" })
  })
})

describe("a refused edit's reasons", () => {
  /** Posts an edit of art_p3 and returns the kept draft's page (or, a text too large to keep, the page shown at once with `status`). */
  const refusedEdit = async (body: string, status = 303) => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const csrf = await c.csrfOf("/articles/art_p3")
    const res = await c.request("/articles/art_p3/edit", { method: "POST", form: { _csrf: csrf, title: "Plain", body } })
    expect(res.status).toBe(status)
    return status === 303 ? (await c.request(res.headers.get("location")!.replace(/#.*$/, ""))).text() : res.text()
  }

  it("should say that a body nested too deep is too deep, not too large", async () => {
    const page = await refusedEdit(`${"<div>".repeat(300)}deep${"</div>".repeat(300)}`)
    expect(page).toContain("The body is HTML nested deeper than 256 elements.")
    expect(page).not.toContain("1 MiB")
  })

  it("should say that a body over 1 MiB is too large", async () => {
    const page = await refusedEdit(`<p>${"a".repeat(1024 * 1024)}</p>`, 400)
    expect(page).toContain("The body must be at most 1 MiB of HTML.")
    expect(page).not.toContain("nested deeper")
  })
})

describe("a save whose text is too large", () => {
  /** Account one signed in, a draft of art_p3 kept by a refused save (nested too deep), and the CSRF token. */
  const withEarlierDraft = async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const csrf = await c.csrfOf("/articles/art_p3")
    const refused = await c.request("/articles/art_p3/edit", { method: "POST", form: { _csrf: csrf, revision: "1", title: "Earlier draft", body: `${"<div>".repeat(300)}deep${"</div>".repeat(300)}` } })
    const earlier = refused.headers.get("location")!.replace(/#.*$/, "")
    const draft = /draft=([\w-]+)/.exec(earlier)![1]!
    return { c, csrf, earlier, draft }
  }

  it("should show the editor again with a body over 1 MiB as it was sent, its refusal and a 400, and keep the earlier draft", async () => {
    const { c, csrf, earlier, draft } = await withEarlierDraft()
    const typed = `<p>Typed by hand, too long ${"a".repeat(1024 * 1024)}</p>`
    const res = await c.request("/articles/art_p3/edit", { method: "POST", form: { _csrf: csrf, draft, revision: "1", title: "Too long a save", body: typed, reason: "my reason" } })
    expect(res.status).toBe(400)
    const page = await res.text()
    expect(page).toContain("Not saved.")
    expect(page).toContain("The body must be at most 1 MiB of HTML.")
    expect(page).toContain("too large to keep as a draft")
    expect(page).toContain('value="Too long a save"')
    expect(page).toContain('value="my reason"')
    expect(page).toContain(`\n&lt;p&gt;Typed by hand, too long ${"a".repeat(1024 * 1024)}&lt;/p&gt;</textarea>`)
    // the form shown is of the earlier draft, which is still kept (a save from it drops it)
    expect(page).toContain(`<input type="hidden" name="draft" value="${draft}">`)
    expect(await (await c.request(earlier)).text()).toContain('value="Earlier draft"')
    expect(await entryOf(res)).toMatchObject({ action: "POST /articles/{id}/edit", status: 400, error_code: "invalid_request" })
  })

  it("should keep as a draft a body within 1 MiB whose sanitised HTML is over it (413), never answer an error page that loses it", async () => {
    const { c, csrf, earlier, draft } = await withEarlierDraft()
    const typed = `<p>Typed by hand ${"<".repeat(300_000)}</p>`
    const res = await c.request("/articles/art_p3/edit", { method: "POST", form: { _csrf: csrf, draft, revision: "1", title: "Sanitised too large", body: typed } })
    expect(res.status).toBe(303)
    const location = res.headers.get("location")!
    expect(location).toMatch(/^\/articles\/art_p3\?draft=[\w-]+#edit-error$/)
    const page = await (await c.request(location.replace(/#.*$/, ""))).text()
    expect(page).toContain("Not saved.")
    expect(page).toContain("sanitised HTML is larger than 1048576 bytes")
    expect(page).toContain('value="Sanitised too large"')
    expect(page).toContain(`&lt;p&gt;Typed by hand ${"&lt;".repeat(300_000)}&lt;/p&gt;</textarea>`)
    expect(await entryOf(res)).toMatchObject({ action: "POST /articles/{id}/edit", status: 413, error_code: "payload_too_large" })
    // the earlier draft's text is in the new one: it is dropped
    expect(await (await c.request(earlier)).text()).toContain("no longer kept here")
  })

  it("should show the editor again with a too large text sent from a form of an earlier sign-in (403), not lose it", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const typed = `<p>Stale and long ${"b".repeat(1024 * 1024)}</p>`
    const res = await c.request("/articles/art_p3/edit", { method: "POST", headers: { "sec-fetch-site": "same-origin" }, form: { _csrf: "forged-token-value-000000", revision: "1", title: "Stale long", body: typed } })
    expect(res.status).toBe(403)
    const page = await res.text()
    expect(page).toContain("This form was opened before you last signed in, so it was not saved.")
    expect(page).toContain('value="Stale long"')
    expect(page).toContain(`&lt;p&gt;Stale and long ${"b".repeat(1024 * 1024)}&lt;/p&gt;</textarea>`)
  })
})

describe("an image upload whose form cannot be read", () => {
  it("should be refused as a POST without a valid token (403, logged so) when no token was read", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    for (const type of ["multipart/form-data; boundary=xx", "multipart/form-data"]) {
      const res = await c.request("/articles/art_p3/image", { method: "POST", headers: { "Content-Type": type }, body: "garbage" })
      expect(res.status, type).toBe(403)
      expect(await res.text(), type).toContain("Form expired")
      expect(await entryOf(res), type).toMatchObject({ action: "POST /articles/{id}/image", status: 403, error_code: "invalid_request" })
    }
  })

  it("should still say what went wrong with the upload when the form's token came first and was valid", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const csrf = await c.csrfOf("/articles/art_p3")
    const broken = `--xx\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${csrf}\r\n--xx\r\nContent-Disposition: form-data; name="image"; filename="x.png"\r\nContent-Type: image/png\r\n\r\nnot ended`
    const res = await c.request("/articles/art_p3/image", { method: "POST", headers: { "Content-Type": "multipart/form-data; boundary=xx" }, body: broken })
    expect(res.status).toBe(303)
    expect(await (await c.request("/articles/art_p3")).text()).toContain("The upload could not be read.")
    expect(await entryOf(res)).toMatchObject({ action: "POST /articles/{id}/image", status: 400, error_code: "invalid_request" })
    const large = new FormData()
    large.set("_csrf", csrf)
    large.set("image", new Blob([new Uint8Array(10 * 1024 * 1024 + 1)], { type: "image/png" }), "large.png")
    const tooLarge = await c.request("/articles/art_p3/image", { method: "POST", body: large })
    expect(tooLarge.status).toBe(303)
    expect(await (await c.request("/articles/art_p3")).text()).toContain("The image is larger than 10 MiB.")
    expect(await entryOf(tooLarge)).toMatchObject({ status: 413, error_code: "payload_too_large" })
  })
})

describe("the editor's preview", () => {
  it("should not be logged: a dry run changes nothing (docs/editor.md)", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const csrf = await c.csrfOf("/articles/art_p3")
    const res = await c.request("/articles/art_p3/preview", { method: "POST", form: { _csrf: csrf, title: "Plain", body: "<p>Previewed.</p>" } })
    expect(res.status).toBe(200)
    expect(await entryOf(res)).toBeUndefined()
  })
})

/**
 * A server of its own whose accounts may make `perMinute` requests a minute, with the fixture; runs
 * `check` with account one signed in and the CSRF token of its article art_p3's page, then closes it.
 */
const withLimitedServer = async (
  perMinute: number,
  check: (limited: Awaited<ReturnType<typeof startServer>>, one: ReturnType<typeof client>, csrf: string) => Promise<void>,
): Promise<void> => {
  const limited = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false", RATE_LIMIT_PER_MINUTE: String(perMinute) } })
  try {
    await limited.runtime.runPromise(importData(fixture))
    const one = client(() => limited)
    await one.signIn("one@example.com", "password-one")
    await check(limited, one, await one.csrfOf("/articles/art_p3"))
  } finally {
    await limited.close()
  }
}

describe("a sign-in refused for its address's failures", () => {
  it("should answer 429 with Retry-After once the address is over its failed sign-ins a minute", async () => {
    const limited = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false", AUTH_FAILURE_LIMIT_PER_MINUTE: "2" } })
    try {
      await limited.runtime.runPromise(importData(fixture))
      const guesser = client(() => limited)
      const statuses: Array<number> = []
      let last: Response | undefined
      for (let i = 0; i < 4; i++) {
        last = await guesser.signIn("one@example.com", `guess-${i}`)
        statuses.push(last.status)
      }
      expect(statuses.slice(0, 2)).toEqual([401, 401])
      expect(last!.status).toBe(429)
      expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0)
      expect(await last!.text()).toContain("Too many failed sign-ins from your address")
      // Refused for a limit, and still logged, as the API logs its equivalent: with no account
      // (none is known before the address's budget is checked), channel web, the status sent.
      const requestId = last!.headers.get("x-request-id")
      const unowned = await limited.runtime.runPromise(
        ActivityLog.use((log) => log.list(null as unknown as string, {}, { offset: 0, limit: 100 })),
      )
      expect(unowned.items.find((e) => e.request_id === requestId)).toMatchObject({
        account_id: null,
        actor: null,
        channel: "web",
        action: "POST / (sign in)",
        status: 429,
        error_code: "rate_limited",
      })
    } finally {
      await limited.close()
    }
  })
})

describe("a preview refused for its account's share of the sanitiser", () => {
  it("should count against the account's requests a minute, as a refused API call does, unless the browser says another site's page sent it", async () => {
    await withLimitedServer(3, async (limited, one, csrf) => {
      // The account's four places in the sanitiser taken, as by four large bodies being read.
      const takeShare = () => Promise.all(Array.from({ length: 4 }, () => limited.runtime.runPromise(HtmlAnalyzer.use((analyzer) => analyzer.admits("acc_p1", 100_000)))))
      let places = await takeShare()
      // A body past what is sanitised inline (32 Ki characters) needs the share.
      const large = { _csrf: csrf, title: "Plain", body: `<p>${"a".repeat(40_000)}</p>` }
      const refusedFor = async (headers: Record<string, string>, sentence: RegExp) => {
        const res = await one.request("/articles/art_p3/preview", { method: "POST", form: large, headers })
        expect(res.status, JSON.stringify(headers)).toBe(429)
        expect(((await res.json()) as { refused: string }).refused, JSON.stringify(headers)).toMatch(sentence)
      }
      const share = /^No preview now: more than 4 article bodies of this account being sanitised at once\./
      // Sent from another site's page, as the browser says: refused, not counted.
      await refusedFor({ "Sec-Fetch-Site": "cross-site" }, share)
      await refusedFor({ Origin: "https://elsewhere.test" }, share)
      // Sent by a script (no such header) or from the service's own page: refused and counted (1, 2).
      await refusedFor({}, share)
      await refusedFor({ "Sec-Fetch-Site": "same-origin" }, share)
      for (const release of places) release()
      const small = () => one.request("/articles/art_p3/preview", { method: "POST", form: { _csrf: csrf, title: "Plain", body: "<p>Previewed.</p>" } })
      expect((await small()).status).toBe(200)
      const past = await small()
      expect(past.status).toBe(429)
      expect(((await past.json()) as { refused: string }).refused).toMatch(/^No preview now: your account has made more than 3 requests in a minute/)
      // A refusal for the share whose count goes past the minute says so.
      places = await takeShare()
      await refusedFor({}, /^No preview now: your account has made more than 3 requests in a minute/)
      for (const release of places) release()
    })
  }, 60_000)
})

describe("the editor's preview past the account's limit", () => {
  it("should count a preview like a request and refuse one past the limit with 429, Retry-After and a sentence, logged, for that account alone", async () => {
    await withLimitedServer(2, async (limited, one, csrf) => {
      const preview = () => one.request("/articles/art_p3/preview", { method: "POST", form: { _csrf: csrf, title: "Plain", body: "<p>Previewed.</p>" } })
      expect((await preview()).status).toBe(200)
      expect((await preview()).status).toBe(200)
      const refused = await preview()
      expect(refused.status).toBe(429)
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
      const body = (await refused.json()) as { limited: boolean; refused: string }
      expect(body.limited).toBe(true)
      expect(body.refused).toMatch(/^No preview now: your account has made more than 2 requests in a minute \(previews count like API calls\)\. Wait \d+ seconds, then press Save again\.$/)
      expect(await entryOf(refused, limited)).toMatchObject({ action: "POST /articles/{id}/preview", status: 429, error_code: "rate_limited" })
      // Another account's previews are counted on its own.
      const two = client(() => limited)
      await two.signIn("two@example.com", "password-two")
      const csrfTwo = await two.csrfOf("/articles/art_p2")
      const theirs = await two.request("/articles/art_p2/preview", { method: "POST", form: { _csrf: csrfTwo, title: "Theirs", body: "<p>y</p>" } })
      expect(theirs.status).toBe(200)
      expect(((await theirs.json()) as { limited: boolean }).limited).toBe(false)
    })
  }, 60_000)
})

describe("an edit refused for its account's share of the sanitiser", () => {
  it("should keep the typed text as a draft and say when to try again, never answer an error page that loses it", async () => {
    await withLimitedServer(100, async (limited, one, csrf) => {
      // The account's share of the sanitiser filled: four large bodies of its own being sanitised.
      const large = `<p>${Array.from({ length: 120_000 }, (_, i) => `w${i}`).join(" ")}</p>`
      const busy = Array.from({ length: 4 }, () => limited.runtime.runPromise(Effect.result(HtmlAnalyzer.use((analyzer) => analyzer.analyze(large, "acc_p1")))))
      // A body past what is sanitised inline (32 Ki characters) needs that share.
      const typed = `<p>Typed by hand ${"a".repeat(40_000)}</p>`
      const res = await one.request("/articles/art_p3/edit", { method: "POST", form: { _csrf: csrf, title: "Plain typed", body: typed, revision: "1" } })
      await Promise.all(busy)
      expect(res.status).toBe(303)
      const location = res.headers.get("location")!
      expect(location).toMatch(/^\/articles\/art_p3\?draft=[A-Za-z0-9_-]+#edit-error$/)
      const page = await (await one.request(location.replace(/#.*$/, ""))).text()
      expect(page).toContain("Typed by hand")
      expect(page).toContain("Plain typed")
      expect(page).toMatch(/Your edit was not saved: more than 4 article bodies of this account being sanitised at once\. Wait 1 seconds?, then save again\./)
      expect(await entryOf(res, limited)).toMatchObject({ action: "POST /articles/{id}/edit", status: 429, error_code: "rate_limited" })
      const caller = { accountId: "acc_p1", actor: { type: "user" as const, id: "acc_p1", name: "One" }, scope: "write" as const, channel: "web" as const, requestId: "req_check", action: "TEST", startedAt: Date.now() }
      expect((await limited.runtime.runPromise(getArticle(caller, "art_p3"))).title).toBe("Plain")
    })
  }, 60_000)
})

describe("the featured image form", () => {
  it("should save the alternative text as sent, an emptied one too: a new image never keeps the old one's", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const csrf = await c.csrfOf("/articles/art_p1")
    const upload = (png: string, alt: string) => {
      const form = new FormData()
      form.set("_csrf", csrf)
      form.set("alt", alt)
      form.set("image", new Blob([Buffer.from(png, "base64")], { type: "image/png" }), "pixel.png")
      return c.request("/articles/art_p1/image", { method: "POST", body: form })
    }
    expect((await upload("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "A red pixel")).status).toBe(303)
    expect(await (await c.request("/articles/art_p1")).text()).toContain('alt="A red pixel"')
    // the form offers the current text: emptied by the person, the new image has none
    expect((await upload("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC", "")).status).toBe(303)
    const page = await (await c.request("/articles/art_p1")).text()
    expect(page).toContain("Featured image replaced")
    expect(page).not.toContain("A red pixel")
  })

  it("should keep an alternative text of up to 500 characters counted as code points: 300 emoji after a letter are kept whole", async () => {
    const c = client()
    await c.signIn("one@example.com", "password-one")
    const csrf = await c.csrfOf("/articles/art_p1")
    const alt = `a${"😀".repeat(300)}`
    const form = new FormData()
    form.set("_csrf", csrf)
    form.set("alt", alt)
    form.set("image", new Blob([Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64")], { type: "image/png" }), "pixel.png")
    expect((await c.request("/articles/art_p1/image", { method: "POST", body: form })).status).toBe(303)
    const caller = { accountId: "acc_p1", actor: { type: "user" as const, id: "acc_p1", name: "One" }, scope: "write" as const, channel: "web" as const, requestId: "req_check_alt", action: "TEST", startedAt: Date.now() }
    const article = await server.runtime.runPromise(getArticle(caller, "art_p1"))
    expect(article["featured image"]?.alt).toBe(alt)
    // one character more than 500 is refused, as the API refuses it, and nothing changes (never cut unseen)
    const longer = new FormData()
    longer.set("_csrf", csrf)
    longer.set("alt", `b${"😀".repeat(500)}`)
    longer.set("image", form.get("image") as Blob, "pixel.png")
    expect((await c.request("/articles/art_p1/image", { method: "POST", body: longer })).status).toBe(303)
    const page = await (await c.request("/articles/art_p1")).text()
    expect(page).toContain("Image not saved")
    expect((await server.runtime.runPromise(getArticle(caller, "art_p1")))["featured image"]?.alt).toBe(alt)
  })
})
