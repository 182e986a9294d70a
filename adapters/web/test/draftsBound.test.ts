/**
 * The drafts' bound holds under concurrency, on PostgreSQL, across two instances on one database:
 * refused edits sent side by side by one session, or signed out from one client address, keep at
 * most MAX_DRAFTS drafts, however many arrive at once.
 */
import { importData } from "@content-site/core"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type StartedServer, startServer } from "../../../apps/server/server.ts"
import { createTestDatabase } from "../../../test/support/databases.ts"
import { dropDraft, findDraft, findPendingDraft, keepDraft, MAX_DRAFTS } from "../src/drafts.ts"

const fixture = {
  accounts: [
    {
      id: "acc_d1",
      email: "drafts@example.com",
      password: "password-drafts",
      name: "Drafts",
      sites: [{ id: "site_d1", name: "Site", url: "https://d.test", articles: [
        { id: "art_d1", title: "One", url: "https://d.test/a", status: "published", published_at: "2026-11-01T09:00:00Z", "target keyword": "k", body: "<p>x</p>" },
      ] }],
    },
  ],
}

let database: Awaited<ReturnType<typeof createTestDatabase>>
let admin: pg.Client
const servers: Array<StartedServer> = []
const dirs: Array<string> = []
const SIDE_BY_SIDE = 20

