/** The sign-in form sent with an empty field (a browser without form validation, a script). */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { importData } from "@content-site/core"
import { type StartedServer, startServer } from "../../../apps/server/server.ts"

let server: StartedServer

beforeAll(async () => {
  server = await startServer({ storage: "memory", quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false" } })
  await server.runtime.runPromise(importData({ accounts: [{ id: "acc_e1", email: "one@example.com", password: "password-one", name: "One", sites: [] }] }))
}, 60_000)

afterAll(async () => {
  await server?.close()
})

const post = async (form: Record<string, string>) => {
  const first = await fetch(`${server.url}/`)
  const cookie = first.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ")
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await first.text())![1]!
  const res = await fetch(`${server.url}/`, {
    method: "POST",
    redirect: "manual",
    headers: { Cookie: cookie, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: csrf, next: "/sites", ...form }).toString(),
  })
  return { status: res.status, text: await res.text() }
}

describe("sign-in with an empty field", () => {
  it("should ask for the email, not claim a wrong password, when the email is empty, focusing the email field", async () => {
    const { status, text } = await post({ email: "", password: "" })
    expect(status).toBe(400)
    expect(text).toContain("Enter your email address")
    expect(text).not.toContain("Wrong email or password")
    expect(text).toMatch(/id="email"[^>]*autofocus/)
    expect(text).not.toMatch(/id="password"[^>]*autofocus/)
  })

  it("should ask for the password, keeping the email typed, when only the password is empty", async () => {
    const { status, text } = await post({ email: "one@example.com", password: "" })
    expect(status).toBe(400)
    expect(text).toContain("Enter your password")
    expect(text).not.toContain("Wrong email or password")
    expect(text).toContain('value="one@example.com"')
  })

  it("should say what to do after a wrong password", async () => {
    const { status, text } = await post({ email: "one@example.com", password: "nope" })
    expect(status).toBe(401)
    expect(text).toContain("Wrong email or password. Check both and try again.")
  })
})
