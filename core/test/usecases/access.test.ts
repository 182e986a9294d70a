import { Effect, Option } from "effect"
import { describe, expect, it } from "vitest"
import {
  AccountRepository,
  ArticleRepository,
  authenticateApiKey,
  checkRequestLimit,
  createAccount,
  createApiKey,
  importData,
  listActivity,
  listApiKeys,
  peekRequestLimit,
  recordActivity,
  REFUSED_ENTRIES_PER_MINUTE,
  revokeApiKey,
  verifyCredentials,
  Unavailable,
  type AccountRecord,
  type InvalidRequest,
  type RateLimited,
} from "../../src/index.ts"
import { caller, countingSecrets, failureOf, failureTag, makeWorld, fixture, NOW } from "./harness.ts"

describe("authenticateApiKey", () => {
  it("should resolve a known key to its account, actor and scope", async () => {
    const w = await makeWorld()
    const p = await w.run(authenticateApiKey("cs_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "1.1.1.1"))
    expect(p).toEqual({ accountId: "acc_a", actor: { type: "api_key", id: "key_a", name: "ci" }, scope: "write" })
    const ro = await w.run(authenticateApiKey("cs_rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr", "1.1.1.1"))
    expect(ro.scope).toBe("read-only")
  })

  it("should accept a known plaintext key set by an import in the contract's example shape", async () => {
    const w = await makeWorld()
    await w.run(
      importData({
        accounts: [{ id: "acc_known", email: "known@example.test", password: "secret-password", api_keys: [{ id: "key_known", name: "ci", key: "cs_test_known_plaintext", scope: "write" }] }],
      }),
    )
    const p = await w.run(authenticateApiKey("cs_test_known_plaintext", "1.1.1.1"))
    expect(p).toEqual({ accountId: "acc_known", actor: { type: "api_key", id: "key_known", name: "ci" }, scope: "write" })
  })

  it("should refuse an import whose account id another email has, writing none of its keys or sites into that account", async () => {
    const w = await makeWorld()
    const keys = w.state.apiKeys.size
    const takeover = importData({
      accounts: [{ id: "acc_b", email: "intruder@example.test", password: "intruder-password", api_keys: [{ id: "key_in", name: "in", key: "cs_intruderknownplaintextkey0123456789", scope: "write" }], sites: [{ id: "site_in", name: "In", url: "https://in.test" }] }],
    })
    const refused = failureOf(await w.exit(takeover)) as InvalidRequest
    expect(refused._tag).toBe("InvalidRequest")
    expect(refused.errors.map((e) => e.path)).toEqual(["accounts/0/id"])
    expect(w.state.apiKeys.size).toBe(keys)
    expect(failureTag(await w.exit(authenticateApiKey("cs_intruderknownplaintextkey0123456789", "1.1.1.1")))).toBe("Unauthenticated")
    // the same account again, its email written otherwise, is still the same account
    expect(failureTag(await w.exit(importData({ accounts: [{ ...fixture.accounts[1]!, email: "B@Example.com" }] })))).toBe("(succeeded)")
  })

  it("should refuse missing, malformed and unknown keys alike", async () => {
    const w = await makeWorld()
    for (const key of [undefined, "", "nope", "cs_", "cs_short", "cs_with space", `cs_${"z".repeat(129)}`, `cs_${"z".repeat(40)}`]) {
      expect(failureTag(await w.exit(authenticateApiKey(key, "2.2.2.2")))).toBe("Unauthenticated")
    }
  })

  it("should stop a revoked key at once", async () => {
    const w = await makeWorld()
    const { key, view } = await w.run(createApiKey("acc_a", { name: "temp", scope: "write" }))
    expect(key).toMatch(/^cs_[A-Za-z0-9]{32,}$/)
    await w.run(authenticateApiKey(key, "3.3.3.3"))
    await w.run(revokeApiKey("acc_a", view.id))
    expect(failureTag(await w.exit(authenticateApiKey(key, "3.3.3.3")))).toBe("Unauthenticated")
  })

  it("should refuse a key name over 100 characters, made or imported", async () => {
    const w = await makeWorld()
    expect((await w.run(createApiKey("acc_a", { name: "k".repeat(100), scope: "write" }))).view.name).toHaveLength(100)
    expect(failureTag(await w.exit(createApiKey("acc_a", { name: "k".repeat(101), scope: "write" })))).toBe("InvalidRequest")
    const imported = importData({ accounts: [{ id: "acc_long", email: "long@example.test", password: "password-p", api_keys: [{ name: "k".repeat(101), scope: "write" }] }] })
    expect(failureTag(await w.exit(imported))).toBe("InvalidRequest")
  })

  it("should refuse an account name over 100 characters, made or imported (it is copied into the person's activity entries)", async () => {
    const w = await makeWorld()
    expect((await w.run(createAccount({ email: "hundred@example.test", password: "long enough", name: "n".repeat(100) }))).name).toHaveLength(100)
    expect(failureTag(await w.exit(createAccount({ email: "longer@example.test", password: "long enough", name: "n".repeat(101) })))).toBe("InvalidRequest")
    expect(failureTag(await w.exit(importData({ accounts: [{ id: "acc_long_name", email: "ln@example.test", password: "password-p", name: "n".repeat(101) }] })))).toBe("InvalidRequest")
  })

  it("should store only a hash of a new key", async () => {
    const w = await makeWorld()
    const { key, view } = await w.run(createApiKey("acc_a", { name: "h", scope: "read-only" }))
    const stored = w.state.apiKeys.get(view.id)!
    // no part of the secret either (not even its first characters, to tell keys apart)
    expect(JSON.stringify(stored)).not.toContain(key.slice(3, 9))
    expect((await w.run(listApiKeys("acc_a"))).map((k) => k.id)).toContain(view.id)
  })

  it("should not let one account revoke another's key", async () => {
    const w = await makeWorld()
    expect(failureTag(await w.exit(revokeApiKey("acc_b", "key_a")))).toBe("NotFound")
  })

  it("should refuse a client address after too many failures, even with a valid key", async () => {
    const w = await makeWorld({ authFailuresPerMinute: 3 })
    for (let i = 0; i < 3; i++) await w.exit(authenticateApiKey("cs_wrongwrongwrongwrongwrongwrongwrong", "9.9.9.9"))
    const error = failureOf(await w.exit(authenticateApiKey("cs_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "9.9.9.9"))) as RateLimited
    expect(error._tag).toBe("RateLimited")
    expect(error.retryAfterSeconds).toBeGreaterThan(0)
    // Another address is unaffected.
    await w.run(authenticateApiKey("cs_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "8.8.8.8"))
  })

  it("should answer no more wrong keys than the budget as such when a burst of them arrives at once", async () => {
    // All ten read the budget open before any is counted (each key's hash is an await between):
    // the count admits three, and the other seven are refused for the budget.
    const w = await makeWorld({ authFailuresPerMinute: 3 })
    const burst = Array.from({ length: 10 }, (_, i) => authenticateApiKey(`cs_wrong${String(i).padStart(30, "0")}`, "7.7.7.7"))
    const tags = (await Promise.all(burst.map((call) => w.exit(call)))).map(failureTag)
    expect(tags.filter((t) => t === "Unauthenticated")).toHaveLength(3)
    expect(tags.filter((t) => t === "RateLimited")).toHaveLength(7)
  })

  it("should answer no more wrong passwords than the budget as such when a burst of them arrives at once", async () => {
    const w = await makeWorld({ authFailuresPerMinute: 2 })
    const tags = (await Promise.all(Array.from({ length: 6 }, () => w.exit(verifyCredentials("a@example.com", "wrong", "6.6.6.6"))))).map(failureTag)
    expect(tags.filter((t) => t === "Unauthenticated")).toHaveLength(2)
    expect(tags.filter((t) => t === "RateLimited")).toHaveLength(4)
  })
})

describe("verifyCredentials", () => {
  it("should accept the right password and refuse a wrong one or an unknown email identically", async () => {
    const w = await makeWorld()
    expect((await w.run(verifyCredentials("A@example.com ", "password-a", "1.1.1.1"))).id).toBe("acc_a")
    expect(failureTag(await w.exit(verifyCredentials("a@example.com", "wrong", "1.1.1.1")))).toBe("Unauthenticated")
    expect(failureTag(await w.exit(verifyCredentials("nobody@example.com", "x", "1.1.1.1")))).toBe("Unauthenticated")
  })

  it("should compute one password hash whether or not the email has an account", async () => {
    const { counts, layer } = countingSecrets()
    const w = await makeWorld({}, new Map(), undefined, layer)
    const hashesOf = async (email: string, password: string) => {
      const before = counts.hashes
      await w.exit(verifyCredentials(email, password, "1.1.1.1"))
      return counts.hashes - before
    }
    expect(await hashesOf("a@example.com", "password-a")).toBe(1)
    expect(await hashesOf("a@example.com", "wrong")).toBe(1)
    expect(await hashesOf("nobody@example.com", "wrong")).toBe(1)
    expect(await hashesOf("", "")).toBe(1)
  })

  it("should refuse an email PostgreSQL cannot store as InvalidRequest, not look it up", async () => {
    const w = await makeWorld()
    for (const email of ["a\u0000@example.com", "a\ud800@example.com"]) {
      const error = failureOf(await w.exit(verifyCredentials(email, "x", "1.1.1.1"))) as InvalidRequest
      expect(error._tag).toBe("InvalidRequest")
      expect(error.errors[0]?.path).toBe("email")
    }
  })
})

describe("checkRequestLimit", () => {
  it("should allow the limit per minute per account, then refuse until the window resets", async () => {
    const w = await makeWorld({ requestsPerMinute: 3 })
    const verdicts = [await w.run(checkRequestLimit("acc_a")), await w.run(checkRequestLimit("acc_a")), await w.run(checkRequestLimit("acc_a"))]
    expect(verdicts.map((v) => v.remaining)).toEqual([2, 1, 0])
    const error = failureOf(await w.exit(checkRequestLimit("acc_a"))) as RateLimited
    expect([error._tag, error.limit, error.retryAfterSeconds]).toEqual(["RateLimited", 3, 60])
    expect((await w.run(checkRequestLimit("acc_b"))).remaining).toBe(2)
    w.clock.advance(60_000)
    expect((await w.run(checkRequestLimit("acc_a"))).remaining).toBe(2)
  })
})

describe("peekRequestLimit", () => {
  it("should read the account's minute as it stands without counting, and never fail over the limit", async () => {
    const w = await makeWorld({ requestsPerMinute: 2 })
    for (let i = 0; i < 5; i++) expect(await w.run(peekRequestLimit("acc_a"))).toMatchObject({ limit: 2, remaining: 2, resetSeconds: 60 })
    expect((await w.run(checkRequestLimit("acc_a"))).remaining).toBe(1)
    expect((await w.run(peekRequestLimit("acc_a"))).remaining).toBe(1)
    expect((await w.run(checkRequestLimit("acc_a"))).remaining).toBe(0)
    expect(failureOf(await w.exit(checkRequestLimit("acc_a")))._tag).toBe("RateLimited")
    expect(await w.run(peekRequestLimit("acc_a"))).toMatchObject({ allowed: false, remaining: 0 })
    expect((await w.run(peekRequestLimit("acc_b"))).remaining).toBe(2)
  })
})

describe("recordActivity and listActivity", () => {
  it("should record refused calls too, and list only the account's own entries, newest first", async () => {
    const w = await makeWorld()
    await w.run(recordActivity(caller({ action: "GET /api/v1/sites" }), { ok: true, httpStatus: 200 }))
    w.clock.advance(1000)
    await w.run(recordActivity(caller({ action: "GET /api/v1/articles/{id}" }), { ok: false, httpStatus: 404, errorCode: "not_found", articleId: "art_b" }))
    await w.run(recordActivity(caller({ accountId: "acc_b", channel: "mcp", action: "list_sites" }), { ok: true }))
    const log = await w.run(listActivity(caller(), {}))
    expect(log.data.map((e) => [e.action, e.status, e.error_code])).toEqual([
      ["GET /api/v1/articles/{id}", 404, "not_found"],
      ["GET /api/v1/sites", 200, null],
    ])
    const mcp = await w.run(listActivity(caller({ accountId: "acc_b" }), { channel: "mcp" }))
    expect(mcp.data.map((e) => e.status)).toEqual(["ok"])
  })

  it("should sum a source's refused calls past the budget of a minute in one entry carrying count, every call counted", async () => {
    const w = await makeWorld()
    const budget = REFUSED_ENTRIES_PER_MINUTE
    const anonymous = (address: string) => ({ accountId: null, actor: null, channel: "api" as const, requestId: `req_${crypto.randomUUID()}`, action: "GET /api/v1/sites", startedAt: NOW, address })
    // budget + 15 refused calls of one address in a minute, 3 of another, and successes, which are never summed
    for (let i = 0; i < budget + 15; i++) await w.run(recordActivity(anonymous("203.0.113.7"), { ok: false, httpStatus: 401, errorCode: "unauthenticated" }))
    for (let i = 0; i < 3; i++) await w.run(recordActivity(anonymous("203.0.113.8"), { ok: false, httpStatus: 401, errorCode: "unauthenticated" }))
    for (let i = 0; i < budget + 2; i++) await w.run(recordActivity(caller(), { ok: true, httpStatus: 200 }))
    const anon = w.state.activity.filter((e) => e.account_id === null)
    expect(anon).toHaveLength(budget + 1 + 3)
    expect(anon.reduce((n, e) => n + e.count, 0)).toBe(budget + 18)
    const summary = anon.find((e) => e.count > 1)
    expect(summary).toMatchObject({ count: 15, at: "2026-11-22T12:00:00.000Z", status: 401, error_code: "unauthenticated", actor: null })
    // the summary names the address by a hash only
    expect(JSON.stringify(summary)).not.toContain("203.0.113")
    // the next minute starts a new budget and, past it, a new summary
    w.clock.advance(60_000)
    for (let i = 0; i < budget + 2; i++) await w.run(recordActivity(anonymous("203.0.113.7"), { ok: false, httpStatus: 429, errorCode: "rate_limited" }))
    const later = w.state.activity.filter((e) => e.account_id === null && e.at >= "2026-11-22T12:01")
    expect(later.map((e) => e.count).sort((a, b) => b - a)).toEqual([2, ...Array(budget).fill(1)])
    expect(w.state.activity.filter((e) => e.account_id !== null).every((e) => e.count === 1)).toBe(true)
  })

  it("should not sum one account's refused calls into another's entry when both use the same MCP client", async () => {
    const w = await makeWorld()
    // a client described by a metadata document: one client_id for every account that connects it
    const agent = { type: "oauth_client" as const, id: "https://agent.example/client.json", name: "Agent" }
    const limited = (accountId: string) => caller({ accountId, actor: agent, channel: "mcp", action: "get_article" })
    const refused = { ok: false, httpStatus: 429, errorCode: "rate_limited" } as const
    // account A floods its own minute past the budget: its summary entry is begun
    for (let i = 0; i < REFUSED_ENTRIES_PER_MINUTE + 5; i++) await w.run(recordActivity(limited("acc_a"), refused))
    // account B's own refusals of the same minute are B's entries, not one more in A's count
    for (let i = 0; i < 3; i++) await w.run(recordActivity(limited("acc_b"), refused))
    const logOf = async (accountId: string) => (await w.run(listActivity(caller({ accountId }), { per_page: 100 }))).data
    const a = await logOf("acc_a")
    const b = await logOf("acc_b")
    expect(a.reduce((n, e) => n + e.count, 0)).toBe(REFUSED_ENTRIES_PER_MINUTE + 5)
    expect(b.map((e) => e.count)).toEqual([1, 1, 1])
  })

  it("should look up a refused call's site until its summary entry is begun, and not for the calls that only add to its count", async () => {
    const w = await makeWorld()
    let lookups = 0
    const counted = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.updateService(effect, ArticleRepository, (repo) => ({
        ...repo,
        locate: (articleId: string) => {
          lookups++
          return repo.locate(articleId)
        },
      }))
    const limited = () => caller({ actor: { type: "api_key", id: "key_flood", name: "flood" }, action: "PUT /api/v1/articles/{id}" })
    const refused = { ok: false, httpStatus: 429, errorCode: "rate_limited", articleId: "art_1" } as const
    const calls = REFUSED_ENTRIES_PER_MINUTE + 10
    for (let i = 0; i < calls; i++) await w.run(counted(recordActivity(limited(), refused)))
    // an entry each within the budget, and the one call that began the summary: all with their site
    expect(lookups).toBe(REFUSED_ENTRIES_PER_MINUTE + 1)
    const entries = w.state.activity.filter((e) => e.actor?.id === "key_flood")
    expect(entries).toHaveLength(REFUSED_ENTRIES_PER_MINUTE + 1)
    expect(entries.every((e) => e.site_id === "site_a" && e.article_id === "art_1")).toBe(true)
    expect(entries.reduce((n, e) => n + e.count, 0)).toBe(calls)
    // the next minute looks up again, within its own budget
    w.clock.advance(60_000)
    await w.run(counted(recordActivity(limited(), refused)))
    expect(lookups).toBe(REFUSED_ENTRIES_PER_MINUTE + 2)
    // a call that is never summed (a success) is looked up however many came before
    for (let i = 0; i < 3; i++) await w.run(counted(recordActivity(limited(), { ok: true, httpStatus: 200, articleId: "art_1" })))
    expect(lookups).toBe(REFUSED_ENTRIES_PER_MINUTE + 5)
  })

  it("should sum a key's calls refused at the gate on its account, listed with their count, and never its other refusals", async () => {
    const w = await makeWorld()
    const readOnly = (action: string) => caller({ actor: { type: "api_key", id: "key_ro", name: "ro" }, scope: "read-only", action })
    for (let i = 0; i < REFUSED_ENTRIES_PER_MINUTE + 4; i++) await w.run(recordActivity(readOnly("GET /api/v1/sites"), { ok: false, httpStatus: 429, errorCode: "rate_limited" }))
    const log = await w.run(listActivity(caller(), { per_page: 100 }))
    expect(log.data).toHaveLength(REFUSED_ENTRIES_PER_MINUTE + 1)
    expect(log.data.map((e) => e.count).sort((a, b) => b - a)).toEqual([4, ...Array(REFUSED_ENTRIES_PER_MINUTE).fill(1)])
    // a refusal past the gate counted against the request limit: an entry each, however many
    for (let i = 0; i < REFUSED_ENTRIES_PER_MINUTE + 4; i++) await w.run(recordActivity(readOnly("PUT /api/v1/articles/{id}"), { ok: false, httpStatus: 403, errorCode: "insufficient_scope" }))
    const scoped = await w.run(listActivity(caller(), { per_page: 100, actions: ["PUT /api/v1/articles/{id}"] }))
    expect(scoped.data.map((e) => e.count)).toEqual(Array(REFUSED_ENTRIES_PER_MINUTE + 4).fill(1))
  })
})

describe("createAccount", () => {
  it("should create an account with a hashed password and refuse a duplicate email", async () => {
    const w = await makeWorld()
    const acc = await w.run(createAccount({ email: "New@Example.com", password: "long enough" }))
    expect(acc.email).toBe("new@example.com")
    expect(acc.password_hash).not.toContain("long enough")
    expect(failureTag(await w.exit(createAccount({ email: "new@example.com", password: "long enough" })))).toBe("InvalidRequest")
    expect(failureTag(await w.exit(createAccount({ email: "bad", password: "long enough" })))).toBe("InvalidRequest")
  })

  it("should refuse the second of two creations of one email at once as in use, not as a database that cannot answer", async () => {
    const w = await makeWorld()
    const stored = await w.run(AccountRepository.use((r) => Effect.succeed(r)))
    // the twin's row lands between this creation's check and its insert; the store then refuses
    // the duplicate as the ORM adapter does (a unique violation is a lost race: Unavailable)
    let checked = false
    const racing = {
      ...stored,
      findByEmail: (email: string) => (checked ? stored.findByEmail(email) : Effect.sync(() => ((checked = true), Option.none()))),
      insert: (account: AccountRecord) =>
        Effect.flatMap(stored.insert({ ...account, id: "acc_twin" }), () => Effect.fail(new Unavailable({ detail: "The database cannot answer now; nothing was changed." }))),
    }
    const exit = await w.exit(createAccount({ email: "twice@example.com", password: "long enough" }).pipe(Effect.provideService(AccountRepository, racing)))
    expect(failureTag(exit)).toBe("InvalidRequest")
    expect((failureOf(exit) as InvalidRequest).detail).toBe("An account with twice@example.com exists already.")
  })

  it("should trim an account's and an imported key's name and take a blank one as none, as a key made by the API or the command line", async () => {
    const w = await makeWorld()
    expect((await w.run(createAccount({ email: "blank@example.com", password: "long enough", name: "   " }))).name).toBe("blank@example.com")
    expect((await w.run(createAccount({ email: "spaced@example.com", password: "long enough", name: "  Ops team " }))).name).toBe("Ops team")
    await w.run(
      importData({
        accounts: [{ id: "acc_blank", email: "imported@example.test", password: "long enough", name: " ", api_keys: [{ id: "key_blank", name: "  ", scope: "write" }] }],
      }),
    )
    expect(w.state.accounts.get("acc_blank")?.name).toBe("imported@example.test")
    expect(w.state.apiKeys.get("key_blank")?.name).toBe("API key")
    expect((await w.run(createApiKey("acc_blank", { name: "  ", scope: "write" }))).view.name).toBe("API key")
  })

  it("should count a password's 8 characters in code points, as every length of the contract", async () => {
    const w = await makeWorld()
    // four emoji: eight UTF-16 units, four characters
    expect(failureTag(await w.exit(createAccount({ email: "emoji4@example.com", password: "😀😀😀😀" })))).toBe("InvalidRequest")
    expect((await w.run(createAccount({ email: "emoji8@example.com", password: "😀😀😀😀😀😀😀😀" }))).email).toBe("emoji8@example.com")
    expect(failureTag(await w.exit(createAccount({ email: "short@example.com", password: "1234567" })))).toBe("InvalidRequest")
  })
})

describe("importData", () => {
  it("should be idempotent by id", async () => {
    const w = await makeWorld()
    const again = await w.run(importData(fixture))
    expect(again.created).toEqual({ accounts: 0, apiKeys: 0, sites: 0, articles: 0, backlinks: 0 })
    expect(w.state.articles.size).toBe(4)
  })

  it("should name the JSON path of a bad entry and import nothing", async () => {
    const w = await makeWorld()
    const bad = {
      accounts: [{ email: "c@example.com", password: "password-x", sites: [{ name: "S", url: "https://s.test", articles: [{ title: "T", url: "not a url", status: "published", body: "" }] }] }],
    }
    const error = failureOf(await w.exit(importData(bad))) as InvalidRequest
    expect(error._tag).toBe("InvalidRequest")
    expect(error.errors.map((e) => e.path)).toContain("accounts/0/sites/0/articles/0/url")
    expect([...w.state.accounts.values()].some((a) => a.email === "c@example.com")).toBe(false)
  })

  it("should refuse dates that do not exist or lie outside the years 0001 to 9999, naming them", async () => {
    const w = await makeWorld()
    const article = { title: "T", url: "https://e.test/t", status: "published", body: "<p>a</p>" }
    const backlink = { source_domain: "n.test", source_url: "https://n.test/p", target_url: "https://e.test/t", anchor_text: "a", anchor_type: "exact", category: "industry" }
    const file = {
      accounts: [
        {
          email: "e@example.com",
          password: "password-x",
          sites: [
            {
              name: "E",
              url: "https://e.test",
              articles: [
                { ...article, published_at: "0000-06-01T00:00:00Z" },
                { ...article, url: "https://e.test/u", published_at: "2026-02-31" },
              ],
              backlinks: [
                { ...backlink, date_acquired: "0000-01-01" },
                { ...backlink, date_acquired: "2026-02-30" },
              ],
            },
          ],
        },
      ],
    }
    const error = failureOf(await w.exit(importData(file))) as InvalidRequest
    expect(error.errors.map((e) => e.path)).toEqual([
      "accounts/0/sites/0/articles/0/published_at",
      "accounts/0/sites/0/articles/1/published_at",
      "accounts/0/sites/0/backlinks/0/date_acquired",
      "accounts/0/sites/0/backlinks/1/date_acquired",
    ])
    expect([...w.state.accounts.values()].some((a) => a.email === "e@example.com")).toBe(false)
  })

  it("should derive the same ids for entries without ids on every run", async () => {
    const w = await makeWorld()
    const file = { accounts: [{ email: "d@example.com", password: "password-x", sites: [{ name: "D", url: "https://d.test", articles: [{ title: "T", url: "https://d.test/t", status: "draft", body: "<p>a</p>" }] }] }] }
    const first = await w.run(importData(file))
    const second = await w.run(importData(file))
    expect(first.created.articles).toBe(1)
    expect(second.created.articles).toBe(0)
  })

  it("should refuse an article title that is empty after trimming, or over 300 characters after it, as an edit's title is", async () => {
    const w = await makeWorld()
    const article = (title: string) => ({ accounts: [{ id: "acc_t", email: "t@example.com", password: "password-x", sites: [{ id: "site_t", name: "T", url: "https://t.test", articles: [{ id: "art_t", title, url: "https://t.test/a", status: "draft", body: "<p>a</p>" }] }] }] })
    for (const blank of ["   ", "\u3000\n"]) {
      const error = failureOf(await w.exit(importData(article(blank)))) as InvalidRequest
      expect(error._tag).toBe("InvalidRequest")
      expect(error.errors.map((e) => e.path)).toEqual(["accounts/0/sites/0/articles/0/title"])
    }
    expect(w.state.articles.has("art_t")).toBe(false)
    // 300 characters between spaces are 300 after trimming, as a PUT counts them
    await w.run(importData(article(`  ${"t".repeat(300)}  `)))
    expect(w.state.articles.get("art_t")!.title).toBe("t".repeat(300))
  })

  it("should refuse an API key whose plaintext another key has, in the file or stored, rather than skip it as present", async () => {
    const w = await makeWorld()
    const account = (keys: ReadonlyArray<{ id: string; key: string }>) => ({
      accounts: [{ id: "acc_k", email: "k@example.com", password: "password-x", api_keys: keys.map((k) => ({ ...k, name: "ci", scope: "write" })) }],
    })
    // the fixture's key_a holds this plaintext for acc_a
    const stored = failureOf(await w.exit(importData(account([{ id: "key_new", key: "cs_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" }])))) as InvalidRequest
    expect(stored._tag).toBe("InvalidRequest")
    expect(stored.errors.map((e) => e.path)).toEqual(["accounts/0/api_keys/0/key"])
    const twice = failureOf(await w.exit(importData(account([{ id: "key_x", key: "cs_same_plaintext" }, { id: "key_y", key: "cs_same_plaintext" }])))) as InvalidRequest
    expect(twice.errors.map((e) => e.path)).toEqual(["accounts/0/api_keys/1/key"])
    expect(w.state.accounts.has("acc_k")).toBe(false)
    // the same key under its own id again is the idempotent case, not a clash
    const again = await w.run(importData(fixture))
    expect(again.created.apiKeys).toBe(0)
  })

  it("should create the first revision of each imported article with origin editor", async () => {
    const w = await makeWorld()
    const rev = w.state.revisions.get("art_1#1")!
    expect([rev.origin, rev.number, rev.actor.type]).toEqual(["editor", 1, "system"])
  })
})
