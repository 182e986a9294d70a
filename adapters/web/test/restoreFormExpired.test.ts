/** A restore sent with a form whose CSRF token expired: the revision page again, the reason typed kept, nothing restored. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { importData } from "@content-site/core"
import { type StartedServer, startServer } from "../../../apps/server/server.ts"
import { signInCookie } from "../../../test/support/webSignIn.ts"

let server: StartedServer
let cookie = ""

beforeAll(async () => {
  server = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false" } })
  await server.runtime.runPromise(importData({ accounts: [{ id: "acc_r1", email: "restore@example.com", password: "password-restore", name: "Restore", sites: [
    { id: "site_r1", name: "Site", url: "https://r.test", articles: [
      { id: "art_r1", title: "Restorable", url: "https://r.test/a", status: "published", published_at: "2026-11-01T09:00:00Z", "target keyword": "k", body: "<p>One</p>" },
    ] },
  ] }] }))
  cookie = await signInCookie(server.url, "restore@example.com", "password-restore")
  // a second revision, so that revision 1 can be restored
  const articlePage = await (await fetch(`${server.url}/articles/art_r1`, { headers: { Cookie: cookie } })).text()
  const token = /name="_csrf" value="([^"]+)"/.exec(articlePage)![1]!
  const edited = await fetch(`${server.url}/articles/art_r1/edit`, {
    method: "POST",
    redirect: "manual",
    headers: { Cookie: cookie, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: token, revision: "1", title: "Restorable", body: "<p>Two</p>" }).toString(),
  })
  expect(edited.status).toBe(303)
}, 60_000)

afterAll(async () => {
  await server?.close()
})

describe("a restore sent after its form's CSRF token expired", () => {
  it("should answer 403 with the revision page, saying why nothing was restored, the reason typed kept and a fresh token", async () => {
    const res = await fetch(`${server.url}/articles/art_r1/revisions/1/restore`, {
      method: "POST",
      redirect: "manual",
      headers: { Cookie: cookie, "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: "forged-token-value-000000", confirmed: "yes", reason: "Back to <one> & only" }).toString(),
    })
    expect(res.status).toBe(403)
    const page = await res.text()
    expect(page).toContain("Not restored.")
    expect(page).toContain("This form was opened in another session or has expired")
    expect(page).toMatch(/<input type="text" id="restore-reason" name="reason" maxlength="500" value="Back to &lt;one&gt; &amp; only">/)
    expect(/name="_csrf" value="([^"]+)"/.exec(page)?.[1]).not.toBe("forged-token-value-000000")
  })
})
