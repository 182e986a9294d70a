import { importData } from "@content-site/core"
import { createHash, randomBytes } from "node:crypto"
import type { ClientMetadataFetch } from "@content-site/mcp"
import type { PublicDocumentFetchOptions } from "@content-site/images"
import { type StartedServer, startServer } from "../../apps/server/server.ts"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js"
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { createTempDir, createTestDatabase } from "../support/databases.ts"
import { periodSite } from "../support/periodFixture.ts"

/** Account A: the one the tests connect as; it has an API key for the REST comparisons. */
export const ALICE = { email: "alice@example.com", password: "alice-password-1", apiKey: "cs_AliceKnownKey0123456789abcdefghijklmnop" }
/** Account B: its ids must be not_found for A. */
export const BOB = { email: "bob@example.com", password: "bob-password-1" }

const protectedLink = `<a href="https://partner.test/offer" data-service-protected="backlink" rel="sponsored">partner offer</a>`

/** The seed: two accounts, three sites, a few articles with protected links, backlinks. */
export const seedFile = () => {
  const now = Date.now()
  const daysAgo = (d: number) => new Date(now - d * 86_400_000).toISOString()
  const dateAgo = (d: number) => daysAgo(d).slice(0, 10)
  return {
    accounts: [
      {
        id: "acc_alice",
        email: ALICE.email,
        password: ALICE.password,
        name: "Alice",
        api_keys: [{ id: "key_alice", name: "tests", key: ALICE.apiKey, scope: "write" }],
        sites: [
          {
            id: "site_a1",
            name: "Alpha Garden",
            url: "https://alpha.example",
            articles: Array.from({ length: 5 }, (_, i) => ({
              id: `art_a1_${i + 1}`,
              title: `Alpha article ${i + 1}`,
              url: `https://alpha.example/a${i + 1}`,
              status: i === 4 ? "draft" : "published",
              published_at: daysAgo(i * 3 + 1),
              "target keyword": `keyword ${i + 1}`,
              body: `<h2>Part ${i + 1}</h2><p>Some words about gardens and ${protectedLink} more text.</p>`,
              "featured image": i === 0 ? { url: "https://alpha.example/i.jpg", alt: "A garden" } : undefined,
            })).map(({ "featured image": image, ...a }) => (image ? { ...a, "featured image": image } : a)),
            backlinks: Array.from({ length: 4 }, (_, i) => ({
              id: `bl_a1_${i + 1}`,
              date_acquired: dateAgo(i * 2 + 1),
              source_domain: `news${i}.test`,
              source_url: `https://news${i}.test/p`,
              target_url: "https://alpha.example/a1",
              anchor_text: `anchor ${i}`,
              anchor_type: i % 2 === 0 ? "exact" : "brand",
              category: i % 2 === 0 ? "industry" : "local",
            })),
          },
          { id: "site_a2", name: "Beta Kitchen", url: "https://beta.example", articles: [], backlinks: [] },
          periodSite("site_a3", "gamma.example"),
        ],
      },
      {
        id: "acc_bob",
        email: BOB.email,
        password: BOB.password,
        name: "Bob",
        sites: [
          {
            id: "site_b1",
            name: "Bob's Site",
            url: "https://bob.example",
            articles: [
              {
                id: "art_b1_1",
                title: "Bob article",
                url: "https://bob.example/1",
                status: "published",
                published_at: daysAgo(2),
                "target keyword": "bob",
                body: "<p>Bob's words.</p>",
              },
            ],
            backlinks: [],
          },
        ],
      },
    ],
  }
}

/** A started service over its own PostgreSQL database (dropped on close). */
export type SeededServer = StartedServer & { readonly databaseUrl: string }

/**
 * Starts the whole service on PostgreSQL with the seed: a fresh database (and media folder) per
 * call, dropped by `close`. Pass `reuse` to start another instance on a database already seeded
 * (the import is idempotent by id); that instance's `close` leaves the database alone.
 */
