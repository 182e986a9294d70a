/**
 * What a security review broke, over real HTTP against a started server on PostgreSQL: strict
 * query strings on every route, text PostgreSQL cannot store refused as 400s, absolute URLs from
 * PUBLIC_URL only, and sign-out ending the OAuth sign-in of the same browser.
 */
import { createHash, randomBytes } from "node:crypto"
import { request as httpRequest } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Browser } from "../mcp/support.ts"
import { json, KEYS, startTestServer, type TestServer } from "./helpers.ts"

let t: TestServer
beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PER_MINUTE: "100000", AUTH_FAILURE_LIMIT_PER_MINUTE: "100000", OAUTH_REGISTRATION_LIMIT_PER_HOUR: "1000" })
})
afterAll(async () => {
  await t?.close()
})

const hiddenField = (html: string, name: string): string => {
  const m = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html)
  if (m === null) throw new Error(`no hidden ${name} in:\n${html.slice(0, 2000)}`)
  return (m[1] as string).replace(/&amp;/g, "&")
}

/** Signs a browser in on the web sign-in page. */
const webSignIn = async (browser: Browser, email = "owner-a@example.com", password = "password-a-123") => {
  const page = await (await browser.request(`${t.url}/`)).text()
  const res = await browser.request(`${t.url}/`, { form: { _csrf: hiddenField(page, "_csrf"), email, password, next: "/sites" } })
  expect(res.status).toBe(303)
  return res
}

describe("strict query strings on every route (review point 8)", () => {
  const apiRoutes = [
    "/api/v1/sites",
    "/api/v1/sites/site_a1/articles",
    "/api/v1/sites/site_a1/backlinks",
    "/api/v1/sites/site_a1/stats",
    "/api/v1/articles/art_a1",
    "/api/v1/articles/art_a1/revisions",
    "/api/v1/articles/art_a1/revisions/1",
    "/api/v1/activity",
    "/api/v1/openapi.json",
    "/api/docs",
    "/healthz",
    "/readyz",
    "/media/no-such-key.png",
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
  ]
  for (const q of ["__proto__=1", "constructor=1", "bogus=1"]) {
    it(`should answer ?${q} with 400 invalid_request on every API, health, media and metadata route`, async () => {
      for (const path of apiRoutes) {
        const res = await t.api(`${path}?${q}`)
        expect(res.status, path).toBe(400)
        expect(res.headers.get("content-type"), path).toMatch(/^application\/problem\+json/)
        const body = await json(res)
        expect(body.code, path).toBe("invalid_request")
        expect(body.detail, path).toContain(q.split("=")[0])
      }
      const put = await t.api(`/api/v1/articles/art_a1?${q}`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ title: "x" }) })
      expect(put.status).toBe(400)
      // /mcp checks its token before its query string, as the API checks its key before its
      // parameters: without a token, 401; with one, the query is the 400 (test/mcp/exchange.test.ts)
      const mcp = await fetch(`${t.url}/mcp?${q}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
      expect(mcp.status).toBe(401)
      const apiWithoutKey = await t.api(`/api/v1/sites?${q}`, { key: null })
      expect(apiWithoutKey.status).toBe(401)
    })

    it(`should answer ?${q} with a 400 page on every web page`, async () => {
      const browser = new Browser()
      expect((await browser.request(`${t.url}/?${q}`)).status).toBe(400)
      await webSignIn(browser)
      for (const path of ["/sites", "/sites/site_a1", "/articles/art_a1", "/articles/art_a1/revisions/1", "/activity", "/connect", "/static/app.css"]) {
        const res = await browser.request(`${t.url}${path}?${q}`)
        expect(res.status, path).toBe(400)
        expect(await res.text(), path).toContain(q.split("=")[0])
      }
      // the parameters each page takes still work
      expect((await browser.request(`${t.url}/sites?page=1`)).status).toBe(200)
      expect((await browser.request(`${t.url}/sites/site_a1?tab=backlinks&page=1`)).status).toBe(200)
      expect((await browser.request(`${t.url}/activity?channel=api&page=1`)).status).toBe(200)
    })
  }

  it("should summarise any month from 0001 to 9999 as itself (not 0099 as 1999) and refuse the year 0000", async () => {
    for (const period of ["0000-01", "0000-12"]) {
      const res = await t.api(`/api/v1/sites/site_a1/stats?period=${period}`)
      expect(res.status, period).toBe(400)
      expect((await json(res)).errors[0].path).toBe("period")
    }
    for (const period of ["0001-01", "0099-12", "1900-01", "1969-12", "1970-01", "9999-12"]) {
      const res = await t.api(`/api/v1/sites/site_a1/stats?period=${period}`)
      expect(res.status, period).toBe(200)
      const stats = await json(res)
      expect(stats.period.from.slice(0, 7), period).toBe(period)
      expect(stats.period.to.slice(0, 7), period).toBe(period)
      expect([stats.articles.count, stats.backlinks.count], period).toEqual([0, 0])
    }
  })
})

/** A registered public OAuth client and an authorize URL for it (PKCE S256). */
const registerClient = async (name = "Review Agent") => {
  const redirectUri = "http://127.0.0.1:1/callback"
  const res = await fetch(`${t.url}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: name, redirect_uris: [redirectUri], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" }),
  })
  expect(res.status).toBe(201)
  const clientId = ((await res.json()) as { client_id: string }).client_id
  let lastVerifier = ""
  const authorizeUrl = () => {
    const verifier = randomBytes(32).toString("base64url")
    lastVerifier = verifier
    const challenge = createHash("sha256").update(verifier).digest("base64url")
    const q = new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: "mcp",
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: randomBytes(8).toString("hex"),
      resource: `${t.url}/mcp`,
    })
    return `${t.url}/oauth/authorize?${q}`
  }
  return { clientId, redirectUri, authorizeUrl, verifier: () => lastVerifier }
}

