/**
 * OAuth Client ID Metadata Documents: a client whose client_id is an https URL is described by the
 * JSON document there, which the authorization server fetches (from a real HTTPS server on this
 * machine here, with its own certificate; the server's default fetch refuses loopback addresses,
 * so the test gives it one that reaches this server under the name `agent.test`). Nothing is
 * registered for such a client; its document is held to a registration's bounds, its fetches to
 * the address's registration budget, and the pages say which host describes it.
 */
import { writeFileSync } from "node:fs"
import { createServer, request } from "node:https"
import { createServer as createTcpServer } from "node:net"
import { join } from "node:path"
import type { AddressInfo } from "node:net"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { selfSignedCertificate } from "../../adapters/images/test/selfSignedCertificate.ts"
import { createTempDir } from "../support/databases.ts"
import { eventually } from "../support/eventually.ts"
import { spawnNode, waitForLine } from "../support/processes.ts"
import { startPostgresProxy, startTcpProxy } from "../support/tcpProxy.ts"
import { ALICE, Browser, connect, formOf, ScriptedOAuthProvider, type SeededServer, startSeeded } from "./support.ts"

const REDIS_URL = new URL(process.env["TEST_REDIS_URL"] ?? "redis://127.0.0.1:6379")

const { cert, key } = selfSignedCertificate(["127.0.0.1"], ["agent.test"])
/** The documents the client's host serves, by path, and how often each was fetched. */
const documents = new Map<string, { readonly body: unknown; readonly cacheControl?: string; readonly redirect?: string }>()
const fetched = new Map<string, number>()
const host = createServer({ cert, key }, (req, res) => {
  const path = req.url ?? "/"
  fetched.set(path, (fetched.get(path) ?? 0) + 1)
  const doc = documents.get(path)
  if (doc === undefined) return void res.writeHead(404).end()
  if (doc.redirect !== undefined) return void res.writeHead(302, { location: doc.redirect }).end()
  res.writeHead(200, { "content-type": "application/json", ...(doc.cacheControl !== undefined ? { "cache-control": doc.cacheControl } : {}) }).end(JSON.stringify(doc.body))
})

/** A fetch that reaches the test's HTTPS server for any host, checking its certificate as `agent.test`'s. */
const viaTestHost = (url: string, init: RequestInit): Promise<Response> =>
  new Promise((resolve, reject) => {
    const target = new URL(url)
    const headers: Record<string, string> = { host: target.host }
    new Headers(init.headers).forEach((value, name) => (headers[name] = value))
    const req = request(
      {
        host: "127.0.0.1",
        port: (host.address() as AddressInfo).port,
        servername: target.hostname,
        path: `${target.pathname}${target.search}`,
        method: init.method ?? "GET",
        headers,
        ca: cert,
        ...(init.signal !== undefined && init.signal !== null ? { signal: init.signal } : {}),
      },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("error", reject)
        res.on("end", () => {
          const answer = new Headers()
          for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) answer.set(name, Array.isArray(value) ? value.join(", ") : value)
          resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 502, headers: answer }))
        })
      },
    )
    req.on("error", reject)
    req.end()
  })

const documentOf = (path: string, fields: Record<string, unknown> = {}) => ({
  client_id: `https://agent.test${path}`,
  client_name: "Document Agent",
  redirect_uris: ["http://127.0.0.1/callback"],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
  ...fields,
})

let server: SeededServer
/** A second instance of the same service (same database, same public URL), as behind a load balancer. */
let other: SeededServer
beforeAll(async () => {
  await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve))
  server = await startSeeded({ OAUTH_REGISTRATION_LIMIT_PER_HOUR: "1000" }, { clientMetadataFetch: viaTestHost })
  other = await startSeeded({ OAUTH_REGISTRATION_LIMIT_PER_HOUR: "1000", PUBLIC_URL: server.url }, { reuse: server, clientMetadataFetch: viaTestHost })
}, 60_000)
afterAll(async () => {
  await other?.close()
  await server?.close()
  await new Promise((resolve) => host.close(resolve))
})

/** The URL of an authorization request of `clientId` at `at` (PKCE, the MCP scope). */
const authorizeUrl = (clientId: string, at: SeededServer = server) =>
  `${at.url}/oauth/authorize?${new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: "http://127.0.0.1:40000/callback",
    scope: "mcp",
    code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
    code_challenge_method: "S256",
    state: "s",
  })}`