export const startSeeded = async (
  env: Record<string, string> = {},
  options: { readonly reuse?: SeededServer; readonly now?: () => number; readonly clientMetadataFetch?: ClientMetadataFetch; readonly clientMetadataTrust?: Pick<PublicDocumentFetchOptions, "ca" | "isAllowedAddress"> } = {},
): Promise<SeededServer> => {
  const database = options.reuse === undefined ? await createTestDatabase() : undefined
  const databaseUrl = options.reuse?.databaseUrl ?? database!.url
  const media = createTempDir("cs-mcp-")
  const cleanUp = async () => {
    await database?.drop()
    media.remove()
  }
  let server: StartedServer
  try {
    server = await startServer({
      quiet: true,
      ...(options.now !== undefined ? { now: options.now } : {}),
      ...(options.clientMetadataFetch !== undefined ? { clientMetadataFetch: options.clientMetadataFetch } : {}),
      ...(options.clientMetadataTrust !== undefined ? { clientMetadataTrust: options.clientMetadataTrust } : {}),
      env: {
        HOST: "127.0.0.1",
        PORT: "0",
        SEED_DEMO: "false",
        AUTH_FAILURE_LIMIT_PER_MINUTE: "1000",
        // every flow of a file comes from 127.0.0.1: limits.test.ts sets its own to count it
        OAUTH_AUTHORIZATION_LIMIT_PER_HOUR: "1000",
        DATABASE_URL: databaseUrl,
        DATA_DIR: media.dir,
        ...env,
      },
    })
  } catch (error) {
    await cleanUp()
    throw error
  }
  const exit = await server.runtime.runPromiseExit(importData(seedFile()))
  if (exit._tag !== "Success") {
    await server.close()
    await cleanUp()
    throw new Error(`seeding failed: ${JSON.stringify(exit.cause)}`)
  }
  return {
    ...server,
    databaseUrl,
    close: async () => {
      await server.close()
      await cleanUp()
    },
  }
}

/** A tiny cookie-keeping browser for the sign-in and consent pages (no JavaScript, like the contract asks). */
export class Browser {
  readonly cookies = new Map<string, string>()
  readonly pages: Array<{ url: string; status: number; html: string; headers: Headers }> = []

  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}) {
    const headers: Record<string, string> = {}
    if (this.cookies.size > 0) headers["cookie"] = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ")
    let body: string | undefined
    if (init.form) {
      headers["content-type"] = "application/x-www-form-urlencoded"
      body = new URLSearchParams(init.form).toString()
    }
    const response = await fetch(url, { method: init.method ?? (body ? "POST" : "GET"), headers, body, redirect: "manual" })
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";")
      const eq = pair.indexOf("=")
      const name = pair.slice(0, eq).trim()
      const value = pair.slice(eq + 1).trim()
      if (value === "" || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    return response
  }
}

/** The form of a page: its action and fields (hidden inputs). */
export const formOf = (html: string, actionContains: string) => {
  const forms = [...html.matchAll(/<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/g)]
  const form = forms.find((f) => (f[1] ?? "").includes(actionContains))
  if (!form) throw new Error(`no form with action containing ${actionContains} in:\n${html}`)
  const fields: Record<string, string> = {}
  for (const m of (form[2] ?? "").matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1] as string] = (m[2] as string).replace(/&amp;/g, "&")
  return { action: (form[1] as string).replace(/&amp;/g, "&"), fields }
}

/** What the person does on the pages. */
export interface PersonScript {
  readonly email: string
  readonly password: string
  readonly decision: "allow" | "deny"
  /** What to allow when the consent page offers a choice (unset: the page's default). */
  readonly access?: "read" | "write"
}

/**
 * An OAuthClientProvider for the SDK's own OAuth helpers, in memory. When the SDK asks to send
 * the person to the authorization URL, it plays the person: follows redirects, signs in, clicks
 * Allow or Deny, and keeps the code (or error) that comes back at the redirect URI.
 */
export class ScriptedOAuthProvider implements OAuthClientProvider {
  /** Where the code is asked to go (the port a native client was given as it asked). */
  readonly redirectUrl: string
  /** What the client registers (default: `redirectUrl` itself). */
  readonly registeredRedirectUris: ReadonlyArray<string>
  /** Set: the client is described by the metadata document at this URL, its client_id, where the server takes one. */
  readonly clientMetadataUrl: string | undefined
  /** The `scope` the client registers, if any (RFC 7591: the scopes it may ask for). */
  readonly registeredScope: string | undefined
  readonly browser = new Browser()
  client: OAuthClientInformationMixed | undefined
  savedTokens: OAuthTokens | undefined
  verifier = ""
  authorizationCode: string | undefined
  authorizationError: string | undefined
  /** The whole URL the authorization response was sent to (code or error, state, iss). */
  authorizationResponse: URL | undefined
  lastPage = ""
  signInStatus = 0
  readonly script: PersonScript
  readonly clientName: string