/** Follows redirects from an authorize URL until a page or the client's redirect URI. */
const walk = async (browser: Browser, start: string, redirectUri: string) => {
  let url = start
  for (let hop = 0; hop < 10; hop++) {
    const res = await browser.request(url)
    const location = res.headers.get("location")
    if (location === null) return { kind: "page" as const, url, status: res.status, html: await res.text() }
    const next = new URL(location, url).toString()
    if (next.startsWith(redirectUri)) return { kind: "redirect" as const, url: next, code: new URL(next).searchParams.get("code") }
    url = next
  }
  throw new Error("too many redirects")
}

const postForm = (browser: Browser, pageUrl: string, html: string, actionPart: string, form: Record<string, string>) => {
  const m = new RegExp(`<form method="post" action="([^"]*${actionPart}[^"]*)">`).exec(html)
  if (m === null) throw new Error(`no form ${actionPart} in ${html.slice(0, 1500)}`)
  return browser.request(new URL((m[1] as string).replace(/&amp;/g, "&"), pageUrl).toString(), { form })
}

describe("text PostgreSQL cannot store is a 400 (review point 6)", () => {
  const put = (body: string) => t.api("/api/v1/articles/art_a03", { method: "PUT", headers: { "content-type": "application/json" }, body })

  it("should refuse a NUL or an unpaired surrogate in a title, reason or body with 400 naming the field", async () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      [JSON.stringify({ title: "a\u0000b" }), "title"],
      [JSON.stringify({ title: "ok", reason: "why\u0000" }), "reason"],
      [JSON.stringify({ body: "<p>a\u0000b</p>" }), "body"],
      ['{"title":"a\\ud800b"}', "title"],
      ['{"body":"<p>\\udc00</p>"}', "body"],
    ]
    for (const [body, field] of cases) {
      const res = await put(body)
      expect(res.status, body).toBe(400)
      const problem = await json(res)
      expect(problem.code).toBe("invalid_request")
      expect(problem.errors.map((e: { path: string }) => e.path)).toContain(field)
      expect(JSON.stringify(problem)).not.toMatch(/invalid message format|database/i)
    }
    const article = await json(await t.api("/api/v1/articles/art_a03"))
    expect(article.revision).toBe(1)
  })

  it("should refuse them in a key name, a restore reason and an email at web sign-in", async () => {
    const signedOut = new Browser()
    const page = await (await signedOut.request(`${t.url}/`)).text()
    // (a form cannot carry an unpaired surrogate: the browser sends U+FFFD)
    for (const email of ["owner-a\u0000@example.com", "\u0000"]) {
      const res = await signedOut.request(`${t.url}/`, { form: { _csrf: hiddenField(page, "_csrf"), email, password: "x", next: "/sites" } })
      expect(res.status, JSON.stringify(email)).toBe(400)
    }
    const browser = new Browser()
    await webSignIn(browser)
    const connect = await (await browser.request(`${t.url}/connect`)).text()
    const csrf = hiddenField(connect, "_csrf")
    const key = await browser.request(`${t.url}/connect/keys`, { form: { _csrf: csrf, name: "ci\u0000", scope: "read-only" } })
    expect(key.status).toBe(400)
    const restore = await browser.request(`${t.url}/articles/art_a1/revisions/1/restore`, { form: { _csrf: csrf, reason: "back\u0000", confirmed: "yes" } })
    expect(restore.status).toBe(400)
  })

  it("should refuse them at the OAuth sign-in page and in client registration fields", async () => {
    const { authorizeUrl, redirectUri } = await registerClient()
    const browser = new Browser()
    const first = await walk(browser, authorizeUrl(), redirectUri)
    expect(first.kind).toBe("page")
    if (first.kind !== "page") return
    const csrf = hiddenField(first.html, "csrf")
    const login = await postForm(browser, first.url, first.html, "/login", { csrf, email: "owner-a\u0000@example.com", password: "x" })
    expect(login.status).toBe(400)

    for (const field of [{ client_name: "agent\u0000" }, { client_name: "agent\ud800" }, { client_uri: "https://a.test/\u0000" }, { redirect_uris: ["http://127.0.0.1:1/cb\u0000"] }]) {
      const res = await fetch(`${t.url}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ client_name: "agent", redirect_uris: ["http://127.0.0.1:1/cb"], token_endpoint_auth_method: "none", ...field }),
      })
      expect(res.status, JSON.stringify(field)).toBe(400)
      const body = (await res.json()) as { error: string }
      expect(["invalid_client_metadata", "invalid_redirect_uri"]).toContain(body.error)
    }
    // an id that could never have been stored is unknown, not a database error
    const res = await fetch(`${t.url}/oauth/authorize?client_id=%00&response_type=code&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcb`, { redirect: "manual" })
    expect(res.status).toBe(400)
  })
})

/** A GET with headers fetch() will not send as given (`Host`), over node:http. */
const rawGet = (base: string, path: string, headers: Record<string, string>) =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
    const url = new URL(path, base)
    const req = httpRequest({ host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method: "GET", headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }))
    })
    req.on("error", reject)
    req.end()
  })

/** Every absolute http(s) URL in a text. */
const urlsIn = (text: string): ReadonlyArray<string> => [...text.matchAll(/https?:\/\/[^"\s,<>]+/g)].map((m) => m[0])

describe("absolute URLs come from PUBLIC_URL only (review point 5)", () => {
  const documents = ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
  const forged = { host: "evil.example", "x-forwarded-host": "evil.example", "x-forwarded-proto": "https", forwarded: "host=evil.example;proto=https" }

  const check = async (base: string, publicUrl: string) => {
    for (const path of documents) {
      const res = await rawGet(base, path, forged)
      expect(res.status, path).toBe(200)
      expect(res.body, path).not.toContain("evil.example")
      const urls = urlsIn(res.body)
      expect(urls.length, path).toBeGreaterThan(0)
      for (const url of urls) expect(url.startsWith(`${publicUrl}/`) || url === publicUrl, `${path}: ${url}`).toBe(true)
      expect(res.headers["cache-control"], path).toBe("public, max-age=300")
    }
    const metadata = JSON.parse((await rawGet(base, "/.well-known/oauth-authorization-server", forged)).body) as Record<string, unknown>
    expect(metadata["issuer"]).toBe(publicUrl)
    expect(metadata["authorization_endpoint"]).toBe(`${publicUrl}/oauth/authorize`)
    expect(metadata["token_endpoint"]).toBe(`${publicUrl}/oauth/token`)
    // (/mcp itself refuses a foreign Host with 403: DNS-rebinding protection)
    const unauthorized = await rawGet(base, "/mcp", { host: new URL(publicUrl).host })
    expect(unauthorized.status).toBe(401)
    expect(String(unauthorized.headers["www-authenticate"])).toContain(`${publicUrl}/.well-known/oauth-protected-resource/mcp`)
  }

  it("should name only the configured origin whatever Host and X-Forwarded-* say", async () => {
    await check(t.url, t.url)
  })

  it("should do so behind a trusted proxy too, with an https PUBLIC_URL", async () => {
    const behind = await startTestServer({ PUBLIC_URL: "https://cs.example", TRUST_PROXY: "true" }, { storage: "memory", seed: false })
    try {
      await check(behind.url, "https://cs.example")
    } finally {
      await behind.close()
    }
  })

  it("should send the browser back to PUBLIC_URL after the OAuth sign-in, whatever Host the authorize request had", async () => {
    const { authorizeUrl } = await registerClient()
    const start = new URL(authorizeUrl())
    const res = await rawGet(t.url, `${start.pathname}${start.search}`, forged)
    expect(res.status).toBe(303)
    const location = String(res.headers["location"])
    expect(location).not.toContain("evil.example")
    const cookies = ([] as Array<string>).concat(res.headers["set-cookie"] ?? []).map((c) => c.split(";")[0]).join("; ")
    const page = await rawGet(t.url, new URL(location, t.url).pathname, { cookie: cookies })
    expect(page.status).toBe(200)
    const browser = new Browser()
    for (const c of cookies.split("; ")) browser.cookies.set(c.slice(0, c.indexOf("=")), c.slice(c.indexOf("=") + 1))
    const login = await postForm(browser, new URL(location, t.url).toString(), page.body, "/login", { csrf: hiddenField(page.body, "csrf"), email: "owner-a@example.com", password: "password-a-123" })
    expect(login.status).toBe(303)
    expect(login.headers.get("location")?.startsWith(`${t.url}/oauth/`)).toBe(true)
  })
})

describe("the OAuth provider's own answers carry the pages' security headers", () => {
  it("should send COOP and, with an https PUBLIC_URL, HSTS on the authorization endpoint's error page and its other answers", async () => {
    const https = await startTestServer({ PUBLIC_URL: "https://cs.example", TRUST_PROXY: "true" }, { storage: "memory", seed: false })
    try {
      // an unknown client: the provider's own HTML error page
      const error = await rawGet(https.url, "/oauth/authorize?client_id=unknown-client&response_type=code", {})
      expect(error.status).toBe(400)
      expect(String(error.headers["content-type"])).toContain("text/html")
      for (const res of [error, await rawGet(https.url, "/oauth/jwks", {})]) {
        expect(res.headers["strict-transport-security"]).toBe("max-age=31536000; includeSubDomains")
        expect(res.headers["cross-origin-opener-policy"]).toBe("same-origin")
        expect(res.headers["x-content-type-options"]).toBe("nosniff")
        expect(String(res.headers["content-security-policy"])).toContain("frame-ancestors 'none'")
      }
    } finally {
      await https.close()
    }
    // over plain http (this file's server) no HSTS, COOP still
    const plain = await rawGet(t.url, "/oauth/authorize?client_id=unknown-client&response_type=code", {})
    expect(plain.headers["strict-transport-security"]).toBeUndefined()
    expect(plain.headers["cross-origin-opener-policy"]).toBe("same-origin")
  })
})

describe("signing out ends every sign-in of the browser (review point 3)", () => {
  /** Runs an authorization to its end: continue as the signed-in person or sign in, then allow. */
  const authorize = async (browser: Browser, url: string, redirectUri: string, how: "continue" | "password") => {
    let step = await walk(browser, url, redirectUri)
    for (let i = 0; i < 4 && step.kind === "page"; i++) {
      const csrf = hiddenField(step.html, "csrf")
      const res = step.html.includes(">Allow</button>")
        ? await postForm(browser, step.url, step.html, "/confirm", { csrf, decision: "allow" })
        : how === "continue"
          ? await postForm(browser, step.url, step.html, "/login", { csrf, continue: "session" })
          : await postForm(browser, step.url, step.html, "/login", { csrf, email: "owner-a@example.com", password: "password-a-123" })
      const location = res.headers.get("location")
      expect(location, step.html.slice(0, 500)).not.toBeNull()
      const next = new URL(location as string, step.url).toString()
      step = next.startsWith(redirectUri) ? { kind: "redirect", url: next, code: new URL(next).searchParams.get("code") } : await walk(browser, next, redirectUri)
    }
    expect(step.kind).toBe("redirect")
    return step
  }

  const signOut = async (browser: Browser) => {
    const sites = await (await browser.request(`${t.url}/sites`)).text()
    const res = await browser.request(`${t.url}/signout`, { form: { _csrf: hiddenField(sites, "_csrf") } })
    expect(res.status).toBe(303)
    expect((await browser.request(`${t.url}/sites`)).status).toBe(303)
  }

  const expectPasswordPage = async (browser: Browser, url: string, redirectUri: string) => {
    const step = await walk(browser, url, redirectUri)
    expect(step.kind).toBe("page")
    if (step.kind !== "page") return
    expect(step.html).toContain('name="password"')
    expect(step.html).not.toContain("Continue as")
  }

  it("should ask for the password again after the web pages sign out, for known and new clients", async () => {
    const browser = new Browser()
    await webSignIn(browser)
    const known = await registerClient("Known Agent")
    const first = await authorize(browser, known.authorizeUrl(), known.redirectUri, "continue")
    expect(first.kind === "redirect" && first.code).toBeTruthy()
    // while signed in, the known client gets its code without any page
    const again = await walk(browser, known.authorizeUrl(), known.redirectUri)
    expect(again.kind === "redirect" && again.code).toBeTruthy()

    await signOut(browser)

    await expectPasswordPage(browser, known.authorizeUrl(), known.redirectUri)
    const silent = await walk(browser, `${known.authorizeUrl()}&prompt=none`, known.redirectUri)
    expect(silent.kind).toBe("redirect")
    if (silent.kind === "redirect") {
      expect(silent.code).toBeNull()
      expect(new URL(silent.url).searchParams.get("error")).toBe("login_required")
    }
    const fresh = await registerClient("New Agent")
    await expectPasswordPage(browser, fresh.authorizeUrl(), fresh.redirectUri)
  })

  it("should end a sign-in made on the OAuth page when the web pages sign out", async () => {
    const browser = new Browser()
    const client = await registerClient("Password Agent")
    const first = await authorize(browser, client.authorizeUrl(), client.redirectUri, "password")
    expect(first.kind === "redirect" && first.code).toBeTruthy()
    // one sign-in: the pages know this browser now
    expect((await browser.request(`${t.url}/sites`)).status).toBe(200)
    const again = await walk(browser, client.authorizeUrl(), client.redirectUri)
    expect(again.kind === "redirect" && again.code).toBeTruthy()

    await signOut(browser)

    await expectPasswordPage(browser, client.authorizeUrl(), client.redirectUri)
    // and signing in again gives a code
    const back = await authorize(browser, client.authorizeUrl(), client.redirectUri, "password")
    expect(back.kind === "redirect" && back.code).toBeTruthy()
  })

  it("should give no code for an Allow clicked after the browser signed out on the pages", async () => {
    const browser = new Browser()
    const client = await registerClient("Left Open Agent")
    let step = await walk(browser, client.authorizeUrl(), client.redirectUri)
    if (step.kind !== "page") throw new Error("no sign-in page")
    const login = await postForm(browser, step.url, step.html, "/login", { csrf: hiddenField(step.html, "csrf"), email: "owner-a@example.com", password: "password-a-123" })
    expect(login.status).toBe(303)
    step = await walk(browser, new URL(login.headers.get("location") as string, step.url).toString(), client.redirectUri)
    if (step.kind !== "page") throw new Error("no consent page")
    expect(step.html).toContain(">Allow</button>")
    // the consent page is left open; the person signs out on the pages
    await signOut(browser)
    const allow = await postForm(browser, step.url, step.html, "/confirm", { csrf: hiddenField(step.html, "csrf"), decision: "allow" })
    const location = allow.headers.get("location")
    const end = location === null ? { kind: "page" as const } : await walk(browser, new URL(location, step.url).toString(), client.redirectUri)
    if (end.kind === "redirect") expect(end.code).toBeNull()
  })

  it("should not let the provider's session stand in for another account signed in on the pages", async () => {
    const browser = new Browser()
    const client = await registerClient("Switch Agent")
    await authorize(browser, client.authorizeUrl(), client.redirectUri, "password")
    await signOut(browser)
    await webSignIn(browser, "owner-b@example.com", "password-b-123")
    const step = await walk(browser, client.authorizeUrl(), client.redirectUri)
    expect(step.kind).toBe("page")
    if (step.kind === "page") expect(step.html).toContain("Continue as owner-b@example.com")
  })

  it("should give the other account's code when it continues after the first account's sign-in ended, or signs in with its password", async () => {
    /** The account a code was issued for: the subject of the access token it is redeemed for. */
    const subjectOf = async (client: Awaited<ReturnType<typeof registerClient>>, code: string | null) => {
      const res = await fetch(`${t.url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "authorization_code", client_id: client.clientId, redirect_uri: client.redirectUri, code: code ?? "", code_verifier: client.verifier() }),
      })
      expect(res.status).toBe(200)
      const token = ((await res.json()) as { access_token: string }).access_token
      return (JSON.parse(Buffer.from(token.split(".")[1] as string, "base64url").toString()) as { sub: string }).sub
    }
    const browser = new Browser()
    const client = await registerClient("Switch Through Agent")
    const first = await authorize(browser, client.authorizeUrl(), client.redirectUri, "password")
    const ownerA = await subjectOf(client, first.kind === "redirect" ? first.code : null)
    await signOut(browser)
    await webSignIn(browser, "owner-b@example.com", "password-b-123")
    // (the provider's own session was owner A's: it answered with a logout page posting to an endpoint this service does not serve)
    const second = await authorize(browser, client.authorizeUrl(), client.redirectUri, "continue")
    const ownerB = await subjectOf(client, second.kind === "redirect" ? second.code : null)
    expect(ownerB).not.toBe(ownerA)
    // and back to owner A with the password typed on the OAuth page
    await signOut(browser)
    const third = await authorize(browser, client.authorizeUrl(), client.redirectUri, "password")
    expect(await subjectOf(client, third.kind === "redirect" ? third.code : null)).toBe(ownerA)
  })
})

