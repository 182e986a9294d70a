/**
 * End-to-end helpers: a fresh PostgreSQL database per server, `startServer` on it with test env,
 * fixture data for two accounts imported through the core, and a small fetch wrapper.
 */
import { importData } from "@content-site/core"
import { startServer, type StartedServer } from "../../apps/server/server.ts"
import { mkdtempSync, rmSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { onTestFinished } from "vitest"
import { responseChecker } from "./openapiCheck.ts"

const ADMIN_URL = process.env.E2E_PG_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** A fresh database and a way to drop it. */
export const createDatabase = async (): Promise<{ url: string; drop: () => Promise<void> }> => {
  const name = `cs_e2e_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  const admin = new pg.Client({ connectionString: ADMIN_URL })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: ADMIN_URL })
      await c.connect()
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await c.end()
      }
    },
  }
}

/** Known API keys of the fixture. */
export const KEYS = {
  a: "cs_AAAAaaaa1111222233334444555566667777",
  aRead: "cs_RRRRrrrr1111222233334444555566667777",
  aRevoked: "cs_VVVVvvvv1111222233334444555566667777",
  b: "cs_BBBBbbbb1111222233334444555566667777",
} as const

/** A protected backlink and internal link, as the platform inserts them. */
export const PROTECTED_BACKLINK = '<a href="https://partner.test/offer" data-service-protected="backlink" rel="noopener">partner offer</a>'
export const PROTECTED_INTERNAL = '<a href="https://alpha.test/guide" data-service-protected="internal">our guide</a>'

/** The body of the protected article art_a1. */
export const A1_BODY = `<h2>Intro</h2><p>Read the ${PROTECTED_BACKLINK} first.</p><p>Then ${PROTECTED_INTERNAL}.</p>`

const isoDaysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().replace(/\.\d{3}Z$/, ".000Z")

/** Fixture: account A (25 articles on site_a1, 1 on site_a2, 6 backlinks), account B (one of each). */
export const fixture = () => ({
  accounts: [
    {
      id: "acc_a",
      email: "owner-a@example.com",
      password: "password-a-123",
      name: "Owner A",
      api_keys: [
        { id: "key_a", name: "a write", key: KEYS.a, scope: "write" },
        { id: "key_a_ro", name: "a read", key: KEYS.aRead, scope: "read-only" },
        { id: "key_a_rev", name: "a revoked", key: KEYS.aRevoked, scope: "write" },
      ],
      sites: [
        {
          id: "site_a1",
          name: "Alpha",
          url: "https://alpha.test",
          articles: [
            {
              id: "art_a1",
              title: "Protected article",
              url: "https://alpha.test/protected",
              status: "published",
              published_at: isoDaysAgo(1),
              "target keyword": "protected",
              body: A1_BODY,
              "featured image": { url: "https://alpha.test/i.jpg", alt: "old" },
            },
            ...Array.from({ length: 24 }, (_, i) => ({
              id: `art_a${String(i + 2).padStart(2, "0")}`,
              title: `Article ${i + 2}`,
              url: `https://alpha.test/a${i + 2}`,
              status: i % 6 === 5 ? "draft" : "published",
              published_at: isoDaysAgo(i + 2),
              "target keyword": "kw",
              body: `<p>Body of article ${i + 2} with some words.</p>`,
            })),
          ],
          backlinks: Array.from({ length: 6 }, (_, i) => ({
            id: `bl_a${i + 1}`,
            date_acquired: isoDaysAgo(i * 3).slice(0, 10),
            source_domain: `news${i}.test`,
            source_url: `https://news${i}.test/p`,
            target_url: "https://alpha.test/protected",
            anchor_text: "alpha",
            anchor_type: i % 2 === 0 ? "exact" : "branded",
            category: i % 2 === 0 ? "industry" : "local",
          })),
        },
        {
          id: "site_a2",
          name: "Beta",
          url: "https://beta.test",
          articles: [
            {
              id: "art_a2x",
              title: "Beta article",
              url: "https://beta.test/x",
              status: "published",
              published_at: isoDaysAgo(3),
              "target keyword": "beta",
              body: "<p>Beta body.</p>",
            },
          ],
        },
      ],
    },
    {
      id: "acc_b",
      email: "owner-b@example.com",
      password: "password-b-123",
      name: "Owner B",
      api_keys: [{ id: "key_b", name: "b write", key: KEYS.b, scope: "write" }],
      sites: [
        {
          id: "site_b1",
          name: "Bravo",
          url: "https://bravo.test",
          articles: [
            {
              id: "art_b1",
              title: "B article",
              url: "https://bravo.test/b",
              status: "published",
              published_at: isoDaysAgo(2),
              "target keyword": "b",
              body: "<p>B body.</p>",
            },
          ],
          backlinks: [
            {
              id: "bl_b1",
              date_acquired: isoDaysAgo(1).slice(0, 10),
              source_domain: "b.test",
              source_url: "https://b.test/p",
              target_url: "https://bravo.test/b",
              anchor_text: "bravo",
              anchor_type: "exact",
              category: "local",
            },
          ],
        },
      ],
    },
  ],
})

/** A started test server with its database. */
export interface TestServer {
  readonly server: StartedServer
  readonly url: string
  readonly databaseUrl: string
  /** fetch relative to the server, with account A's write key unless `key` says otherwise (null: none). */
  readonly api: (path: string, init?: RequestInit & { key?: string | null }) => Promise<Response>
  readonly close: () => Promise<void>
}