beforeAll(async () => {
  database = await createTestDatabase()
  for (let i = 0; i < 2; i++) {
    const dir = mkdtempSync(join(tmpdir(), "cs-drafts-"))
    dirs.push(dir)
    servers.push(await startServer({ quiet: true, env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false", DATABASE_URL: database.url, DATA_DIR: dir, RATE_LIMIT_PER_MINUTE: "100000" } }))
  }
  await servers[0]!.runtime.runPromise(importData(fixture))
  admin = new pg.Client({ connectionString: database.url })
  await admin.connect()
}, 60_000)

afterAll(async () => {
  await admin?.end()
  for (const s of servers) await s.close()
  await database?.drop()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** How many drafts the database holds (live or not: each is a row until it is swept). */
const storedDrafts = async (): Promise<number> =>
  Number((await admin.query<{ n: string }>("select count(*) as n from oauth_payloads where model = 'WebDraft'")).rows[0]!.n)

const cookieHeader = (jar: Map<string, string>) => [...jar].map(([k, v]) => `${k}=${v}`).join("; ")
const keep = (jar: Map<string, string>, res: Response) => {
  for (const c of res.headers.getSetCookie()) {
    const [name, value] = c.split(";")[0]!.split("=") as [string, string]
    if (/Max-Age=0/.test(c)) jar.delete(name)
    else jar.set(name, value)
  }
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()
const FORM = "application/x-www-form-urlencoded"

describe("drafts kept side by side", () => {
  it(`should keep at most ${MAX_DRAFTS} drafts of one session, however many refused edits arrive at once on two instances`, async () => {
    const jar = new Map<string, string>()
    const home = await fetch(`${servers[0]!.url}/`, { redirect: "manual" })
    keep(jar, home)
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await home.text())![1]!
    const signIn = await fetch(`${servers[0]!.url}/`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": FORM, cookie: cookieHeader(jar) },
      body: form({ _csrf: csrf, email: "drafts@example.com", password: "password-drafts", next: "/sites" }),
    })
    keep(jar, signIn)
    const before = await storedDrafts()
    const cookie = cookieHeader(jar)
    const answers = await Promise.all(
      Array.from({ length: SIDE_BY_SIDE }, (_, i) =>
        fetch(`${servers[i % 2]!.url}/articles/art_d1/edit`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": FORM, cookie, "sec-fetch-site": "same-origin" },
          body: form({ _csrf: "forged-token-value-000000", title: `Side ${i}`, body: "<p>x</p>", revision: "1" }),
        }),
      ),
    )
    const kept = answers.map((res) => res.headers.get("location"))
    expect(kept.every((at) => at !== null && /\?draft=[\w-]+#edit-error$/.test(at))).toBe(true)
    // (on two instances the shared counter is leased in batches: two drafts may share a slot
    // before all five are taken, so "at most")
    const stored = (await storedDrafts()) - before
    expect(stored).toBeGreaterThan(0)
    expect(stored).toBeLessThanOrEqual(MAX_DRAFTS)
    // each draft kept opens at one address; the others find nothing (not another's text)
    const pages = await Promise.all(kept.map(async (at) => (await fetch(`${servers[0]!.url}${at!.replace(/#.*$/, "")}`, { headers: { cookie } })).text()))
    const opened = pages.map((page, i) => page.includes(`value="Side ${i}"`))
    expect(opened.filter(Boolean)).toHaveLength(stored)
    expect(pages.every((page, i) => opened[i] || !/value="Side \d+"/.test(page))).toBe(true)
  })

  it(`should keep at most ${MAX_DRAFTS} pending drafts of one client address, however many signed-out edits arrive at once on two instances`, async () => {
    const before = await storedDrafts()
    const answers = await Promise.all(
      Array.from({ length: SIDE_BY_SIDE }, (_, i) =>
        fetch(`${servers[i % 2]!.url}/articles/art_d1/edit`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": FORM, "sec-fetch-site": "same-origin" },
          body: form({ title: `Pending ${i}`, body: "<p>x</p>", revision: "1" }),
        }),
      ),
    )
    const tokens = answers.map((res) => /cs_draft=([\w-]+)/.exec(res.headers.get("set-cookie") ?? "")?.[1])
    expect(tokens.every((t) => t !== undefined)).toBe(true)
    const stored = (await storedDrafts()) - before
    expect(stored).toBeGreaterThan(0)
    expect(stored).toBeLessThanOrEqual(MAX_DRAFTS)
    // each pending draft kept is found by one token only, and by its own
    const found = await Promise.all(tokens.map((t) => findPendingDraft({ runtime: servers[0]!.runtime } as Parameters<typeof findPendingDraft>[0], t!)))
    expect(found.filter((d) => d !== null)).toHaveLength(stored)
    expect(found.every((d, i) => d === null || d.title === `Pending ${i}`)).toBe(true)
  })

  it("should drop a draft once when two instances drop it at the same moment", async () => {
    const deps = servers.map((server) => ({ runtime: server.runtime, publicUrl: server.url }) as unknown as Parameters<typeof dropDraft>[0])
    const session = { key: `drop-twice-${Date.now()}`, accountId: "acc_d1", csrf: "c", createdAt: Date.now(), flash: null }
    const id = (await keepDraft(deps[0]!, session, { articleId: "art_d1", title: "Dropped", body: "<p>x</p>", reason: "", revision: 1, refusal: { message: "m", blocks: [], details: [] } }))!
    expect((await Promise.all([dropDraft(deps[0]!, session, id), dropDraft(deps[1]!, session, id)])).sort()).toEqual([false, true])
    expect(await findDraft(deps[1]!, session, "art_d1", id)).toBeNull()
  })

  it("should give a pending draft to one of many sign-ins that open its article at the same moment on two instances", async () => {
    const sent = await fetch(`${servers[0]!.url}/articles/art_d1/edit`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": FORM, "sec-fetch-site": "same-origin" },
      body: form({ title: "Adopted once", body: "<p>x</p>", revision: "1" }),
    })
    const pending = /cs_draft=([\w-]+)/.exec(sent.headers.get("set-cookie") ?? "")![1]!
    // as many tabs of that browser, each signed in (its own session), each with the pending cookie
    const tabs = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const jar = new Map<string, string>([["cs_draft", pending]])
        const home = await fetch(`${servers[i % 2]!.url}/`, { redirect: "manual", headers: { cookie: cookieHeader(jar) } })
        keep(jar, home)
        const csrf = /name="_csrf" value="([^"]+)"/.exec(await home.text())![1]!
        const signIn = await fetch(`${servers[i % 2]!.url}/`, {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": FORM, cookie: cookieHeader(jar) },
          body: form({ _csrf: csrf, email: "drafts@example.com", password: "password-drafts", next: "/sites" }),
        })
        keep(jar, signIn)
        return jar
      }),
    )
    const opened = await Promise.all(tabs.map((jar, i) => fetch(`${servers[i % 2]!.url}/articles/art_d1`, { redirect: "manual", headers: { cookie: cookieHeader(jar) } })))
    expect(opened.filter((res) => res.status === 303 && /\?draft=/.test(res.headers.get("location") ?? ""))).toHaveLength(1)
    expect(opened.filter((res) => res.status === 200)).toHaveLength(tabs.length - 1)
  })
})
