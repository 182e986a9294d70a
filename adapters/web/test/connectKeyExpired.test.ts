/** The Connect page's key form sent after its CSRF token or its session expired: the name typed comes back, never a key. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { importData } from "@content-site/core"
import { type StartedServer, startServer } from "../../../apps/server/server.ts"
import { cookieClient } from "../../../test/support/webSignIn.ts"

let server: StartedServer

beforeAll(async () => {
  server = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false" } })
  await server.runtime.runPromise(importData({ accounts: [{ id: "acc_k1", email: "keys@example.com", password: "password-keys", name: "Keys", sites: [] }] }))
}, 60_000)

afterAll(async () => {
  await server?.close()
})

/** A cookie-keeping client that does not follow redirects, signing in as the test's person. */
const client = () => {
  const { request, csrfOf } = cookieClient(() => server.url)
  /** Signs in on the sign-in page at `at` (its hidden `next` kept); the redirect's target. */
  const signIn = async (at = "/?next=%2Fsites") => {
    const form = await (await request(at)).text()
    const next = /name="next" value="([^"]*)"/.exec(form)![1]!.replace(/&amp;/g, "&")
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form)![1]!
    const res = await request("/", { method: "POST", form: { _csrf: csrf, email: "keys@example.com", password: "password-keys", next } })
    expect(res.status).toBe(303)
    return res.headers.get("location")!
  }
  return { request, csrfOf, signIn }
}

const NAME = "Reporting <script> & “Ünïcode” 😀 (v2)!"
const NAME_HTML = "Reporting &lt;script&gt; &amp; “Ünïcode” 😀 (v2)!"

describe("the key form sent after its CSRF token expired", () => {
  it("should show the Connect page again with the name typed and the access chosen, the clear message, and no key", async () => {
    const c = client()
    await c.signIn()
    const res = await c.request("/connect/keys", { method: "POST", form: { _csrf: "forged-token-value-000000", name: NAME, scope: "write" } })
    expect(res.status).toBe(403)
    const page = await res.text()
    expect(page).toContain("This form was opened in another session or has expired")
    expect(page).toMatch(new RegExp(`<input type="text" id="key-name" name="name"[^>]* value="${NAME_HTML.replace(/[()]/g, "\\$&")}"`))
    expect(page).toMatch(/<input type="radio" name="scope" value="write" checked>/)
    expect(page).not.toContain('id="new-key-value"')
    // a fresh token in the form: sending it again works
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!
    expect(csrf).not.toBe("forged-token-value-000000")
    expect((await c.request("/connect/keys", { method: "POST", form: { _csrf: csrf, name: "Sent again", scope: "read-only" } })).status).toBe(303)
    expect(await (await c.request("/connect")).text()).not.toContain(NAME_HTML)
  })
})

describe("the key form sent after the session expired", () => {
  it("should offer the name typed and the access chosen back on the Connect page once signed in again, never a key", async () => {
    const c = client()
    const res = await c.request("/connect/keys", { method: "POST", form: { _csrf: "from-a-session-long-gone-00", name: NAME, scope: "write" } })
    expect(res.status).toBe(303)
    const signInAt = res.headers.get("location")!
    expect(signInAt).toMatch(/^\/\?expired=1&next=%2Fconnect/)
    expect(await (await c.request(signInAt)).text()).toContain("Your session expired, so that was not saved.")
    const back = await c.signIn(signInAt)
    expect(back).toMatch(/^\/connect\?/)
    const page = await (await c.request(back)).text()
    expect(page).toMatch(new RegExp(`<input type="text" id="key-name" name="name"[^>]* value="${NAME_HTML.replace(/[()]/g, "\\$&")}"`))
    expect(page).toMatch(/<input type="radio" name="scope" value="write" checked>/)
    expect(page).toContain("No key has been created yet. If you had just sent this form, your session had expired before it arrived")
    expect(page).not.toContain('id="new-key-value"')
  })
})