/** Starts the server on a fresh PostgreSQL database (or memory storage) with the fixture imported. */
export const startTestServer = async (
  env: Record<string, string> = {},
  options: { readonly storage?: "memory"; readonly seed?: boolean; readonly now?: () => number } = {},
): Promise<TestServer> => {
  const db = options.storage === "memory" ? undefined : await createDatabase()
  const dataDir = await mkdtemp(join(tmpdir(), "cs-e2e-"))
  const server = await startServer({
    env: {
      PORT: "0",
      HOST: "127.0.0.1",
      SEED_DEMO: "false",
      DATA_DIR: dataDir,
      ...(db !== undefined ? { DATABASE_URL: db.url } : {}),
      ...env,
    },
    ...(options.storage === "memory" ? { storage: "memory" as const } : {}),
    ...(options.now !== undefined ? { now: options.now } : {}),
    quiet: true,
  })
  if (options.seed !== false) await server.runtime.runPromise(importData(fixture()))
  await revokeFixtureKey(server)
  const problems = problemChecker(env["PUBLIC_URL"] ?? server.url)
  const checker = responseChecker((await (await fetch(`${server.url}/api/v1/openapi.json`)).json()) as Record<string, unknown>)
  const api = async (path: string, init: RequestInit & { key?: string | null } = {}) => {
    const { key, ...rest } = init
    const headers = new Headers(rest.headers)
    const k = key === undefined ? KEYS.a : key
    if (k !== null && !headers.has("authorization") && !headers.has("x-api-key")) headers.set("authorization", `Bearer ${k}`)
    const res = await fetch(`${server.url}${path}`, { ...rest, headers })
    // Every API response is checked against the published OpenAPI document.
    const text = await res.text()
    const type = res.headers.get("content-type")
    if (type !== null && /json/.test(type) && text !== "") {
      checker.check((rest.method ?? "GET").toUpperCase(), new URL(path, server.url).pathname, res.status, type, JSON.parse(text))
    }
    // Every error is an RFC 9457 problem whose `type` and `title` follow from its code.
    if (res.status >= 400) problems.check(res.status, type, text)
    return new Response(res.status === 204 || res.status === 304 ? null : text, { status: res.status, statusText: res.statusText, headers: res.headers })
  }
  return {
    server,
    url: server.url,
    databaseUrl: db?.url ?? "",
    api,
    close: async () => {
      await server.close()
      await db?.drop()
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * Checks each error response as a problem (RFC 9457, the contract's Errors section):
 * `application/problem+json`, `status` equal to the HTTP status, `type` the absolute
 * `{base_url}/problems/{code}`, and a `title` that is a short human phrase, the same for every
 * response of that code (throws otherwise, failing the test that made the call).
 */
export const problemChecker = (baseUrl: string) => {
  const titles = new Map<string, string>()
  return {
    check: (status: number, contentType: string | null, text: string) => {
      const fail = (why: string) => {
        throw new Error(`error response ${status} is not a proper problem: ${why}: ${text.slice(0, 300)}`)
      }
      if (contentType === null || !contentType.startsWith("application/problem+json")) fail(`content type ${contentType}`)
      const body = JSON.parse(text) as Record<string, unknown>
      const code = body["code"]
      if (typeof code !== "string" || !/^[a-z][a-z_]*$/.test(code)) fail("no code")
      if (body["status"] !== status) fail("status differs from the HTTP status")
      if (body["type"] !== `${baseUrl}/problems/${code as string}`) fail(`type is not ${baseUrl}/problems/${code as string}`)
      const title = body["title"]
      if (typeof title !== "string" || title.trim() === "" || title === code || title.length > 60) fail("no human title")
      if (!/^[A-Z]/.test(title as string) || /_/.test(title as string)) fail("title is not a phrase")
      const known = titles.get(code as string)
      if (known !== undefined && known !== title) fail(`title '${title as string}' differs from '${known}' given before for ${code as string}`)
      titles.set(code as string, title as string)
      if (code === "protected_link_changed" && title !== "Protected link changed") fail("the contract's title of protected_link_changed")
    },
  }
}

const revokeFixtureKey = async (server: StartedServer) => {
  const { revokeApiKey } = await import("@content-site/core")
  await server.runtime.runPromise(revokeApiKey("acc_a", "key_a_rev")).catch(() => {})
}

/**
 * A fresh directory under the OS temp dir for a server's DATA_DIR (media, the activity journal),
 * removed when the test that asked for it ends; call it inside a test (a hook makes its own with
 * `scratchDirs`). A test worker ends without an `exit` event, so that event cannot be relied on.
 */
export const scratchDir = (): string => {
  const dirs = scratchDirs()
  onTestFinished(dirs.removeAll)
  return dirs.make()
}

/** Fresh directories for servers started in hooks, and a way to remove them all once those servers are closed. */
export const scratchDirs = () => {
  const made: Array<string> = []
  return {
    make: (): string => {
      const dir = mkdtempSync(join(tmpdir(), "cs-e2e-"))
      made.push(dir)
      return dir
    },
    removeAll: () => {
      for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** The JSON of a response (throws when not JSON). */
export const json = async (res: Response): Promise<any> => JSON.parse(await res.text())