describe("paths nothing serves", () => {
  it("should answer a 404 as a problem with its X-Request-Id outside the API and the pages too (static files, OAuth, MCP, well-known)", async () => {
    for (const path of ["/api", "/static/nope.js", "/.well-known/nope", "/oauth/nope", "/mcp/nope"]) {
      const res = await fetch(`${t.url}${path}`)
      expect(res.status, path).toBe(404)
      expect(res.headers.get("content-type"), path).toBe("application/problem+json")
      const problem = (await res.json()) as Record<string, unknown>
      expect(problem, path).toMatchObject({ status: 404, code: "not_found", request_id: res.headers.get("x-request-id") })
      expect(String(problem["detail"]), path).toContain(path)
    }
  })
})

describe("client addresses behind a trusted proxy", () => {
  it("should count failed authentications by the address the proxy added, not one the client wrote", async () => {
    const behind = await startTestServer({ TRUST_PROXY: "true", AUTH_FAILURE_LIMIT_PER_MINUTE: "3" }, { storage: "memory" })
    try {
      const attempt = (forwarded: string) => fetch(`${behind.url}/api/v1/sites`, { headers: { authorization: "Bearer cs_wrong", "x-forwarded-for": forwarded } })
      for (let i = 0; i < 3; i++) expect((await attempt(`198.51.100.${i}, 203.0.113.9`)).status).toBe(401)
      expect((await attempt("198.51.100.77, 203.0.113.9")).status).toBe(429)
      // another client behind the same proxy is not locked out
      expect((await attempt("198.51.100.77, 203.0.113.10")).status).toBe(401)
    } finally {
      await behind.close()
    }
  })

  it("should count an IPv6 client's failures by its /56, whichever of its addresses it sends from", async () => {
    const behind = await startTestServer({ TRUST_PROXY: "true", AUTH_FAILURE_LIMIT_PER_MINUTE: "3" }, { storage: "memory" })
    try {
      const attempt = (from: string) => fetch(`${behind.url}/api/v1/sites`, { headers: { authorization: "Bearer cs_wrong", "x-forwarded-for": from } })
      // a new address of the same home for every guess: one budget all the same
      for (const from of ["2001:db8:abcd:1200::1", "2001:db8:abcd:1201::2", "2001:db8:abcd:12fe:1:2:3:4"]) expect((await attempt(from)).status).toBe(401)
      expect((await attempt("2001:db8:abcd:12ff::99")).status).toBe(429)
      // the next /56 is another client
      expect((await attempt("2001:db8:abcd:1300::1")).status).toBe(401)
    } finally {
      await behind.close()
    }
  })
})

export { KEYS }