/** An authorization request of `clientId` at `at`, not followed. */
const authorize = (clientId: string, at: SeededServer = server) => fetch(authorizeUrl(clientId, at), { redirect: "manual" })

describe("clients described by a metadata document", () => {
  it("should say in its metadata that it takes them", async () => {
    const metadata = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>
    expect(metadata["client_id_metadata_document_supported"]).toBe(true)
  })

  it("should connect one without registering it, naming it and its host to the person, in the log and on /connect", async () => {
    documents.set("/clients/editor.json", { body: documentOf("/clients/editor.json"), cacheControl: "max-age=600" })
    const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "ignored", {
      asked: "http://127.0.0.1:49152/callback",
      clientMetadataUrl: "https://agent.test/clients/editor.json",
    })
    const client = await connect(`${server.url}/mcp`, provider)
    expect(client).toBeDefined()
    // its client_id is the document's URL: the SDK registered nothing
    expect(provider.client?.client_id).toBe("https://agent.test/clients/editor.json")
    expect(provider.lastPage).toContain("<strong>Document Agent</strong>")
    expect(provider.lastPage).toContain("described by <code>agent.test</code>")
    const sites = await client!.callTool({ name: "list_sites", arguments: {} })
    expect(sites.isError).not.toBe(true)
    await client!.close()
    // its refresh token is good at the token endpoint like a registered client's (and rotates)
    const refreshed = await fetch(`${server.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: provider.savedTokens!.refresh_token!, client_id: "https://agent.test/clients/editor.json" }),
    })
    expect(refreshed.status).toBe(200)
    const tokens = (await refreshed.json()) as { access_token: string; refresh_token: string }
    expect(tokens.refresh_token).not.toBe(provider.savedTokens!.refresh_token)
    provider.saveTokens({ ...provider.savedTokens!, ...tokens })
    // fetched once, then kept as its Cache-Control says
    expect(fetched.get("/clients/editor.json")).toBe(1)

    const activity = (await (await fetch(`${server.url}/api/v1/activity?channel=mcp&per_page=5`, { headers: { authorization: `Bearer ${ALICE.apiKey}` } })).json()) as {
      data: Array<{ action: string; actor: { type: string; id: string; name: string } }>
    }
    const call = activity.data.find((e) => e.action === "list_sites")
    expect(call?.actor).toEqual({ type: "oauth_client", id: "https://agent.test/clients/editor.json", name: "Document Agent" })

    // the person's own page lists it under its name and its document's host (signed in by the sign-in above)
    const page = await (await provider.browser.request(`${server.url}/connect`)).text()
    // (the name isolated for right-to-left scripts)
    expect(page).toMatch(/<strong>(<bdi[^>]*>)?Document Agent(<\/bdi>)?<\/strong>/)
    expect(page).toContain("(agent.test)")

    // and disconnects it there: its client_id (a URL) makes it through the form's path
    const action = /action="(\/connect\/clients\/[^"]+\/revoke)"/.exec(page)?.[1]
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1]
    expect(action).toBe(`/connect/clients/${encodeURIComponent("https://agent.test/clients/editor.json")}/revoke`)
    const revoked = await provider.browser.request(`${server.url}${action!}`, { form: { _csrf: csrf!, confirmed: "yes" } })
    expect(revoked.status).toBe(303)
    const after = await (await provider.browser.request(`${server.url}/connect`)).text()
    expect(after).toContain("The agent is disconnected")
    expect(after).not.toContain("Document Agent")
    const token = provider.savedTokens!.access_token
    const refused = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    })
    expect(refused.status).toBe(401)
  })

  it("should show its sign-in page on an instance that has not read its document yet", async () => {
    documents.set("/clients/balanced.json", { body: documentOf("/clients/balanced.json", { client_name: "Balanced Agent" }) })
    const browser = new Browser()
    const started = await browser.request(authorizeUrl("https://agent.test/clients/balanced.json"))
    expect(started.status).toBe(303)
    // the interaction's page, asked of the other instance (its cache holds no document): read there
    // outside any request of the provider's own, so with no address to count against
    const page = await browser.request(`${other.url}${new URL(started.headers.get("location")!, server.url).pathname}`)
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain("<strong>Balanced Agent</strong>")
    expect(html).toContain("described by <code>agent.test</code>")
    expect(fetched.get("/clients/balanced.json")).toBe(2)
  })

  it("should hold a document to a registration's bounds", async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ["/long-name.json", { client_name: "n".repeat(101) }, /at most 100 characters/],
      ["/plain-http.json", { redirect_uris: ["http://agent.test/callback"] }, /https, or http to a loopback address only/],
      ["/nul.json", { client_name: "Agent\u0000" }, /NUL character/],
    ]
    for (const [path, fields, why] of cases) {
      documents.set(path, { body: documentOf(path, fields) })
      const refused = await authorize(`https://agent.test${path}`)
      expect(refused.status, path).toBe(400)
      expect(refused.headers.get("location"), path).toBeNull()
      expect(await refused.text(), path).toMatch(why)
    }
    // a document that names another client_id is not that client's
    documents.set("/impostor.json", { body: documentOf("/someone-else.json") })
    expect((await authorize("https://agent.test/impostor.json")).status).toBe(400)
    // read once and refused for what it says, not for the budget (the provider looks a refused client up again as it answers)
    expect(fetched.get("/impostor.json")).toBe(1)
  })

  it("should count each fetch against the address's registration budget and refuse long client_ids unfetched", async () => {
    // an instance of its own, its budget three fetches an hour
    const limited = await startSeeded({ OAUTH_REGISTRATION_LIMIT_PER_HOUR: "3" }, { clientMetadataFetch: viaTestHost })
    try {
      const long = `/${"a".repeat(250)}.json`
      documents.set(long, { body: documentOf(long) })
      expect((await authorize(`https://agent.test${long}`, limited)).status).toBe(400)
      expect(fetched.get(long)).toBeUndefined()
      // a refused document costs one fetch of the budget, though the provider looks it up twice as it answers
      documents.set("/budget/refused.json", { body: documentOf("/budget/someone-else.json") })
      expect((await authorize("https://agent.test/budget/refused.json", limited)).status).toBe(400)
      expect(fetched.get("/budget/refused.json")).toBe(1)
      for (const path of ["/budget/one.json", "/budget/two.json", "/budget/three.json"]) documents.set(path, { body: documentOf(path) })
      expect((await authorize("https://agent.test/budget/one.json", limited)).status).toBe(303)
      expect((await authorize("https://agent.test/budget/two.json", limited)).status).toBe(303)
      // the third would be a third fetch: refused unfetched
      const refused = await authorize("https://agent.test/budget/three.json", limited)
      expect(refused.status).toBe(400)
      expect(await refused.text()).toContain("invalid_client")
      expect(fetched.get("/budget/three.json")).toBeUndefined()
      // a document already held costs no fetch, so its client still gets on
      expect((await authorize("https://agent.test/budget/one.json", limited)).status).toBe(303)
      expect(fetched.get("/budget/one.json")).toBe(1)
    } finally {
      await limited.close()
    }
  })

  it("should count a fetch against the budget of the client's IPv6 /56, which its registrations count against too", async () => {
    // behind a trusted proxy: the client is the X-Forwarded-For entry it added
    const limited = await startSeeded({ OAUTH_REGISTRATION_LIMIT_PER_HOUR: "1", TRUST_PROXY: "true" }, { clientMetadataFetch: viaTestHost })
    try {
      // one address of the client's /56 registers: that spends its budget
      const registered = await fetch(`${limited.url}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": "2001:db8:1:100::1" },
        body: JSON.stringify({ client_name: "Agent", redirect_uris: ["http://127.0.0.1:9/cb"], token_endpoint_auth_method: "none" }),
      })
      expect(registered.status).toBe(201)
      // another address of the same /56 may not have a document fetched
      documents.set("/budget/v6.json", { body: documentOf("/budget/v6.json") })
      const refused = await fetch(authorizeUrl("https://agent.test/budget/v6.json", limited), { redirect: "manual", headers: { "x-forwarded-for": "2001:db8:1:1ff::2" } })
      expect(refused.status).toBe(400)
      expect(fetched.get("/budget/v6.json")).toBeUndefined()
    } finally {
      await limited.close()
    }
  })

  it("should fetch for a page only within the person's budget, and at the token endpoint only for what it issued", async () => {
    // two instances of one service, its budget two fetches an hour an address
    const a = await startSeeded({ OAUTH_REGISTRATION_LIMIT_PER_HOUR: "2" }, { clientMetadataFetch: viaTestHost })
    const b = await startSeeded({ OAUTH_REGISTRATION_LIMIT_PER_HOUR: "2", PUBLIC_URL: a.url }, { reuse: a, clientMetadataFetch: viaTestHost })
    try {
      for (const path of ["/paired/hosted.json", "/paired/second.json"]) documents.set(path, { body: documentOf(path) })
      // connected through a (one fetch, counted)
      const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "ignored", { asked: "http://127.0.0.1:49152/callback", clientMetadataUrl: "https://agent.test/paired/hosted.json" })
      const client = await connect(`${a.url}/mcp`, provider)
      expect(client).toBeDefined()
      await client!.close()
      // another client's authorization at a: the second fetch, the budget spent
      const browser = new Browser()
      const started = await browser.request(authorizeUrl("https://agent.test/paired/second.json", a))
      expect(started.status).toBe(303)
      expect(fetched.get("/paired/second.json")).toBe(1)
      // its sign-in page at b, which has not read the document: over the budget, an error page and no fetch
      const page = await browser.request(`${b.url}${new URL(started.headers.get("location")!, a.url).pathname}`)
      expect(page.status).toBe(400)
      expect(await page.text()).toContain("could not be identified")
      expect(fetched.get("/paired/second.json")).toBe(1)
      // the first client refreshes at b, which has not read its document either: fetched, not counted
      const refresh = (refreshToken: string, clientId = "https://agent.test/paired/hosted.json") =>
        fetch(`${b.url}/oauth/token`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId }),
        })
      const refreshed = await refresh(provider.savedTokens!.refresh_token!)
      expect(refreshed.status).toBe(200)
      expect(fetched.get("/paired/hosted.json")).toBe(2)
      // a token request with a refresh token the service did not issue to the client named: nothing fetched
      documents.set("/paired/unknown.json", { body: documentOf("/paired/unknown.json") })
      const forged = await refresh("not-a-refresh-token", "https://agent.test/paired/unknown.json")
      expect(forged.status).toBe(400)
      expect(((await forged.json()) as { error: string }).error).toBe("invalid_client")
      expect(fetched.get("/paired/unknown.json")).toBeUndefined()
    } finally {
      await b.close()
      await a.close()
    }
  }, 60_000)

  it("should take at the revocation endpoint an access token it issued to the client, fetching the document there for it alone", async () => {
    for (const path of ["/revoking/agent.json", "/revoking/other.json"]) documents.set(path, { body: documentOf(path) })
    // connected through the first instance, which fetched the document; the second has not read it
    const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "ignored", { asked: "http://127.0.0.1:49152/callback", clientMetadataUrl: "https://agent.test/revoking/agent.json" })
    const client = await connect(`${server.url}/mcp`, provider)
    expect(client).toBeDefined()
    await client!.close()
    expect(fetched.get("/revoking/agent.json")).toBe(1)
    const accessToken = provider.savedTokens!.access_token
    const toolsList = () =>
      fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${accessToken}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      })
    const revoke = (token: string, clientId: string) =>
      fetch(`${other.url}/oauth/revoke`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token, token_type_hint: "access_token", client_id: clientId }),
      })
    // the token presented by another client described by a document: not issued to it, nothing fetched
    const foreign = await revoke(accessToken, "https://agent.test/revoking/other.json")
    expect(foreign.status).toBe(400)
    expect(((await foreign.json()) as { error: string }).error).toBe("invalid_client")
    expect(fetched.get("/revoking/other.json")).toBeUndefined()
    // nor for something that is no token this service signed
    const forged = await revoke(`${accessToken.slice(0, -4)}AAAA`, "https://agent.test/revoking/other.json")
    expect(((await forged.json()) as { error: string }).error).toBe("invalid_client")
    expect(fetched.get("/revoking/other.json")).toBeUndefined()
    expect((await toolsList()).status).toBe(200)
    // the client itself, at the instance that does not hold its document: fetched, revoked
    const revoked = await revoke(accessToken, "https://agent.test/revoking/agent.json")
    expect(revoked.status).toBe(200)
    expect(fetched.get("/revoking/agent.json")).toBe(2)
    expect((await eventually(toolsList, (answer) => answer.status === 401)).status).toBe(401)
    // and its refresh token went with the grant
    const refreshed = await fetch(`${server.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: provider.savedTokens!.refresh_token!, client_id: "https://agent.test/revoking/agent.json" }),
    })
    expect(refreshed.status).toBe(400)
  }, 60_000)

  // The store behind the registration budget: Redis when REDIS_URL is set (the OAuth state stays in
  // the database: the budget's check is what finds it away), else the database itself, which holds
  // the interaction too (the page's first read, the interaction's, finds it away before the budget).
  const stores = [
    { store: "Redis", detail: "The request counters cannot answer now; nothing was changed. Retry in a few seconds." },
    { store: "the database", detail: "The database cannot answer now; nothing was changed. Retry in a few seconds." },
  ] as const
  it.each(stores)("should answer the pages 503 while $store cannot answer, change nothing, and show them once it is back", async ({ store, detail }) => {
    // A second instance whose budget's store is reached through a proxy the test can cut. It has
    // not read the documents below, so its pages must fetch them, and each fetch is counted.
    const proxied = store === "Redis" ? await startTcpProxy(REDIS_URL.hostname, Number(REDIS_URL.port || 6379)) : await startPostgresProxy(server.databaseUrl)
    const proxy = "proxy" in proxied ? proxied.proxy : proxied
    let b: SeededServer | undefined
    // (the test's own look at what is stored, not through the proxy)
    const db = new pg.Client({ connectionString: server.databaseUrl })
    await db.connect()
    try {
      b = await startSeeded(
        {
          OAUTH_REGISTRATION_LIMIT_PER_HOUR: "1000",
          PUBLIC_URL: server.url,
          ...("url" in proxied ? { DATABASE_URL: proxied.url } : { REDIS_URL: `redis://127.0.0.1:${proxy.port}` }),
        },
        { reuse: server, clientMetadataFetch: viaTestHost },
      )
      const at = b.url
      /** Every OAuth artefact as stored (interactions, sessions, grants, clients). */
      const stored = async () => (await db.query("select model, id, payload::text, consumed_at from oauth_payloads order by model, id")).rows
      /** A page for a store that cannot answer: 503 with Retry-After, the problem's sentence, a reload advised, and nothing about why. */
      const expectUnavailable = async (response: Response) => {
        expect(response.status).toBe(503)
        expect(response.headers.get("content-type")).toMatch(/^text\/html/)
        expect(response.headers.get("retry-after")).toBe("5")
        expect(response.headers.getSetCookie()).toEqual([])
        const text = await response.text()
        expect(text).toContain(`<p>${detail}</p>`)
        expect(text).toContain("Reload this page in a few seconds")
        expect(text).not.toMatch(/could not be identified|expired|internal|\w+Error\b|ECONNREFUSED|Redis|\bat \S+ \(|\.ts:\d/)
        expect(text).not.toContain(`:${proxy.port}`)
      }
      /** Runs `during` with the store cut off; checks that it changed no OAuth artefact, then waits for the store's return. */
      const whileTheStoreIsAway = async (during: () => Promise<void>) => {
        const before = await stored()
        await proxy.cut("refuse")
        try {
          await during()
        } finally {
          await proxy.restore()
        }
        expect(await stored()).toEqual(before)
        // back once the instance is ready again (it asks its database and Redis), not after some time
        expect(await eventually(async () => (await fetch(`${at}/readyz`)).status, (status) => status === 200, 15_000)).toBe(200)
      }
      const path = `/outage/${store === "Redis" ? "redis" : "database"}`

      // The sign-in page: the authorization request at the first instance (which fetched the
      // document), the page at the second.
      documents.set(`${path}/sign-in.json`, { body: documentOf(`${path}/sign-in.json`, { client_name: "Outage Agent" }) })
      const browser = new Browser()
      const started = await browser.request(authorizeUrl(`https://agent.test${path}/sign-in.json`))
      expect(started.status).toBe(303)
      const signInPath = new URL(started.headers.get("location")!, server.url).pathname
      // its form, from the first instance (which holds the document): the CSRF token is the interaction's
      const signInForm = formOf(await (await browser.request(`${server.url}${signInPath}`)).text(), "/login")
      const credentials = { ...signInForm.fields, email: ALICE.email, password: ALICE.password }
      expect(fetched.get(`${path}/sign-in.json`)).toBe(1)
      await whileTheStoreIsAway(async () => {
        await expectUnavailable(await browser.request(`${at}${signInPath}`))
        // and the sign-in itself: no session started, no interaction advanced
        await expectUnavailable(await browser.request(`${at}${signInForm.action}`, { form: credentials }))
        // refused before fetching: the fetch is what the budget counts
        expect(fetched.get(`${path}/sign-in.json`)).toBe(1)
      })
      const signIn = await browser.request(`${at}${signInPath}`)
      expect(signIn.status).toBe(200)
      const signInHtml = await signIn.text()
      expect(signInHtml).toContain("<strong>Outage Agent</strong>")
      expect(signInHtml).toContain("described by <code>agent.test</code>")
      expect(fetched.get(`${path}/sign-in.json`)).toBe(2)
      expect((await browser.request(`${at}${signInForm.action}`, { form: credentials })).status).toBe(303)

      // The consent page: another client, signed in for at the first instance, its consent asked at the second.
      documents.set(`${path}/consent.json`, { body: documentOf(`${path}/consent.json`, { client_name: "Consent Outage Agent" }) })
      const person = new Browser()
      const follow = async (url: string, init: { form?: Record<string, string> } = {}) => new URL((await person.request(url, init)).headers.get("location")!, server.url).toString()
      const loginPage = await follow(authorizeUrl(`https://agent.test${path}/consent.json`))
      const login = formOf(await (await person.request(loginPage)).text(), "/login")
      const consentPath = new URL(await follow(await follow(`${server.url}${login.action}`, { form: { ...login.fields, email: ALICE.email, password: ALICE.password } }))).pathname
      const consentForm = formOf(await (await person.request(`${server.url}${consentPath}`)).text(), "/confirm")
      expect(fetched.get(`${path}/consent.json`)).toBe(1)
      await whileTheStoreIsAway(async () => {
        await expectUnavailable(await person.request(`${at}${consentPath}`))
        // and the Allow: no grant written
        await expectUnavailable(await person.request(`${at}${consentForm.action}`, { form: { ...consentForm.fields, decision: "allow" } }))
        expect(fetched.get(`${path}/consent.json`)).toBe(1)
      })
      const consent = await person.request(`${at}${consentPath}`)
      expect(consent.status).toBe(200)
      const consentHtml = await consent.text()
      expect(consentHtml).toContain("<strong>Consent Outage Agent</strong>")
      expect(consentHtml).toContain(">Allow</button>")
      expect(fetched.get(`${path}/consent.json`)).toBe(2)
      const allowed = await person.request(`${at}${consentForm.action}`, { form: { ...consentForm.fields, decision: "allow" } })
      expect(allowed.status).toBe(303)
      // and the code comes back at the redirect URI
      expect(new URL(await follow(new URL(allowed.headers.get("location")!, server.url).toString())).searchParams.get("code")).toBeTruthy()
    } finally {
      await b?.close()
      await db.end()
      await proxy.close()
    }
  }, 60_000)

  it("should take a client_id only as a URL parser writes it back", async () => {
    for (const clientId of ["HTTPS://agent.test/canonical.json", "https://AGENT.test/canonical.json", "https://agent.test:443/canonical.json", "https://agent.test/%7Ecanonical.json"]) {
      const refused = await authorize(clientId)
      expect(refused.status, clientId).toBe(400)
      expect(await refused.text(), clientId).toContain("invalid_client")
    }
    expect(fetched.get("/canonical.json")).toBeUndefined()
  })

  it("should take none when OAUTH_CLIENT_METADATA_DOCUMENTS is false (a service that may not reach the internet)", async () => {
    const closed = await startSeeded({ OAUTH_CLIENT_METADATA_DOCUMENTS: "false" }, { clientMetadataFetch: viaTestHost })
    try {
      const metadata = (await (await fetch(`${closed.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>
      expect(metadata["client_id_metadata_document_supported"]).toBeUndefined()
      expect(metadata["registration_endpoint"]).toBe(`${closed.url}/oauth/register`)
      documents.set("/closed.json", { body: documentOf("/closed.json") })
      const refused = await authorize("https://agent.test/closed.json", closed)
      expect(refused.status).toBe(400)
      expect(await refused.text()).toContain("invalid_client")
      expect(fetched.get("/closed.json")).toBeUndefined()
    } finally {
      await closed.close()
    }
  })

  it("should read a document with the service's own fetch, whatever dispatcher the provider hands it", async () => {
    // the fetch the service uses by default, told only to trust the test host's certificate and to
    // count its address as public: the provider hands it a dispatcher of the undici the service
    // loads, which Node's fetch could not drive (every document failed to load)
    const port = (host.address() as AddressInfo).port
    const own = await startSeeded({ OAUTH_REGISTRATION_LIMIT_PER_HOUR: "1000" }, { clientMetadataTrust: { ca: cert, isAllowedAddress: (ip) => ip === "127.0.0.1" } })
    try {
      const clientId = `https://127.0.0.1:${port}/clients/own-fetch.json`
      documents.set("/clients/own-fetch.json", { body: { ...documentOf("/clients/own-fetch.json"), client_id: clientId } })
      const asked = await authorize(clientId, own)
      expect(asked.status).toBe(303)
      expect(fetched.get("/clients/own-fetch.json")).toBe(1)
      // too large a document: refused, read no further than its cap
      const large = `https://127.0.0.1:${port}/clients/large.json`
      documents.set("/clients/large.json", { body: { ...documentOf("/clients/large.json"), client_id: large, logo_uri: `https://agent.test/${"x".repeat(6000)}` } })
      const refused = await authorize(large, own)
      expect(refused.status).toBe(400)
      expect(await refused.text()).toContain("invalid_client")
      // a redirect, even to a document that would be read, is not followed
      const moved = `https://127.0.0.1:${port}/clients/moved.json`
      documents.set("/clients/moved.json", { body: null, redirect: "/clients/own-fetch.json" })
      const notFollowed = await authorize(moved, own)
      expect(notFollowed.status).toBe(400)
      expect(await notFollowed.text()).toContain("invalid_client")
      expect(fetched.get("/clients/own-fetch.json")).toBe(1)
    } finally {
      await own.close()
    }
  })

  it("should not even connect to an address that is not public with the service's own fetch (no internal port scan by timing)", async () => {
    // a plain TCP listener on this machine: the service's own fetch must refuse its address before
    // opening a connection (the provider's check ran only once TCP and TLS were under way, so a
    // client_id could probe which internal ports answer, by how fast it is refused)
    let connections = 0
    const listener = createTcpServer((socket) => {
      connections++
      socket.destroy()
    })
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve))
    const own = await startSeeded({ OAUTH_REGISTRATION_LIMIT_PER_HOUR: "1000" })
    try {
      for (const clientId of [`https://127.0.0.1:${(listener.address() as AddressInfo).port}/client.json`, `https://localhost:${(listener.address() as AddressInfo).port}/client.json`]) {
        const refused = await authorize(clientId, own)
        expect(refused.status, clientId).toBe(400)
        const body = await refused.text()
        expect(body, clientId).toContain("invalid_client")
        expect(body, clientId).not.toContain("127.0.0.1")
      }
      expect(connections).toBe(0)
    } finally {
      await own.close()
      await new Promise((resolve) => listener.close(resolve))
    }
  })

  it("should never fetch a document from this machine or a private network with the service's own fetch", async () => {
    // `npm start` in a process of its own, trusting the test host's certificate, with no fetch of
    // the test's: were the provider's refusal of special-use addresses off, the document below
    // would be fetched (its host is on 127.0.0.1 and its certificate trusted)
    const dir = createTempDir("cs-cimd-")
    const caFile = join(dir.dir, "ca.pem")
    writeFileSync(caFile, cert)
    const child = spawnNode("apps/server/main.ts", [], { HOST: "127.0.0.1", PORT: "0", DATA_DIR: dir.dir, SEED_DEMO: "false", LOG_FORMAT: "json", NODE_EXTRA_CA_CERTS: caFile, DATABASE_URL: "" })
    try {
      const url = /listening on (http:\/\/\S+?)[ "]/.exec(await waitForLine(child, /listening on/))![1]!
      const path = "/clients/on-this-machine.json"
      const clientId = `https://127.0.0.1:${(host.address() as AddressInfo).port}${path}`
      documents.set(path, { body: { ...documentOf(path), client_id: clientId } })
      const refused = await fetch(authorizeUrl(clientId, { url } as SeededServer), { redirect: "manual" })
      expect(refused.status).toBe(400)
      expect(await refused.text()).toContain("invalid_client")
      expect(fetched.get(path)).toBeUndefined()
    } finally {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.kill("SIGTERM")
      await exited
      dir.remove()
    }
  }, 60_000)
})