  constructor(
    script: PersonScript,
    clientName = "Test Agent",
    options: { readonly asked?: string; readonly registered?: ReadonlyArray<string>; readonly clientMetadataUrl?: string; readonly registeredScope?: string } = {},
  ) {
    this.script = script
    this.clientName = clientName
    this.redirectUrl = options.asked ?? "http://127.0.0.1:1/callback"
    this.registeredRedirectUris = options.registered ?? [this.redirectUrl]
    this.clientMetadataUrl = options.clientMetadataUrl
    this.registeredScope = options.registeredScope
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.clientName,
      redirect_uris: [...this.registeredRedirectUris],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      ...(this.registeredScope !== undefined ? { scope: this.registeredScope } : {}),
    }
  }
  clientInformation() {
    return this.client
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info
  }
  tokens() {
    return this.savedTokens
  }
  saveTokens(tokens: OAuthTokens) {
    this.savedTokens = tokens
  }
  saveCodeVerifier(v: string) {
    this.verifier = v
  }
  codeVerifier() {
    return this.verifier
  }

  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    let url = authorizationUrl.toString()
    let form: Record<string, string> | undefined
    for (let hop = 0; hop < 20; hop++) {
      const response = await this.browser.request(url, form ? { form } : {})
      form = undefined
      const location = response.headers.get("location")
      if (location !== null) {
        const next = new URL(location, url).toString()
        if (next.startsWith(this.redirectUrl)) {
          this.authorizationResponse = new URL(next)
          const params = this.authorizationResponse.searchParams
          this.authorizationCode = params.get("code") ?? undefined
          this.authorizationError = params.get("error") ?? undefined
          return
        }
        url = next
        continue
      }
      const html = await response.text()
      this.lastPage = html
      if (html.includes('name="password"') && !html.includes("Wrong email or password")) {
        const login = formOf(html, "/login")
        form = { ...login.fields, email: this.script.email, password: this.script.password }
        url = new URL(login.action, url).toString()
        continue
      }
      if (html.includes(">Allow</button>")) {
        const consent = formOf(html, "/confirm")
        form = { ...consent.fields, decision: this.script.decision, ...(this.script.access ? { access: this.script.access } : {}) }
        url = new URL(consent.action, url).toString()
        continue
      }
      this.signInStatus = response.status
      return
    }
    throw new Error("too many redirects")
  }
}

/** Connects an SDK client through the whole OAuth flow; returns it connected, or the provider after a refusal. */
/**
 * Registers `provider`'s client at `serverUrl` and sends its person through /oauth/authorize as a
 * client does by hand: PKCE S256, the MCP resource, state `st`; `params` adds or overrides the
 * request's parameters (one set to undefined is left out). Answers the client id and the verifier.
 */
export const registerAndAuthorize = async (
  serverUrl: string,
  provider: ScriptedOAuthProvider,
  params: Record<string, string | undefined> = {},
): Promise<{ readonly clientId: string; readonly verifier: string }> => {
  const registered = await fetch(`${serverUrl}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(provider.clientMetadata) })
  if (registered.status !== 201) throw new Error(`registration answered ${registered.status}: ${await registered.text()}`)
  const clientId = ((await registered.json()) as { client_id: string }).client_id
  const verifier = randomBytes(32).toString("base64url")
  const request: Record<string, string | undefined> = {
    client_id: clientId,
    response_type: "code",
    redirect_uri: provider.redirectUrl,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    resource: `${serverUrl}/mcp`,
    state: "st",
    ...params,
  }
  const url = new URL(`${serverUrl}/oauth/authorize`)
  url.search = new URLSearchParams(Object.entries(request).filter((e): e is [string, string] => e[1] !== undefined)).toString()
  await provider.redirectToAuthorization(url)
  return { clientId, verifier }
}

export const connect = async (mcpUrl: string, provider: ScriptedOAuthProvider): Promise<Client | undefined> => {
  const first = new Client({ name: "content-site-tests", version: "1.0.0" })
  try {
    await first.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }))
    return first
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error
  }
  if (provider.authorizationCode === undefined) return undefined
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider })
  await transport.finishAuth(provider.authorizationCode)
  const client = new Client({ name: "content-site-tests", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }))
  return client
}

/** `connect`, for a test that cannot go on without the connection: fails with the last page the provider saw. */
export const connectOrFail = async (mcpUrl: string, provider: ScriptedOAuthProvider): Promise<Client> => {
  const client = await connect(mcpUrl, provider)
  if (client === undefined) throw new Error(`could not connect: ${provider.lastPage}`)
  return client
}
