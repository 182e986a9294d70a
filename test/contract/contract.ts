/**
 * The storage contract: the same cases run against every adapter (memory, PostgreSQL, PGlite).
 * Each case works on its own freshly imported account, so one database serves a whole file.
 */
import { WEBSEARCH_CASES, WEBSEARCH_CORPUS } from "./websearchCases.ts"
import {
  AccountRepository,
  ActivityLog,
  ApiKeyRepository,
  ArticleRepository,
  ArticleWriter,
  BacklinkRepository,
  DataImporter,
  EditConflict,
  IdempotencyStore,
  LimitStore,
  OAuthStore,
  RevisionRepository,
  REFUSED_ENTRIES_PER_MINUTE,
  RewriteLedger,
  SiteRepository,
  snippetOf,
  snippetHeadline,
  matchedMarksOnly,
  SNIPPET_LEAD_CHARACTERS,
  HEADLINE_HTML_CHARACTERS,
  SEARCH_MARK_START,
  SEARCH_MARK_STOP,
  type AccountRecord,
  type ActivityFilter,
  type ActivityRecord,
  type ArticleChange,
  type ArticleRecord,
  type ArticleSearchFilter,
  type BacklinkRecord,
  type EditBudget,
  type ImportPlan,
  type MediaStore,
  type RevisionRecord,
  type SiteRecord,
  type StorageServices,
  type KeptAnswer,
} from "@content-site/core"
import { Cause, Effect, Exit, type Layer, ManagedRuntime, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

export type Storage = Exclude<StorageServices, MediaStore>

export interface Subject {
  readonly layer: Layer.Layer<Storage>
  readonly close: () => Promise<void>
}

let counter = 0
const uid = (prefix: string) => `${prefix}_${Date.now().toString(36)}${(counter++).toString(36)}${Math.random().toString(36).slice(2, 6)}`

const T = (s: string) => new Date(s).toISOString()

/** The first and last instants a range may name (the core's INSTANT_RANGE). */
const FIRST_INSTANT = "0001-01-01T00:00:00.000Z"
const LAST_INSTANT = "9999-12-31T23:59:59.999Z"

/** Records of one account: sites, articles (with first revisions), backlinks. */
export const makeWorld = () => {
  const accountId = uid("acc")
  const account: AccountRecord = {
    id: accountId,
    email: `${accountId}@example.test`,
    name: "Owner",
    password_hash: "hash",
    created_at: T("2026-01-01T00:00:00Z"),
  }
  const site = (name: string): SiteRecord => ({
    id: uid("site"),
    account_id: accountId,
    name,
    url: `https://${name.toLowerCase()}.test`,
    created_at: T("2026-01-02T00:00:00Z"),
  })
  const sites = [site("Beta"), site("Alpha"), site("Alpha")]
  const main = sites[1]!
  const article = (id: string, published_at: string | null, status: ArticleRecord["status"] = "published"): ArticleRecord => ({
    id,
    account_id: accountId,
    site_id: main.id,
    title: `Title ${id}`,
    url: `https://alpha.test/${id}`,
    status,
    published_at: published_at === null ? null : T(published_at),
    target_keyword: "kw",
    word_count: 3,
    featured_image: id.endsWith("img") ? { url: "https://img.test/a.png", alt: "A" } : null,
    body: `<p>body of ${id}</p>`,
    updated_at: T("2026-02-01T00:00:00Z"),
    revision: 1,
  })
  const p = uid("art")
  const articles = [
    article(`${p}_b`, "2026-11-03T09:00:00Z"),
    article(`${p}_a`, "2026-11-03T09:00:00Z"),
    article(`${p}_c`, "2026-10-15T09:00:00Z"),
    article(`${p}_d`, null, "draft"),
    article(`${p}_eimg`, "2026-09-30T23:59:59.999Z"),
  ]
  const firstRevision = (a: ArticleRecord): RevisionRecord => ({
    id: `rev_${a.id}_1`,
    account_id: accountId,
    article_id: a.id,
    number: 1,
    origin: "editor",
    title: a.title,
    body: a.body,
    featured_image: a.featured_image,
    reason: "Imported",
    actor: { type: "system", id: "import", name: "Import" },
    restored_from: null,
    created_at: a.updated_at,
  })
  const backlink = (id: string, date: string, category: BacklinkRecord["category"] = "industry"): BacklinkRecord => ({
    id,
    account_id: accountId,
    site_id: main.id,
    date_acquired: date,
    source_domain: "news.test",
    source_url: `https://news.test/${id}`,
    target_url: "https://alpha.test/",
    anchor_text: "alpha",
    anchor_type: "brand",
    category,
  })
  const b = uid("bl")
  const backlinks = [
    backlink(`${b}_2`, "2026-11-05"),
    backlink(`${b}_1`, "2026-11-05", "local"),
    backlink(`${b}_3`, "2026-11-01"),
    backlink(`${b}_4`, "2026-10-31", "local"),
  ]
  const plan: ImportPlan = {
    accounts: [account],
    apiKeys: [],
    sites,
    articles: articles.map((a) => ({ article: a, firstRevision: firstRevision(a) })),
    backlinks,
  }
  return { accountId, account, sites, main, articles, backlinks, plan }
}

const budget = (limit = 100, day = "2026-11-22"): EditBudget => ({ day, limit, retryAfterSeconds: 3600 })

const changeOf = (current: ArticleRecord, title: string, activity: ActivityRecord | null = null): ArticleChange => ({
  title,
  body: `<p>${title}</p>`,
  word_count: 1,
  featured_image: current.featured_image,
  updated_at: T("2026-11-22T10:00:00Z"),
  revision: {
    id: uid("rev"),
    origin: "api",
    reason: null,
    actor: { type: "api_key", id: "key_1", name: "ci" },
    restored_from: null,
    created_at: T("2026-11-22T10:00:00Z"),
  },
  activity,
})

const activityOf = (accountId: string, at: string, extra: Partial<ActivityRecord> = {}): ActivityRecord => ({
  id: uid("act"),
  account_id: accountId,
  at: T(at),
  channel: "api",
  actor: { type: "api_key", id: "key_1", name: "ci" },
  action: "PUT /api/v1/articles/{id}",
  site_id: null,
  article_id: null,
  status: 200,
  error_code: null,
  duration_ms: 12,
  request_id: uid("req"),
  count: 1,
  ...extra,
})

/** Registers the whole contract suite for one adapter. */
export const storageContract = (name: string, open: () => Promise<Subject>) =>
  describe(`storage contract: ${name}`, () => {
    let subject: Subject
    let runtime: ManagedRuntime.ManagedRuntime<Storage, never>

    beforeAll(async () => {
      subject = await open()
      runtime = ManagedRuntime.make(subject.layer)
    })
    afterAll(async () => {
      await runtime?.dispose()
      await subject?.close()
    })

    const run = async <A, E>(effect: Effect.Effect<A, E, Storage>): Promise<A> => {
      const exit = await runtime.runPromiseExit(effect)
      if (Exit.isFailure(exit)) throw new Error(`unexpected failure: ${Cause.pretty(exit.cause)}`)
      return exit.value
    }
    /** The `_tag` of the error the effect fails with. */
    const failure = async <A, E>(effect: Effect.Effect<A, E, Storage>): Promise<string> => {
      const exit = await runtime.runPromiseExit(effect)
      if (Exit.isSuccess(exit)) return "success"
      const error = Option.getOrUndefined(Cause.findErrorOption(exit.cause)) as { _tag?: string } | undefined
      return error?._tag ?? `defect: ${Cause.pretty(exit.cause)}`
    }
    const seed = async () => {
      const world = makeWorld()
      await run(DataImporter.use((i) => i.apply(world.plan)))
      return world
    }

    describe("accounts", () => {
      it("should insert an account and find it by id and by email", async () => {
        const { account } = makeWorld()
        await run(AccountRepository.use((r) => r.insert(account)))
        expect(await run(AccountRepository.use((r) => r.get(account.id)))).toEqual(account)
        expect(Option.getOrNull(await run(AccountRepository.use((r) => r.findByEmail(account.email))))).toEqual(account)
        expect(Option.isNone(await run(AccountRepository.use((r) => r.findByEmail(`nobody-${uid("x")}@example.test`))))).toBe(true)
      })
      it("should refuse an account whose id or email is stored already as Unavailable, keeping the stored one", async () => {
        const { account } = makeWorld()
        await run(AccountRepository.use((r) => r.insert(account)))
        expect(await failure(AccountRepository.use((r) => r.insert({ ...account, name: "Intruder", password_hash: "other" })))).toBe("Unavailable")
        expect(await failure(AccountRepository.use((r) => r.insert({ ...account, id: uid("acc"), name: "Intruder" })))).toBe("Unavailable")
        expect(await run(AccountRepository.use((r) => r.get(account.id)))).toEqual(account)
        expect(Option.getOrNull(await run(AccountRepository.use((r) => r.findByEmail(account.email))))).toEqual(account)
      })
      it("should say whether any account exists", async () => {
        await run(AccountRepository.use((r) => r.insert(makeWorld().account)))
        expect(await run(AccountRepository.use((r) => r.hasAny))).toBe(true)
      })
      it("should answer NotFound for an unknown account", async () => {
        expect(await failure(AccountRepository.use((r) => r.get(uid("acc"))))).toBe("NotFound")
      })
    })

    describe("API keys", () => {
      const key = (accountId: string, created_at: string) => ({
        id: uid("key"),
        account_id: accountId,
        name: "ci",
        scope: "write" as const,
        key_hash: uid("hash"),
        created_at: T(created_at),
        last_used_at: null,
        revoked_at: null,
      })
      it("should find a key by its hash and list the account's keys newest first", async () => {
        const { accountId } = await seed()
        const older = key(accountId, "2026-11-01T00:00:00Z")
        const newer = key(accountId, "2026-11-02T00:00:00Z")
        await run(ApiKeyRepository.use((r) => r.insert(older)))
        await run(ApiKeyRepository.use((r) => r.insert(newer)))
        expect(Option.getOrNull(await run(ApiKeyRepository.use((r) => r.findByHash(older.key_hash))))).toEqual(older)
        expect(Option.isNone(await run(ApiKeyRepository.use((r) => r.findByHash(uid("hash")))))).toBe(true)
        expect((await run(ApiKeyRepository.use((r) => r.list(accountId)))).map((k) => k.id)).toEqual([newer.id, older.id])
      })
      it("should refuse a key whose id or hash is stored already as Unavailable, keeping the stored one", async () => {
        const { accountId } = await seed()
        const other = await seed()
        const k = key(accountId, "2026-11-01T00:00:00Z")
        await run(ApiKeyRepository.use((r) => r.insert(k)))
        expect(await failure(ApiKeyRepository.use((r) => r.insert({ ...key(other.accountId, "2026-11-02T00:00:00Z"), id: k.id })))).toBe("Unavailable")
        expect(await failure(ApiKeyRepository.use((r) => r.insert({ ...key(other.accountId, "2026-11-02T00:00:00Z"), key_hash: k.key_hash })))).toBe("Unavailable")
        expect(Option.getOrNull(await run(ApiKeyRepository.use((r) => r.findByHash(k.key_hash))))).toEqual(k)
        expect(await run(ApiKeyRepository.use((r) => r.list(accountId)))).toEqual([k])
        expect(await run(ApiKeyRepository.use((r) => r.list(other.accountId)))).toEqual([])
      })
      it("should list keys created at the same instant by id", async () => {
        const { accountId } = await seed()
        const p = uid("key")
        const same = [`${p}_b`, `${p}_c`, `${p}_a`].map((id) => ({ ...key(accountId, "2026-11-01T00:00:00Z"), id }))
        for (const k of same) await run(ApiKeyRepository.use((r) => r.insert(k)))
        expect((await run(ApiKeyRepository.use((r) => r.list(accountId)))).map((k) => k.id)).toEqual([`${p}_a`, `${p}_b`, `${p}_c`])
      })
      it("should revoke a key once, keep the first revocation time and refuse another account's key", async () => {
        const { accountId } = await seed()
        const other = await seed()
        const k = key(accountId, "2026-11-01T00:00:00Z")
        await run(ApiKeyRepository.use((r) => r.insert(k)))
        expect(await failure(ApiKeyRepository.use((r) => r.revoke(other.accountId, k.id, T("2026-11-03T00:00:00Z"))))).toBe("NotFound")
        await run(ApiKeyRepository.use((r) => r.revoke(accountId, k.id, T("2026-11-03T00:00:00Z"))))
        await run(ApiKeyRepository.use((r) => r.revoke(accountId, k.id, T("2026-11-04T00:00:00Z"))))
        const found = Option.getOrThrow(await run(ApiKeyRepository.use((r) => r.findByHash(k.key_hash))))
        expect(found.revoked_at).toBe(T("2026-11-03T00:00:00Z"))
        expect(await failure(ApiKeyRepository.use((r) => r.revoke(accountId, uid("key"), T("2026-11-03T00:00:00Z"))))).toBe("NotFound")
      })
      it("should revoke a key once of two revocations at once, the other told it was revoked already at the first's time", async () => {
        const { accountId } = await seed()
        const k = key(accountId, "2026-11-01T00:00:00Z")
        await run(ApiKeyRepository.use((r) => r.insert(k)))
        const times = [T("2026-11-03T00:00:00Z"), T("2026-11-04T00:00:00Z")]
        const answers = await Promise.all(times.map((at) => run(ApiKeyRepository.use((r) => r.revoke(accountId, k.id, at)))))
        // (either may come first; the one that revoked it set its time, the other read it)
        expect(answers.map((a) => a.already).sort()).toEqual([false, true])
        const first = times[answers.findIndex((a) => !a.already)]!
        expect(answers.map((a) => a.revokedAt)).toEqual([first, first])
        const found = Option.getOrThrow(await run(ApiKeyRepository.use((r) => r.findByHash(k.key_hash))))
        expect(found.revoked_at).toBe(first)
        expect(await run(ApiKeyRepository.use((r) => r.revoke(accountId, k.id, T("2026-11-05T00:00:00Z"))))).toEqual({ revokedAt: first, already: true })
      })
      it("should record the last use of a key", async () => {
        const { accountId } = await seed()
        const k = key(accountId, "2026-11-01T00:00:00Z")
        await run(ApiKeyRepository.use((r) => r.insert(k)))
        await run(ApiKeyRepository.use((r) => r.touch(k.id, T("2026-11-05T06:07:08.009Z"))))
        expect(Option.getOrThrow(await run(ApiKeyRepository.use((r) => r.findByHash(k.key_hash)))).last_used_at).toBe("2026-11-05T06:07:08.009Z")
      })
    })

    describe("sites", () => {
      it("should list the account's sites by name then id with counts and totals", async () => {
        const { accountId, sites, main, articles, backlinks } = await seed()
        const all = await run(SiteRepository.use((r) => r.list(accountId, { offset: 0, limit: 10 })))
        const expected = [...sites].sort((a, b) => (a.name !== b.name ? (a.name < b.name ? -1 : 1) : a.id < b.id ? -1 : 1))
        expect(all.total).toBe(3)
        expect(all.items.map((s) => s.id)).toEqual(expected.map((s) => s.id))
        const mainView = all.items.find((s) => s.id === main.id)!
        expect(mainView).toEqual({
          id: main.id,
          name: main.name,
          url: main.url,
          created_at: main.created_at,
          article_count: articles.length,
          backlink_count: backlinks.length,
        })
        expect(all.items.find((s) => s.id !== main.id)!.article_count).toBe(0)
        const page = await run(SiteRepository.use((r) => r.list(accountId, { offset: 1, limit: 1 })))
        expect(page.total).toBe(3)
        expect(page.items.map((s) => s.id)).toEqual([expected[1]!.id])
        const pastTheEnd = await run(SiteRepository.use((r) => r.list(accountId, { offset: 10, limit: 5 })))
        expect(pastTheEnd).toEqual({ items: [], total: 3 })
      })
      it("should sort site names by code point, a character past U+FFFF after one below it", async () => {
        const world = makeWorld()
        // U+1F331 is written in UTF-16 with surrogates (U+D83C...), which sort before U+FF21
        const names = ["\u{1F331} Garden", "\uFF21 Wide", "Zebra"]
        const sites = world.sites.map((s, i) => ({ ...s, name: names[i]! }))
        await run(DataImporter.use((i) => i.apply({ ...world.plan, sites })))
        const listed = await run(SiteRepository.use((r) => r.list(world.accountId, { offset: 0, limit: 10 })))
        expect(listed.items.map((s) => s.name)).toEqual(["Zebra", "\uFF21 Wide", "\u{1F331} Garden"])
      })
      it("should treat another account's site as NotFound", async () => {
        const { accountId, main } = await seed()
        const other = await seed()
        expect((await run(SiteRepository.use((r) => r.get(accountId, main.id)))).id).toBe(main.id)
        expect(await failure(SiteRepository.use((r) => r.get(other.accountId, main.id)))).toBe("NotFound")
        expect(await failure(SiteRepository.use((r) => r.get(accountId, uid("site"))))).toBe("NotFound")
        await run(SiteRepository.use((r) => r.require(accountId, main.id)))
        expect(await failure(SiteRepository.use((r) => r.require(other.accountId, main.id)))).toBe("NotFound")
        expect(await failure(SiteRepository.use((r) => r.require(accountId, uid("site"))))).toBe("NotFound")
      })
    })

    describe("articles", () => {
      it("should answer reads made side by side each with its own article, another account's as NotFound", async () => {
        const { accountId, articles } = await seed()
        const other = await seed()
        const asks: ReadonlyArray<readonly [string, string]> = [
          [accountId, articles[0]!.id],
          [other.accountId, other.articles[0]!.id],
          [accountId, articles[1]!.id],
          [accountId, uid("art")],
          [accountId, articles[0]!.id],
          [accountId, other.articles[0]!.id],
        ]
        const reads = asks.map(([account, id]) => Effect.exit(ArticleRepository.use((r) => r.get(account, id))))
        const exits = await runtime.runPromise(Effect.all(reads, { concurrency: "unbounded" }))
        const outcome = exits.map((e) => (e._tag === "Success" ? e.value.id : "NotFound"))
        expect(outcome).toEqual([articles[0]!.id, other.articles[0]!.id, articles[1]!.id, "NotFound", articles[0]!.id, "NotFound"])
        const first = exits[0]!
        expect(first._tag === "Success" && first.value).toEqual(articles[0])
      })
      it("should order articles by published_at descending, unpublished last, then id ascending", async () => {
        const { accountId, main, articles } = await seed()
        const res = await run(ArticleRepository.use((r) => r.list(accountId, { siteId: main.id }, undefined)))
        const [b, a, c, d, e] = articles.map((x) => x.id)
        expect(res.items.map((x) => x.id)).toEqual([a, b, c, e, d])
        expect(res.total).toBe(5)
        const { body: _, ...summary } = articles[4]!
        expect(res.items.find((x) => x.id === articles[4]!.id)).toEqual(summary)
      })
      it("should filter by an inclusive published_at range and by status", async () => {
        const { accountId, main, articles } = await seed()
        const ids = (r: { items: ReadonlyArray<{ id: string }> }) => r.items.map((x) => x.id)
        const inclusive = await run(
          ArticleRepository.use((r) =>
            r.list(accountId, { siteId: main.id, from: T("2026-10-15T09:00:00Z"), to: T("2026-11-03T09:00:00Z") }, undefined),
          ),
        )
        expect(ids(inclusive)).toEqual([articles[1]!.id, articles[0]!.id, articles[2]!.id])
        const from = await run(ArticleRepository.use((r) => r.list(accountId, { siteId: main.id, from: T("2026-10-01T00:00:00Z") }, undefined)))
        expect(from.total).toBe(3)
        const to = await run(ArticleRepository.use((r) => r.list(accountId, { siteId: main.id, to: T("2026-09-30T23:59:59.999Z") }, undefined)))
        expect(ids(to)).toEqual([articles[4]!.id])
        const drafts = await run(ArticleRepository.use((r) => r.list(accountId, { siteId: main.id, status: "draft" }, undefined)))
        expect(ids(drafts)).toEqual([articles[3]!.id])
      })
      it("should count and list the ranges at the ends of the calendar, 0001-01-01 to 9999-12-31 UTC", async () => {
        const { accountId, main, articles } = await seed()
        const list = (filter: { from?: string; to?: string }) => run(ArticleRepository.use((r) => r.list(accountId, { siteId: main.id, ...filter }, { offset: 0, limit: 10 })))
        const dated = articles.filter((a) => a.published_at !== null).length
        for (const filter of [{ from: FIRST_INSTANT }, { to: LAST_INSTANT }, { from: FIRST_INSTANT, to: LAST_INSTANT }]) {
          const res = await list(filter)
          expect(res.items, JSON.stringify(filter)).toHaveLength(dated)
          expect(res.total, JSON.stringify(filter)).toBe(dated)
        }
        expect(await list({ from: LAST_INSTANT })).toEqual({ items: [], total: 0 })
        expect(await list({ to: FIRST_INSTANT })).toEqual({ items: [], total: 0 })
      })
      it("should page articles and report the total of all that matched", async () => {
        const { accountId, main, articles } = await seed()
        const res = await run(ArticleRepository.use((r) => r.list(accountId, { siteId: main.id }, { offset: 2, limit: 2 })))
        expect(res.total).toBe(articles.length)
        expect(res.items.map((x) => x.id)).toEqual([articles[2]!.id, articles[4]!.id])
        const past = await run(ArticleRepository.use((r) => r.list(accountId, { siteId: main.id }, { offset: 10, limit: 2 })))
        expect(past).toEqual({ items: [], total: articles.length })
      })
      it("should hide another account's articles", async () => {
        const { accountId, main, articles } = await seed()
        const other = await seed()
        expect(await run(ArticleRepository.use((r) => r.get(accountId, articles[0]!.id)))).toEqual(articles[0])
        expect(await failure(ArticleRepository.use((r) => r.get(other.accountId, articles[0]!.id)))).toBe("NotFound")
        expect((await run(ArticleRepository.use((r) => r.list(other.accountId, { siteId: main.id }, undefined)))).total).toBe(0)
      })
    })

    describe("search", () => {
      /** An account whose main site holds articles with the given texts (and one article in another site). */
      const seedTexts = async (texts: ReadonlyArray<{ title: string; body: string; keyword?: string; published_at?: string | null; status?: ArticleRecord["status"] }>) => {
        const world = makeWorld()
        const p = uid("s")
        const articles = texts.map((t, i): ArticleRecord => ({
          ...world.articles[0]!,
          id: `${p}_${String.fromCharCode(97 + i)}`,
          title: t.title,
          body: t.body,
          target_keyword: t.keyword ?? "",
          status: t.status ?? "published",
          published_at: t.published_at === undefined ? T("2026-11-03T09:00:00Z") : t.published_at === null ? null : T(t.published_at),
        }))
        const plan: ImportPlan = {
          ...world.plan,
          articles: articles.map((a) => ({
            article: a,
            firstRevision: { ...world.plan.articles[0]!.firstRevision, id: `rev_${a.id}_1`, article_id: a.id, title: a.title, body: a.body },
          })),
        }
        await run(DataImporter.use((i) => i.apply(plan)))
        return { ...world, articles }
      }
      const search = (accountId: string, query: string, extra: Partial<ArticleSearchFilter> = {}, slice: { offset: number; limit: number } | undefined = { offset: 0, limit: 20 }) =>
        run(ArticleRepository.use((r) => r.search(accountId, { query, headlines: true, ...extra }, slice)))
      const ids = (res: { items: ReadonlyArray<{ id: string }> }) => res.items.map((x) => x.id)

      it("should rank a title match above body-only ones, ignore case and accents, and break ties by published_at then id", async () => {
        const { accountId, articles: a } = await seedTexts([
          { title: "Pruning roses", body: "<p>Tomato blight tomato blight tomato blight spreads in damp weather.</p>", published_at: "2026-11-05T00:00:00Z" },
          { title: "Tomato BLIGHT explained", body: "<p>What to do first.</p>", published_at: "2026-10-01T00:00:00Z" },
          { title: "Other", body: "<p>Late tomato blight.</p>", published_at: "2026-11-01T00:00:00Z" },
          { title: "Other", body: "<p>Late tomato blight.</p>", published_at: "2026-11-01T00:00:00Z" },
          { title: "Crème brûlée", body: "<p>A CAFÉ classic</p>" },
        ])
        const res = await search(accountId, "tomato blight")
        expect(res.total).toBe(4)
        expect(ids(res)[0]).toBe(a[1]!.id)
        // the two identical ones: same rank, same date, by id
        expect(ids(res).indexOf(a[2]!.id)).toBe(ids(res).indexOf(a[3]!.id) - 1)
        expect(ids(await search(accountId, "creme brulee"))).toEqual([a[4]!.id])
        expect(ids(await search(accountId, "cafe"))).toEqual([a[4]!.id])
        expect(ids(await search(accountId, "CAFÉ"))).toEqual([a[4]!.id])
        expect(res.items.every((hit) => !("body" in hit))).toBe(true)
        // the title tier holds for phrases and negations too; quotes and backslashes in a query are words like any
        expect(ids(await search(accountId, '"tomato blight" -roses'))[0]).toBe(a[1]!.id)
        expect(ids(await search(accountId, '"tomato blight" -roses')).includes(a[0]!.id)).toBe(false)
        expect((await search(accountId, "it's a \\ 'quoted' \"word")).total).toBe(0)
      })

      it("should rank a title holding any one of the query's terms above a match in the body alone, however often the body holds them", async () => {
        const { accountId, articles: a } = await seedTexts([
          { title: "Blight in the garden", body: "<p>Blight is a tomato disease.</p>", published_at: "2026-10-01T00:00:00Z" },
          { title: "Notes", body: `<p>${"Tomato blight. ".repeat(40)}</p>`, published_at: "2026-11-05T00:00:00Z" },
          { title: "Chutney", body: "<p>green tomato and more tomato blight</p>", keyword: "tomato blight", published_at: "2026-11-06T00:00:00Z" },
          { title: "Roses and tomato", body: "<p>no disease here</p>", published_at: "2026-11-07T00:00:00Z" },
        ])
        // a[0] holds "blight" in its title, a[1] and a[2] only in their bodies (and a[2] its keyword); a[3] does not match
        const res = await search(accountId, "tomato blight")
        expect(res.total).toBe(3)
        expect(ids(res)[0]).toBe(a[0]!.id)
        // any group of an OR, written in any case; a negated word is not a term a title can hold
        expect(ids(await search(accountId, "chutney or notes"))).toEqual([a[2]!.id, a[1]!.id])
        expect(ids(await search(accountId, "tomato -garden"))[0]).toBe(a[3]!.id)
        expect(ids(await search(accountId, "blight -roses"))[0]).toBe(a[0]!.id)
      })

      it("should read web-search syntax: a phrase, OR, -word", async () => {
        const { accountId, articles: a } = await seedTexts([
          { title: "One", body: "<p>green tomato chutney</p>" },
          { title: "Two", body: "<p>tomato green salad</p>" },
          { title: "Three", body: "<p>basil pesto</p>" },
        ])
        expect(ids(await search(accountId, '"green tomato"'))).toEqual([a[0]!.id])
        expect(new Set(ids(await search(accountId, "green tomato")))).toEqual(new Set([a[0]!.id, a[1]!.id]))
        expect(new Set(ids(await search(accountId, "chutney OR pesto")))).toEqual(new Set([a[0]!.id, a[2]!.id]))
        expect(ids(await search(accountId, "tomato -salad"))).toEqual([a[0]!.id])
        expect((await search(accountId, "nowhere")).total).toBe(0)
      })

      it("should read OR, - and operator characters as PostgreSQL's websearch_to_tsquery does, on every adapter", async () => {
        const { accountId, articles: a } = await seedTexts([
          { title: "One", body: "<p>roses or tulips</p>" },
          { title: "Two", body: "<p>roses only</p>" },
          { title: "Three", body: "<p>tulips only</p>" },
        ])
        const found = async (q: string) => [q, new Set(ids(await search(accountId, q)))]
        const of = (q: string, ...n: Array<number>) => [q, new Set(n.map((i) => a[i]!.id))]
        // OR before any operand, or with nothing after it, is the word "or"
        expect(await found("OR roses")).toEqual(of("OR roses", 0))
        expect(await found("roses OR")).toEqual(of("roses OR", 0))
        expect(await found("roses OR OR tulips")).toEqual(of("roses OR OR tulips", 0, 1))
        expect(await found("roses OR tulips")).toEqual(of("roses OR tulips", 0, 1, 2))
        // a lone - negates the next word; two undo each other
        expect(await found("- roses")).toEqual(of("- roses", 2))
        expect(await found("roses - tulips")).toEqual(of("roses - tulips", 1))
        expect(await found("--roses")).toEqual(of("--roses", 0, 1))
        // an operator character parts two words that must both be there
        expect(await found("roses!tulips")).toEqual(of("roses!tulips", 0))
        // space is ASCII space: with no-break spaces the query is one word, a phrase of its words
        expect(await found("roses\u00a0OR\u00a0tulips")).toEqual(of("roses\u00a0OR\u00a0tulips", 0))
      })

      it("should find what PostgreSQL finds for 240 web-search queries of words, OR, -, quotes and operator characters", async () => {
        const { accountId, articles: a } = await seedTexts(WEBSEARCH_CORPUS.map((text) => ({ title: "Entry", body: `<p>${text}</p>` })))
        const wrong: Array<unknown> = []
        for (const [query, expected] of WEBSEARCH_CASES) {
          const found = ids(await search(accountId, query))
            .map((id) => a.findIndex((x) => x.id === id))
            .sort((x, y) => x - y)
          if (JSON.stringify(found) !== JSON.stringify(expected)) wrong.push({ query, found, expected })
        }
        expect(wrong).toEqual([])
      })

      it("should answer a query without a positive term (only negations, an empty phrase, a lone OR or -) rather than fail", async () => {
        const { accountId, articles: a } = await seedTexts([
          { title: "One", body: "<p>green tomato chutney</p>" },
          { title: "Two", body: "<p>tomato green salad</p>" },
          { title: "Three", body: "<p>basil pesto</p>" },
        ])
        const negated = await search(accountId, "-salad")
        expect(new Set(ids(negated))).toEqual(new Set([a[0]!.id, a[2]!.id]))
        expect(negated.total).toBe(2)
        for (const q of ['"', '""', "OR", "OR OR", "-", "--"]) expect([q, (await search(accountId, q)).total]).toEqual([q, 0])
      })

      it("should search text, not tags or attribute values, decode entities, and mark matches in the headline", async () => {
        const { accountId, articles: a } = await seedTexts([
          { title: "Fish", body: '<p class="hiddenclass">Fish &amp; chips &lt;b&gt; by the <a href="https://secretdomain.test/">sea</a> today.</p>' },
        ])
        expect((await search(accountId, "hiddenclass")).total).toBe(0)
        expect((await search(accountId, "secretdomain")).total).toBe(0)
        const hit = (await search(accountId, "chips"))
        expect(ids(hit)).toEqual([a[0]!.id])
        const snippet = snippetOf(hit.items[0]!.headline)
        expect(snippet).toContain("<mark>chips</mark>")
        expect(snippet).toContain("Fish &amp; <mark>chips</mark>")
        expect(snippet).not.toMatch(/<(?!\/?mark>)/)
        expect((await search(accountId, "chips", { headlines: false })).items[0]!.headline).toBe("")
      })

      it("should give a snippet that shows a match and marks no word the query excludes", async () => {
        const long = "x".repeat(40)
        const { accountId, articles: a } = await seedTexts([
          { title: "Roses", body: "<p>Roses and tulips grow here.</p>" },
          { title: "Lead", body: `<p>${Array.from({ length: 12 }, () => long).join(" ")} then tulips bloom.</p>` },
        ])
        const excluded = await search(accountId, "roses -lilies")
        expect(ids(excluded)).toEqual([a[0]!.id])
        // (PostgreSQL's ts_headline marks a negated word of the query as well)
        const withNegation = await search(accountId, "grow -lilies OR roses -tulips")
        expect(snippetOf(matchedMarksOnly(withNegation.items[0]!.headline, "grow -lilies OR roses -tulips"))).not.toContain("<mark>tulips</mark>")
        const lead = snippetOf(matchedMarksOnly((await search(accountId, "bloom")).items[0]!.headline, "bloom"))
        expect(lead).toContain("<mark>bloom</mark>")
        expect(lead.indexOf("<mark>")).toBeLessThanOrEqual(SNIPPET_LEAD_CHARACTERS)
      })

      it("should mark a body's headline within its first HEADLINE_HTML_CHARACTERS characters only, on every adapter", async () => {
        // a 1 MiB body whose only match is past the headline's characters is found (the searched
        // text is longer) but its headline marks nothing: it read no further than the bound
        const filler = "<p>" + "lorem ".repeat(Math.ceil(HEADLINE_HTML_CHARACTERS / 6)) + "</p>"
        const late = filler + "<p>quokka</p>" + "<p>" + "ipsum ".repeat(150_000) + "</p>"
        const early = "<p>quokka first</p>" + filler + "<p>" + "ipsum ".repeat(150_000) + "</p>"
        const { accountId, articles: a } = await seedTexts([
          { title: "Late", body: late },
          { title: "Early", body: early },
        ])
        const res = await search(accountId, "quokka")
        expect(new Set(ids(res))).toEqual(new Set([a[0]!.id, a[1]!.id]))
        const headlineOf = (id: string) => res.items.find((x) => x.id === id)!.headline
        expect(headlineOf(a[0]!.id)).not.toContain(SEARCH_MARK_START)
        expect(headlineOf(a[1]!.id)).toContain(`${SEARCH_MARK_START}quokka${SEARCH_MARK_STOP}`)
        expect(snippetOf(snippetHeadline(res.items.find((x) => x.id === a[0]!.id)!, "quokka"))).toMatch(/^lorem lorem/)
      })

      it("should fold ligatures, full-width letters and Roman numerals as PostgreSQL's unaccent does, on every adapter", async () => {
        const { accountId, articles: a } = await seedTexts([
          { title: "Chapter Ⅻ", body: "<p>Scientiﬁc ＴＯＭＡＴＯ notes from ǅemal</p>" },
          { title: "Plain", body: "<p>scientific tomato</p>" },
        ])
        for (const q of ["scientific", "scientiﬁc", "tomato", "ＴＯＭＡＴＯ"]) expect([q, new Set(ids(await search(accountId, q)))]).toEqual([q, new Set([a[0]!.id, a[1]!.id])])
        for (const q of ["xii", "Ⅻ", "dzemal"]) expect([q, ids(await search(accountId, q))]).toEqual([q, [a[0]!.id]])
      })

      it("should fold the letters unaccent writes as others (ð, ı, ħ, ŋ, small capitals) and each capital by itself (ΣΑΣ), on every adapter", async () => {
        const { accountId, articles: a } = await seedTexts([
          { title: "Notes", body: "<p>Guðrún wore a Kırmızı coat in Ħamrun, ŊATO ᴄᴀᴘs; ΣΑΣ</p>" },
          { title: "Plain", body: "<p>gudrun kirmizi hamrun nato caps σασ</p>" },
        ])
        for (const q of ["gudrun", "Guðrún", "kirmizi", "KIRMIZI", "Kırmızı", "hamrun", "ħamrun", "nato", "caps", "σασ", "ΣΑΣ"]) {
          expect([q, new Set(ids(await search(accountId, q)))]).toEqual([q, new Set([a[0]!.id, a[1]!.id])])
        }
        expect((await search(accountId, "σας")).total).toBe(0)
        expect(snippetOf(matchedMarksOnly((await search(accountId, "kirmizi -gudrun OR ΣΑΣ")).items[0]!.headline, "kirmizi -gudrun OR ΣΑΣ"))).toContain("<mark>ΣΑΣ</mark>")
      })

      it("should read a word holding soft hyphens (pomo&shy;doro) as the word a reader sees, in a body, a title and a keyword, on every adapter", async () => {
        const { accountId, articles: a } = await seedTexts([
          { title: "Pesto", body: "<p>A pomo\u00addoro sauce</p>", keyword: "bas\u00adil" },
          { title: "Ve\u00adgetables", body: "<p>Beans</p>" },
        ])
        for (const q of ["pomodoro", "pomo\u00addoro", "basil", "sauce pomodoro"]) expect([q, ids(await search(accountId, q))]).toEqual([q, [a[0]!.id]])
        expect(ids(await search(accountId, "vegetables beans"))).toEqual([a[1]!.id])
        for (const q of ["pomo", "doro", "bas", "getables"]) expect([q, (await search(accountId, q)).total]).toEqual([q, 0])
        expect(snippetOf((await search(accountId, "pomodoro")).items[0]!.headline)).toBe("A <mark>pomodoro</mark> sauce")
      })

      it("should ignore accents, ligatures and Roman numerals in a word of letters and digits too (Crème2, Étape3)", async () => {
        const { accountId, articles: a } = await seedTexts([
          { title: "Étape3 du menu", body: "<p>Crème2 then ﬁ2 and Ⅻ2</p>", keyword: "Café4b" },
          { title: "Plain", body: "<p>creme etape cafe</p>" },
        ])
        for (const q of ["etape3", "ÉTAPE3", "creme2", "Crème2", "fi2", "xii2", "cafe4b"]) expect([q, ids(await search(accountId, q))]).toEqual([q, [a[0]!.id]])
        expect(snippetOf((await search(accountId, "creme2")).items[0]!.headline)).toContain("<mark>Crème2</mark>")
      })

      it("should read superscripts, subscripts, fractions and circled digits as PostgreSQL's parser does: not parts of words", async () => {
        const { accountId, articles: a } = await seedTexts([
          { title: "Squares x² and halves ½", body: "<p>H₂O is water, step ① first</p>" },
          { title: "Numbers x2 and H2O", body: "<p>2 and 1</p>" },
        ])
        expect(ids(await search(accountId, "x"))).toEqual([a[0]!.id])
        expect(ids(await search(accountId, "x2"))).toEqual([a[1]!.id])
        expect(ids(await search(accountId, "h2o"))).toEqual([a[1]!.id])
        expect(ids(await search(accountId, "2"))).toEqual([a[1]!.id])
        expect(ids(await search(accountId, "1"))).toEqual([a[1]!.id])
        expect(ids(await search(accountId, "h water"))).toEqual([a[0]!.id])
        expect(await search(accountId, "½")).toEqual({ items: [], total: 0 })
      })

      it("should search words written in text as entities (&nbsp;, R&D;) by their letters, and show them in the snippet", async () => {
        const { accountId, articles: a } = await seedTexts([{ title: "Entities", body: "<p>Write &amp;nbsp; for a space; our R&amp;D; team</p>" }])
        for (const q of ["nbsp", "d"]) expect([q, ids(await search(accountId, q))]).toEqual([q, [a[0]!.id]])
        expect(snippetOf(matchedMarksOnly((await search(accountId, "nbsp")).items[0]!.headline, "nbsp"))).toBe("Write &amp;<mark>nbsp</mark>; for a space; our R&amp;D; team")
      })

      it("should read words as a person does: joined across inline tags, parted by blocks and cells, and text that looks like a tag is text", async () => {
        const { accountId, articles: a } = await seedTexts([
          { title: "Odd words", body: "<p>An <strong>un</strong>believable <em>Hydro</em>ponics setup.</p><table><tr><td>cellone</td><td>celltwo</td></tr></table><p>Tag &lt;numbat&gt; text.</p>" },
          { title: "Using the <details> element", body: "<p>x</p>", keyword: "<kbd> keys" },
        ])
        for (const q of ["unbelievable", "hydroponics", "cellone", "celltwo", "numbat"]) expect([q, ids(await search(accountId, q))]).toEqual([q, [a[0]!.id]])
        // a title's and a keyword's text such as <details> is searched by its words too
        for (const q of ["details", "kbd", "<details>", '"the <details> element"']) expect([q, ids(await search(accountId, q))]).toEqual([q, [a[1]!.id]])
        // the parts of a word joined across a tag are not words of their own
        expect((await search(accountId, "ponics")).total).toBe(0)
        const snippet = snippetOf((await search(accountId, "numbat")).items[0]!.headline)
        expect(snippet).toContain("Tag &lt;<mark>numbat</mark>&gt; text.")
      })

      it("should find each word of an address, a path, a file name, an email, a version, a number and a hyphenated word by itself", async () => {
        const { accountId, articles: a } = await seedTexts([
          {
            title: "Notes",
            body: "<p>See example.com/path/to and https://docs.example.org/guide?x=1. Close it with &lt;/script&gt; in node.js, version 2.0, at -5 degrees; mail jane.doe@example.com about co-operation, a well-known author.</p>",
          },
          { title: "Node.js tips", body: "<p>x</p>", keyword: "v3.1 release" },
        ])
        for (const q of ["path", "script", "2", "0", "5", "jane", "doe", "co", "operation", "co-operation", "guide", "docs", "example.com", '"example.com/path/to"', "2.0", '"a well"', '"a well known"', "well-known"]) {
          expect([q, ids(await search(accountId, q))]).toEqual([q, [a[0]!.id]])
        }
        // in a title and a keyword too, the title match first
        for (const q of ["node", "js", "node.js", '"node js"']) expect([q, ids(await search(accountId, q))]).toEqual([q, [a[1]!.id, a[0]!.id]])
        for (const q of ["v3", "v3.1"]) expect([q, ids(await search(accountId, q))]).toEqual([q, [a[1]!.id]])
        // the parts are words, not any letters: a word is not found inside another
        expect((await search(accountId, "pathto")).total).toBe(0)
        expect((await search(accountId, "cript")).total).toBe(0)
        // negation and phrases read as written
        expect(ids(await search(accountId, "node -example.com"))).toEqual([a[1]!.id])
        expect(ids(await search(accountId, '-"node.js" co'))).toEqual([])
        // the snippet shows the text as written, its matches marked
        const script = snippetOf((await search(accountId, "script")).items[0]!.headline)
        expect(script).toContain("<mark>script</mark>&gt; in node.js, version 2.0")
        expect(script).not.toContain("\u200b")
        const path = snippetOf(matchedMarksOnly((await search(accountId, "example.com/path")).items[0]!.headline, "example.com/path"))
        expect(path).toContain("<mark>example</mark>.<mark>com</mark>/<mark>path</mark>/to and https://docs.example.org/guide?x=1.")
        expect(path).not.toContain("\u200b")
      })

      it("should filter by site, status and publication range, page with the total, and hide other accounts", async () => {
        const { accountId, main, sites, articles: a } = await seedTexts([
          { title: "Compost one", body: "<p>x</p>", published_at: "2026-11-03T00:00:00Z" },
          { title: "Compost two", body: "<p>x</p>", published_at: "2026-10-03T00:00:00Z" },
          { title: "Compost three", body: "<p>x</p>", published_at: null, status: "draft" },
        ])
        const other = await seed()
        expect((await search(accountId, "compost")).total).toBe(3)
        expect(ids(await search(accountId, "compost", { status: "draft" }))).toEqual([a[2]!.id])
        expect(ids(await search(accountId, "compost", { from: T("2026-11-01T00:00:00Z") }))).toEqual([a[0]!.id])
        expect((await search(accountId, "compost", { siteId: main.id })).total).toBe(3)
        expect((await search(accountId, "compost", { siteId: sites.find((s) => s.id !== main.id)!.id })).total).toBe(0)
        const page = await search(accountId, "compost", {}, { offset: 1, limit: 1 })
        expect(page.total).toBe(3)
        expect(ids(page)).toEqual([a[1]!.id])
        expect(await search(accountId, "compost", {}, { offset: 10, limit: 5 })).toEqual({ items: [], total: 3 })
        expect((await search(other.accountId, "compost")).total).toBe(0)
      })

      it("should give every page as the same slice of one order, title tier first, with the exact total on each page", async () => {
        const { accountId, articles: a } = await seedTexts([
          { title: "Mulch one", body: "<p>x</p>", published_at: "2026-11-01T00:00:00Z" },
          { title: "Mulch two", body: "<p>x</p>", published_at: "2026-11-03T00:00:00Z" },
          { title: "Mulch three", body: "<p>bark</p>", published_at: "2026-11-04T00:00:00Z" },
          { title: "Beds", body: "<p>mulch</p>", published_at: "2026-11-05T00:00:00Z" },
          { title: "Paths", body: "<p>mulch and bark</p>", published_at: "2026-11-02T00:00:00Z" },
          { title: "Borders", body: "<p>mulch</p>", published_at: null, status: "draft" },
          { title: "Roses", body: "<p>roses</p>", published_at: "2026-11-06T00:00:00Z" },
        ])
        const all = await search(accountId, "mulch")
        // titles (same rank) newest first, then the body-only ones newest first, undated last
        expect(ids(all)).toEqual([a[2]!.id, a[1]!.id, a[0]!.id, a[3]!.id, a[4]!.id, a[5]!.id])
        expect(all.total).toBe(6)
        // pages inside the title tier, across the tiers, inside the body tier and past the end: 3 limits × 8 offsets
        for (const limit of [1, 2, 3]) {
          for (let offset = 0; offset < 8; offset++) {
            const page = await search(accountId, "mulch", {}, { offset, limit })
            expect({ offset, limit, ids: ids(page), total: page.total }).toEqual({ offset, limit, ids: ids(all).slice(offset, offset + limit), total: 6 })
          }
        }
        // a title match whose body holds a negated word is no match at all, in either tier
        const negated = await search(accountId, "mulch -bark", {}, { offset: 0, limit: 1 })
        expect(ids(negated)).toEqual([a[1]!.id])
        expect(negated.total).toBe(4)
        expect(ids(await search(accountId, "mulch -bark"))).toEqual([a[1]!.id, a[0]!.id, a[3]!.id, a[5]!.id])
        // without a slice, every match in order
        expect(ids(await search(accountId, "mulch", {}, undefined))).toEqual(ids(all))
      })

      it("should complete article ids and title prefixes, ids first, wildcards literal, the account's own only", async () => {
        const { accountId, main, articles: a } = await seedTexts([
          { title: "Roses in pots", body: "<p>x</p>" },
          { title: "rosemary cuttings", body: "<p>x</p>" },
          { title: "100% organic", body: "<p>x</p>" },
          { title: "Lawns", body: "<p>x</p>" },
        ])
        const other = await seed()
        const complete = (who: string, prefix: string, limit = 10, siteId?: string) =>
          run(ArticleRepository.use((r) => r.complete(who, prefix, limit, siteId)))
        expect((await complete(accountId, "ROS")).map((x) => x.id)).toEqual([a[0]!.id, a[1]!.id])
        expect((await complete(accountId, a[3]!.id)).map((x) => x.id)).toEqual([a[3]!.id])
        // an id prefix comes before title prefixes, the id matches in id order
        const byId = await complete(accountId, a[0]!.id.slice(0, -1))
        expect(byId.map((x) => x.id).slice(0, 4)).toEqual(a.map((x) => x.id).sort())
        expect((await complete(accountId, "100%")).map((x) => x.title)).toEqual(["100% organic"])
        expect(await complete(accountId, "_")).toEqual([])
        expect(await complete(accountId, "%")).toEqual([])
        expect(await complete(accountId, "", 2)).toHaveLength(2)
        expect(await complete(accountId, "ros", 10, uid("site"))).toEqual([])
        expect((await complete(accountId, "ros", 10, main.id)).length).toBe(2)
        expect(await complete(other.accountId, "Ros")).toEqual([])
      })

      it("should complete titles ignoring case as PostgreSQL's lower() does, letter by letter (İ is i, a final Σ is σ)", async () => {
        const { accountId } = await seedTexts([
          { title: "İstanbul gardens", body: "<p>x</p>" },
          { title: "ΟΔΟΣ garden", body: "<p>x</p>" },
        ])
        const titles = async (prefix: string) => (await run(ArticleRepository.use((r) => r.complete(accountId, prefix, 10, undefined)))).map((x) => x.title)
        expect(await titles("ist")).toEqual(["İstanbul gardens"])
        expect(await titles("İST")).toEqual(["İstanbul gardens"])
        expect(await titles("i\u0307st")).toEqual([])
        expect(await titles("οδοσ g")).toEqual(["ΟΔΟΣ garden"])
        expect(await titles("ΟΔΟΣ")).toEqual(["ΟΔΟΣ garden"])
        expect(await titles("οδος")).toEqual([])
      })

      it("should complete titles in code point order, a character past U+FFFF after one below it", async () => {
        const { accountId } = await seedTexts([
          { title: "Rose \u{1F331} seedlings", body: "<p>x</p>" },
          { title: "Rose \uFF21 grade", body: "<p>x</p>" },
        ])
        const complete = await run(ArticleRepository.use((r) => r.complete(accountId, "Rose ", 10, undefined)))
        expect(complete.map((x) => x.title)).toEqual(["Rose \uFF21 grade", "Rose \u{1F331} seedlings"])
      })

      it("should find a committed change by its new words at once, and no longer by its old ones", async () => {
        const { accountId, articles: a } = await seedTexts([{ title: "Mulching", body: "<p>Straw works</p>" }])
        await run(
          ArticleWriter.use((w) =>
            w.change(accountId, a[0]!.id, budget(), (current) => Effect.succeed({ ...changeOf(current, "Mulching"), body: "<p>Bark chippings work</p>" })),
          ),
        )
        expect(ids(await search(accountId, "chippings"))).toEqual([a[0]!.id])
        expect((await search(accountId, "straw")).total).toBe(0)
      })
      it("should give a snippet around the match, with the words before it, from the title or keyword when only they match, the same on every adapter", async () => {
        const words = Array.from({ length: 80 }, (_, i) => `word${i}`).join(" ")
        const { accountId } = await seedTexts([
          { title: "Tomato blight explained", body: "<p>What to do first when leaves turn brown.</p>" },
          { title: "Deep", body: `<p>${words} compost heap ${words}</p>` },
          { title: "Key", body: "<p>Nothing here at all.</p>", keyword: "zucchini bread" },
          { title: "A forged \uFDD0mark\uFDD1 here", body: "<p>Nothing.</p>" },
        ])
        const snippet = async (q: string) => {
          const hit = (await search(accountId, q)).items[0]!
          return snippetOf(snippetHeadline(hit, q))
        }
        // found by the title (or the keyword) alone: the snippet shows that match, not the body's opening unmarked
        expect(await snippet("explained")).toBe("Tomato blight <mark>explained</mark>")
        expect(await snippet("zucchini")).toBe("<mark>zucchini</mark> bread")
        // a title's own mark characters mark nothing
        expect(await snippet("forged")).toBe("A <mark>forged</mark> mark here")
        // deep in a body: the words before the match too, the same window on every adapter
        const deep = await snippet('"compost heap"')
        expect(deep.startsWith("word72 word73 word74 word75 word76 word77 word78 word79 <mark>compost</mark> <mark>heap</mark> word0 word1")).toBe(true)
        expect(deep.replace(/<\/?mark>/g, "").length).toBe(300)
        // the first match of any group of an OR
        expect((await snippet("word79 OR word0")).startsWith("<mark>word0</mark> word1")).toBe(true)
      })

    })

    describe("backlinks", () => {
      it("should order backlinks by date_acquired descending then id and filter inclusive dates", async () => {
        const { accountId, main, backlinks } = await seed()
        const other = await seed()
        const all = await run(BacklinkRepository.use((r) => r.list(accountId, { siteId: main.id }, undefined)))
        expect(all.items.map((b) => b.id)).toEqual([backlinks[1]!.id, backlinks[0]!.id, backlinks[2]!.id, backlinks[3]!.id])
        expect(all.items[0]).toEqual(backlinks[1])
        const range = await run(
          BacklinkRepository.use((r) => r.list(accountId, { siteId: main.id, fromDate: "2026-11-01", toDate: "2026-11-05" }, { offset: 1, limit: 10 })),
        )
        expect(range.total).toBe(3)
        expect(range.items.map((b) => b.id)).toEqual([backlinks[0]!.id, backlinks[2]!.id])
        expect((await run(BacklinkRepository.use((r) => r.list(other.accountId, { siteId: main.id }, undefined)))).total).toBe(0)
      })
    })

    describe("article writer", () => {
      it("should write the article, its next revision and the activity entry together", async () => {
        const { accountId, articles } = await seed()
        const target = articles[0]!
        const activity = activityOf(accountId, "2026-11-22T10:00:00Z", { article_id: target.id })
        const out = await run(
          ArticleWriter.use((w) => w.change(accountId, target.id, budget(), (current) => Effect.succeed(changeOf(current, "New title", activity)))),
        )
        expect(out.current).toEqual(target)
        expect(out.committed?.revision.number).toBe(2)
        expect(out.committed?.article).toMatchObject({ title: "New title", body: "<p>New title</p>", revision: 2, word_count: 1 })
        expect(out.committed?.editsRemaining).toBe(99)
        expect(await run(ArticleRepository.use((r) => r.get(accountId, target.id)))).toEqual(out.committed?.article)
        expect(await run(RevisionRepository.use((r) => r.get(accountId, target.id, 2)))).toEqual(out.committed?.revision)
        const log = await run(ActivityLog.use((l) => l.list(accountId, { articleId: target.id }, { offset: 0, limit: 10 })))
        expect(log.items).toEqual([activity])
        expect(await run(ArticleWriter.use((w) => w.editsUsed(accountId, "2026-11-22")))).toBe(1)
      })
      it("should store a restore's restored_from and read it back from the revision and the list", async () => {
        const { accountId, articles } = await seed()
        const target = articles[2]!
        const restore = (current: ArticleRecord): ArticleChange => {
          const change = changeOf(current, "Restored")
          return { ...change, revision: { ...change.revision, reason: "Restored revision 1", restored_from: 1 } }
        }
        const out = await run(ArticleWriter.use((w) => w.change(accountId, target.id, budget(), (current) => Effect.succeed(restore(current)))))
        expect(out.committed?.revision).toMatchObject({ number: 2, restored_from: 1 })
        expect(await run(RevisionRepository.use((r) => r.get(accountId, target.id, 2)))).toMatchObject({ number: 2, restored_from: 1 })
        const list = await run(RevisionRepository.use((r) => r.list(accountId, target.id, { offset: 0, limit: 10 })))
        expect(list.items.map((r) => [r.number, r.restored_from])).toEqual([[2, 1], [1, null]])
      })
      it("should write nothing and count nothing for a plan that returns null", async () => {
        const { accountId, articles } = await seed()
        const target = articles[1]!
        const out = await run(ArticleWriter.use((w) => w.change(accountId, target.id, budget(), () => Effect.succeed(null))))
        expect(out).toEqual({ current: target, committed: null })
        expect(await run(ArticleRepository.use((r) => r.get(accountId, target.id)))).toEqual(target)
        expect((await run(RevisionRepository.use((r) => r.list(accountId, target.id, { offset: 0, limit: 10 })))).total).toBe(1)
        expect(await run(ArticleWriter.use((w) => w.editsUsed(accountId, "2026-11-22")))).toBe(0)
      })
      it("should pass a plan's failure through and write nothing", async () => {
        const { accountId, articles } = await seed()
        const target = articles[2]!
        const tag = await failure(
          ArticleWriter.use((w) => w.change(accountId, target.id, budget(), () => Effect.fail(new EditConflict({ detail: "plan says no" })))),
        )
        expect(tag).toBe("EditConflict")
        expect(await run(ArticleRepository.use((r) => r.get(accountId, target.id)))).toEqual(target)
        expect(await run(ArticleWriter.use((w) => w.editsUsed(accountId, "2026-11-22")))).toBe(0)
      })
      it("should answer NotFound for another account's article without running the plan", async () => {
        const { articles } = await seed()
        const other = await seed()
        let ran = false
        const tag = await failure(
          ArticleWriter.use((w) =>
            w.change(other.accountId, articles[0]!.id, budget(), (c) => Effect.sync(() => ((ran = true), changeOf(c, "x")))),
          ),
        )
        expect(tag).toBe("NotFound")
        expect(ran).toBe(false)
      })
      it("should refuse a change over the daily budget and write nothing", async () => {
        const { accountId, articles } = await seed()
        const day = "2026-11-21"
        const edit = (a: ArticleRecord, title: string) =>
          ArticleWriter.use((w) => w.change(accountId, a.id, budget(2, day), (c) => Effect.succeed(changeOf(c, title))))
        expect((await run(edit(articles[0]!, "one"))).committed?.editsRemaining).toBe(1)
        expect((await run(edit(articles[1]!, "two"))).committed?.editsRemaining).toBe(0)
        expect(await failure(edit(articles[2]!, "three"))).toBe("DailyEditLimit")
        expect(await run(ArticleRepository.use((r) => r.get(accountId, articles[2]!.id)))).toEqual(articles[2])
        expect(await run(ArticleWriter.use((w) => w.editsUsed(accountId, day)))).toBe(2)
        expect(await run(ArticleWriter.use((w) => w.editsUsed(accountId, "2026-11-20")))).toBe(0)
      })
      it("should refuse a change over the daily budget as DailyEditLimit even when its rewrite_id is recorded already", async () => {
        const { accountId, articles } = await seed()
        const day = "2026-11-19"
        const rewriteId = uid("rw")
        const edit = (a: ArticleRecord, title: string) =>
          ArticleWriter.use((w) => w.change(accountId, a.id, budget(1, day), (c) => Effect.succeed({ ...changeOf(c, title), rewrite_id: rewriteId })))
        expect((await run(edit(articles[0]!, "one"))).committed?.editsRemaining).toBe(0)
        expect(await failure(edit(articles[1]!, "two"))).toBe("DailyEditLimit")
        expect(await run(ArticleRepository.use((r) => r.get(accountId, articles[1]!.id)))).toEqual(articles[1])
        expect(await run(ArticleWriter.use((w) => w.editsUsed(accountId, day)))).toBe(1)
      })
      it("should apply concurrent changes one after another with gapless revision numbers", async () => {
        const { accountId, articles } = await seed()
        const target = articles[4]!
        const results = await runtime.runPromise(
          Effect.all(
            Array.from({ length: 8 }, (_, i) =>
              Effect.exit(ArticleWriter.use((w) => w.change(accountId, target.id, budget(), (c) => Effect.succeed(changeOf(c, `t${i}`))))),
            ),
            { concurrency: "unbounded" },
          ),
        )
        const committed = results.filter(Exit.isSuccess).map((e) => e.value.committed!.revision.number)
        for (const e of results.filter(Exit.isFailure)) {
          expect((Option.getOrUndefined(Cause.findErrorOption(e.cause)) as { _tag: string })._tag).toBe("EditConflict")
        }
        expect([...committed].sort((a, b) => a - b)).toEqual(Array.from({ length: committed.length }, (_, i) => i + 2))
        const revisions = await run(RevisionRepository.use((r) => r.list(accountId, target.id, { offset: 0, limit: 50 })))
        expect(revisions.items.map((r) => r.number)).toEqual(Array.from({ length: committed.length + 1 }, (_, i) => committed.length + 1 - i))
        expect((await run(ArticleRepository.use((r) => r.get(accountId, target.id)))).revision).toBe(committed.length + 1)
      })
    })

    describe("rewrite ledger", () => {
      const rewriteChange = (current: ArticleRecord, title: string, rewriteId: string): ArticleChange => ({
        ...changeOf(current, title),
        revision: { ...changeOf(current, title).revision, origin: "rewrite", actor: { type: "platform", id: "rewrite", name: "Rewrite job" } },
        rewrite_id: rewriteId,
      })

      it("should locate an article's account and site, and nothing for an unknown id", async () => {
        const { accountId, main, articles } = await seed()
        expect(await run(ArticleRepository.use((r) => r.locate(articles[0]!.id)))).toEqual(Option.some({ account_id: accountId, site_id: main.id }))
        expect(await run(ArticleRepository.use((r) => r.locate(uid("art_missing"))))).toEqual(Option.none())
      })

      it("should record a change's rewrite_id with its revision in the change's transaction, uncounted without a budget", async () => {
        const { accountId, articles } = await seed()
        const target = articles[0]!
        const rewriteId = uid("rw")
        expect(await run(RewriteLedger.use((l) => l.find(rewriteId)))).toEqual(Option.none())
        const out = await run(
          ArticleWriter.use((w) => w.change(accountId, target.id, null, (current) => Effect.succeed(rewriteChange(current, "Rewritten", rewriteId)))),
        )
        expect(out.committed?.editsRemaining).toBeNull()
        expect(out.committed?.revision).toMatchObject({ number: 2, origin: "rewrite", actor: { type: "platform", id: "rewrite", name: "Rewrite job" } })
        expect(await run(RewriteLedger.use((l) => l.find(rewriteId)))).toEqual(
          Option.some({ rewrite_id: rewriteId, account_id: accountId, article_id: target.id, revision: 2, applied_at: T("2026-11-22T10:00:00Z") }),
        )
        expect(await run(ArticleWriter.use((w) => w.editsUsed(accountId, "2026-11-22")))).toBe(0)
      })

      it("should refuse a change whose rewrite_id is recorded already, writing nothing", async () => {
        const { accountId, articles } = await seed()
        const rewriteId = uid("rw")
        await run(ArticleWriter.use((w) => w.change(accountId, articles[1]!.id, null, (c) => Effect.succeed(rewriteChange(c, "First", rewriteId)))))
        const other = articles[2]!
        const tag = await failure(ArticleWriter.use((w) => w.change(accountId, other.id, null, (c) => Effect.succeed(rewriteChange(c, "Again", rewriteId)))))
        expect(tag).toBe("EditConflict")
        expect(await run(ArticleRepository.use((r) => r.get(accountId, other.id)))).toEqual(other)
        expect((await run(RewriteLedger.use((l) => l.find(rewriteId)))).pipe(Option.map((e) => e.article_id))).toEqual(Option.some(articles[1]!.id))
      })

      it("should keep the first record of a rewrite_id and ignore a second", async () => {
        const { accountId, articles } = await seed()
        const entry = { rewrite_id: uid("rw"), account_id: accountId, article_id: articles[3]!.id, revision: null, applied_at: T("2026-11-22T11:00:00Z") }
        await run(RewriteLedger.use((l) => l.record(entry)))
        await run(RewriteLedger.use((l) => l.record({ ...entry, article_id: articles[4]!.id, revision: 9 })))
        expect(await run(RewriteLedger.use((l) => l.find(entry.rewrite_id)))).toEqual(Option.some(entry))
      })
    })

    describe("revisions", () => {
      it("should list revisions newest first and hide another account's", async () => {
        const { accountId, articles } = await seed()
        const other = await seed()
        const target = articles[0]!
        for (const title of ["a", "b"]) {
          await run(ArticleWriter.use((w) => w.change(accountId, target.id, budget(), (c) => Effect.succeed(changeOf(c, title)))))
        }
        const list = await run(RevisionRepository.use((r) => r.list(accountId, target.id, { offset: 0, limit: 2 })))
        expect(list.total).toBe(3)
        expect(list.items.map((r) => r.number)).toEqual([3, 2])
        expect((await run(RevisionRepository.use((r) => r.get(accountId, target.id, 1)))).body).toBe(target.body)
        expect(await failure(RevisionRepository.use((r) => r.get(other.accountId, target.id, 1)))).toBe("NotFound")
        expect(await failure(RevisionRepository.use((r) => r.get(accountId, target.id, 9)))).toBe("NotFound")
        expect((await run(RevisionRepository.use((r) => r.list(other.accountId, target.id, { offset: 0, limit: 5 })))).total).toBe(0)
      })
    })

    describe("activity log", () => {
      it("should record an entry once per channel and request id", async () => {
        const { accountId } = await seed()
        const e = activityOf(accountId, "2026-11-22T10:00:00Z")
        await run(ActivityLog.use((l) => l.record(e)))
        await run(ActivityLog.use((l) => l.record({ ...e, id: uid("act") })))
        await run(ActivityLog.use((l) => l.record({ ...e, id: uid("act"), channel: "mcp", status: "ok", actor: null })))
        const list = await run(ActivityLog.use((l) => l.list(accountId, {}, { offset: 0, limit: 10 })))
        expect(list.total).toBe(2)
        expect(list.items.map((x) => x.channel).sort()).toEqual(["api", "mcp"])
        expect(list.items.find((x) => x.channel === "api")).toEqual(e)
      })
      it("should list newest first with inclusive ranges, filters and paging, own entries only", async () => {
        const { accountId } = await seed()
        const other = await seed()
        const e1 = activityOf(accountId, "2026-11-20T10:00:00Z", { article_id: "art_x" })
        const e2 = activityOf(accountId, "2026-11-21T10:00:00Z", { channel: "mcp", status: "error", error_code: "not_found" })
        const e3 = activityOf(accountId, "2026-11-22T10:00:00Z", { article_id: "art_x", status: 404, error_code: "not_found" })
        const foreign = activityOf(other.accountId, "2026-11-22T11:00:00Z")
        for (const e of [e1, e2, e3, foreign]) await run(ActivityLog.use((l) => l.record(e)))
        const all = await run(ActivityLog.use((l) => l.list(accountId, {}, { offset: 0, limit: 10 })))
        expect(all.items).toEqual([e3, e2, e1])
        const page = await run(ActivityLog.use((l) => l.list(accountId, {}, { offset: 1, limit: 1 })))
        expect(page).toEqual({ items: [e2], total: 3 })
        const range = await run(ActivityLog.use((l) => l.list(accountId, { from: e1.at, to: e2.at }, { offset: 0, limit: 10 })))
        expect(range.items).toEqual([e2, e1])
        expect((await run(ActivityLog.use((l) => l.list(accountId, { channel: "mcp" }, { offset: 0, limit: 10 })))).items).toEqual([e2])
        expect((await run(ActivityLog.use((l) => l.list(accountId, { articleId: "art_x" }, { offset: 0, limit: 10 })))).items).toEqual([e3, e1])
        expect((await run(ActivityLog.use((l) => l.list(accountId, { outcome: "error" }, { offset: 0, limit: 10 })))).items).toEqual([e3, e2])
        expect((await run(ActivityLog.use((l) => l.list(accountId, { outcome: "ok" }, { offset: 0, limit: 10 })))).items).toEqual([e1])
      })
      it("should count and list the ranges at the ends of the calendar, 0001-01-01 to 9999-12-31 UTC", async () => {
        const { accountId } = await seed()
        const entries = [activityOf(accountId, "2026-11-20T10:00:00Z"), activityOf(accountId, "2026-11-21T10:00:00Z")]
        for (const e of entries) await run(ActivityLog.use((l) => l.record(e)))
        const list = (filter: ActivityFilter) => run(ActivityLog.use((l) => l.list(accountId, filter, { offset: 0, limit: 10 })))
        for (const filter of [{ from: FIRST_INSTANT }, { to: LAST_INSTANT }, { from: FIRST_INSTANT, to: LAST_INSTANT }]) {
          expect(await list(filter), JSON.stringify(filter)).toEqual({ items: [entries[1], entries[0]], total: 2 })
        }
        expect(await list({ from: LAST_INSTANT })).toEqual({ items: [], total: 0 })
        expect(await list({ to: FIRST_INSTANT })).toEqual({ items: [], total: 0 })
      })
      it("should filter by a list of actions, combined with the other filters, an empty list matching nothing", async () => {
        const { accountId } = await seed()
        const edit = activityOf(accountId, "2026-11-20T10:00:00Z", { article_id: "art_y", action: "PUT /api/v1/articles/{id}" })
        const view = activityOf(accountId, "2026-11-21T10:00:00Z", { article_id: "art_y", action: "GET /api/v1/articles/{id}" })
        const tool = activityOf(accountId, "2026-11-22T10:00:00Z", { channel: "mcp", status: "error", error_code: "protected_link_changed", article_id: "art_y", action: "update_article" })
        const list = activityOf(accountId, "2026-11-23T10:00:00Z", { action: "GET /api/v1/sites" })
        for (const e of [edit, view, tool, list]) await run(ActivityLog.use((l) => l.record(e)))
        const of = (filter: ActivityFilter) => run(ActivityLog.use((l) => l.list(accountId, filter, { offset: 0, limit: 10 })))
        const changes = ["PUT /api/v1/articles/{id}", "update_article", "POST /articles/{id}/edit"]
        expect((await of({ actions: changes })).items).toEqual([tool, edit])
        expect(await of({ actions: changes, outcome: "ok" })).toEqual({ items: [edit], total: 1 })
        expect((await of({ actions: changes, channel: "mcp" })).items).toEqual([tool])
        expect((await of({ actions: ["GET /api/v1/articles/{id}"], articleId: "art_y" })).items).toEqual([view])
        expect(await of({ actions: [] })).toEqual({ items: [], total: 0 })
      })
      it("should count an action followed by the name it concerned as that action", async () => {
        const { accountId } = await seed()
        const created = activityOf(accountId, "2026-11-20T10:00:00Z", { channel: "web", action: "POST /connect/keys “Reporting script”" })
        const plain = activityOf(accountId, "2026-11-21T10:00:00Z", { channel: "web", action: "POST /connect/keys" })
        const other = activityOf(accountId, "2026-11-22T10:00:00Z", { channel: "web", action: "POST /connect/keys/{id}/revoke “Reporting script”" })
        for (const e of [created, plain, other]) await run(ActivityLog.use((l) => l.record(e)))
        const of = (filter: ActivityFilter) => run(ActivityLog.use((l) => l.list(accountId, filter, { offset: 0, limit: 10 })))
        expect((await of({ actions: ["POST /connect/keys"] })).items).toEqual([plain, created])
        expect((await of({ actions: ["POST /connect/keys/{id}/revoke"] })).items).toEqual([other])
      })
      it("should say a source's refused call folds into its summary only once the minute's summary is begun, without counting it", async () => {
        const { accountId } = await seed()
        const source = `api_key:${uid("key")}`
        const at = "2026-11-22T11:00:10.000Z"
        const refused = () => activityOf(accountId, at, { request_id: uid("req"), status: 429, error_code: "rate_limited" })
        const folds = (when: string) => run(ActivityLog.use((l) => Effect.succeed(l.folds(source, Date.parse(when)))))
        for (let i = 0; i < REFUSED_ENTRIES_PER_MINUTE; i++) {
          expect(await folds(at)).toBe(false)
          await run(ActivityLog.use((l) => l.record(refused(), source)))
        }
        // the call that begins the summary is still written whole; a look counts nothing
        expect(await folds(at)).toBe(false)
        expect(await folds(at)).toBe(false)
        await run(ActivityLog.use((l) => l.record(refused(), source)))
        expect(await folds(at)).toBe(true)
        await run(ActivityLog.use((l) => l.record(refused(), source)))
        // the next minute has a budget of its own; another source is not concerned
        expect(await folds("2026-11-22T11:01:00.000Z")).toBe(false)
        expect(await run(ActivityLog.use((l) => Effect.succeed(l.folds(`api_key:${uid("key")}`, Date.parse(at)))))).toBe(false)
        const list = await run(ActivityLog.use((l) => l.list(accountId, {}, { offset: 0, limit: 100 })))
        expect(list.items.reduce((n, e) => n + e.count, 0)).toBe(REFUSED_ENTRIES_PER_MINUTE + 2)
        expect(list.items.filter((e) => e.count > 1)).toHaveLength(1)
      })
    })

    describe("OAuth store", () => {
      it("should store, find, consume and destroy payloads", async () => {
        const model = uid("Model")
        await run(OAuthStore.use((s) => s.upsert(model, "id1", { uid: "u1", userCode: "UC-1", grantId: "g1", accountId: "acc_1" }, 3600)))
        expect(Option.getOrNull(await run(OAuthStore.use((s) => s.find(model, "id1"))))).toEqual({ uid: "u1", userCode: "UC-1", grantId: "g1", accountId: "acc_1" })
        expect(Option.getOrNull(await run(OAuthStore.use((s) => s.findByUid(model, "u1"))))).toMatchObject({ uid: "u1" })
        expect(Option.getOrNull(await run(OAuthStore.use((s) => s.findByUserCode(model, "UC-1"))))).toMatchObject({ userCode: "UC-1" })
        expect(await run(OAuthStore.use((s) => s.consume(model, "id1")))).toBe(true)
        // consumed once: a second consumption (another call, another instance) is told it was not its own
        expect(await run(OAuthStore.use((s) => s.consume(model, "id1")))).toBe(false)
        expect(await run(OAuthStore.use((s) => s.consume(model, "missing")))).toBe(false)
        const consumed = Option.getOrThrow(await run(OAuthStore.use((s) => s.find(model, "id1"))))
        expect(typeof consumed["consumed"]).toBe("number")
        await run(OAuthStore.use((s) => s.upsert(model, "id1", { uid: "u2" }, undefined)))
        expect(Option.getOrNull(await run(OAuthStore.use((s) => s.find(model, "id1"))))).toEqual({ uid: "u2" })
        await run(OAuthStore.use((s) => s.destroy(model, "id1")))
        expect(Option.isNone(await run(OAuthStore.use((s) => s.find(model, "id1"))))).toBe(true)
        expect(Option.isNone(await run(OAuthStore.use((s) => s.find(uid("Other"), "id1"))))).toBe(true)
      })
      it("should replace a live payload and never bring back one destroyed or expired", async () => {
        const model = uid("Model")
        await run(OAuthStore.use((s) => s.upsert(model, "live", { uid: "u1", accountId: "acc_r" }, 3600)))
        expect(await run(OAuthStore.use((s) => s.replace(model, "live", { uid: "u2", accountId: "acc_r", flash: "saved" }, 60)))).toBe(true)
        expect(Option.getOrNull(await run(OAuthStore.use((s) => s.find(model, "live"))))).toEqual({ uid: "u2", accountId: "acc_r", flash: "saved" })
        expect(Option.getOrNull(await run(OAuthStore.use((s) => s.findByUid(model, "u2"))))).toMatchObject({ flash: "saved" })
        await run(OAuthStore.use((s) => s.destroy(model, "live")))
        expect(await run(OAuthStore.use((s) => s.replace(model, "live", { uid: "u3" }, 60)))).toBe(false)
        expect(Option.isNone(await run(OAuthStore.use((s) => s.find(model, "live"))))).toBe(true)
        await run(OAuthStore.use((s) => s.upsert(model, "gone", { uid: "ug" }, 0)))
        expect(await run(OAuthStore.use((s) => s.replace(model, "gone", { uid: "ug2" }, 60)))).toBe(false)
        expect(Option.isNone(await run(OAuthStore.use((s) => s.find(model, "gone"))))).toBe(true)
      })
      it("should take a matching live payload once: of many takes at once one gets it, and one that does not match stays", async () => {
        const model = uid("Model")
        await run(OAuthStore.use((s) => s.upsert(model, "t1", { secret: "s1", text: "kept" }, 3600)))
        expect(Option.isNone(await run(OAuthStore.use((s) => s.take(model, "t1", { secret: "s2" }))))).toBe(true)
        expect(Option.getOrNull(await run(OAuthStore.use((s) => s.find(model, "t1"))))).toEqual({ secret: "s1", text: "kept" })
        const takes = await runtime.runPromise(
          Effect.all(
            Array.from({ length: 8 }, () => OAuthStore.use((s) => s.take(model, "t1", { secret: "s1" }))),
            { concurrency: "unbounded" },
          ),
        )
        expect(takes.filter(Option.isSome).map((t) => t.value)).toEqual([{ secret: "s1", text: "kept" }])
        expect(Option.isNone(await run(OAuthStore.use((s) => s.find(model, "t1"))))).toBe(true)
        expect(Option.isNone(await run(OAuthStore.use((s) => s.take(model, "t1", { secret: "s1" }))))).toBe(true)
        await run(OAuthStore.use((s) => s.upsert(model, "gone", { secret: "s1" }, 0)))
        expect(Option.isNone(await run(OAuthStore.use((s) => s.take(model, "gone", { secret: "s1" }))))).toBe(true)
      })
      it("should not return expired payloads", async () => {
        const model = uid("Model")
        await run(OAuthStore.use((s) => s.upsert(model, "gone", { uid: "ug", accountId: "acc_e" }, 0)))
        expect(Option.isNone(await run(OAuthStore.use((s) => s.find(model, "gone"))))).toBe(true)
        expect(Option.isNone(await run(OAuthStore.use((s) => s.findByUid(model, "ug"))))).toBe(true)
        expect(await run(OAuthStore.use((s) => s.listByAccount(model, "acc_e")))).toEqual([])
      })
      it("should revoke everything of a grant and list an account's payloads", async () => {
        const m1 = uid("AccessToken")
        const m2 = uid("RefreshToken")
        const grant = uid("grant")
        const account = uid("acc")
        await run(OAuthStore.use((s) => s.upsert(m1, "t1", { grantId: grant, accountId: account }, 3600)))
        await run(OAuthStore.use((s) => s.upsert(m2, "t2", { grantId: grant, accountId: account }, 3600)))
        await run(OAuthStore.use((s) => s.upsert(m1, "t3", { grantId: uid("grant"), accountId: account }, 3600)))
        expect((await run(OAuthStore.use((s) => s.listByAccount(m1, account)))).map((x) => x.id).sort()).toEqual(["t1", "t3"])
        await run(OAuthStore.use((s) => s.revokeByGrantId(grant)))
        expect(Option.isNone(await run(OAuthStore.use((s) => s.find(m1, "t1"))))).toBe(true)
        expect(Option.isNone(await run(OAuthStore.use((s) => s.find(m2, "t2"))))).toBe(true)
        expect(Option.isSome(await run(OAuthStore.use((s) => s.find(m1, "t3"))))).toBe(true)
        expect(await run(OAuthStore.use((s) => s.listByAccount(m1, account)))).toEqual([{ id: "t3", payload: expect.objectContaining({ accountId: account }) }])
      })
    })

    describe("limit store", () => {
      it("should count hits in a window and refuse past the limit without peek counting", async () => {
        const key = uid("limit")
        const hits = []
        for (let i = 0; i < 4; i++) hits.push(await run(LimitStore.use((l) => l.hit(key, 3, 3600))))
        expect(hits.map((h) => [h.allowed, h.remaining])).toEqual([[true, 2], [true, 1], [true, 0], [false, 0]])
        for (const h of hits) {
          expect(h.limit).toBe(3)
          expect(h.resetSeconds).toBeGreaterThanOrEqual(1)
          expect(h.resetSeconds).toBeLessThanOrEqual(3600)
        }
        const peek = await run(LimitStore.use((l) => l.peek(key, 3, 3600)))
        expect(peek).toMatchObject({ allowed: false, remaining: 0 })
        const fresh = uid("limit")
        expect(await run(LimitStore.use((l) => l.peek(fresh, 3, 3600)))).toMatchObject({ allowed: true, remaining: 3 })
        expect(await run(LimitStore.use((l) => l.hit(fresh, 3, 3600)))).toMatchObject({ allowed: true, remaining: 2 })
      })
      it("should let exactly 60 hits of a minute through at the default limit, and refuse the 61st", async () => {
        // The default limit, where leases come in batches (up to a tenth of what is left), not one by
        // one; an hour's window, as above, so that no window starts mid-test on the machine's clock.
        const key = uid("limit")
        const hits = []
        for (let i = 0; i < 61; i++) hits.push(await run(LimitStore.use((l) => l.hit(key, 60, 3600))))
        expect(hits.map((h) => h.remaining)).toEqual([...Array.from({ length: 60 }, (_, i) => 59 - i), 0])
        expect(hits.map((h) => h.allowed)).toEqual([...Array.from({ length: 60 }, () => true), false])
        expect(await run(LimitStore.use((l) => l.peek(key, 60, 3600)))).toMatchObject({ allowed: false, remaining: 0, limit: 60 })
      })
      it("should never let concurrent hits through past the limit", async () => {
        const key = uid("limit")
        const verdicts = await runtime.runPromise(
          Effect.all(Array.from({ length: 25 }, () => LimitStore.use((l) => l.hit(key, 10, 3600))), { concurrency: "unbounded" }),
        )
        expect(verdicts.filter((v) => v.allowed).length).toBe(10)
      })
    })

    describe("idempotency store", () => {
      const HOUR = 3_600_000
      const times = (nowMs: number) => ({ nowMs, leaseUntilMs: nowMs + 5 * 60_000, expiresAtMs: nowMs + 24 * HOUR })
      const t0 = Date.parse("2026-11-22T10:00:00Z")
      const answer = { status: 200, headers: { ETag: '"art_1-r2"', "Edit-Limit-Remaining": "7" }, body: '{"ok":true}' }
      const reserve = (accountId: string, key: string, fingerprint: string, nowMs: number) =>
        run(IdempotencyStore.use((s) => s.reserve(accountId, key, fingerprint, times(nowMs))))
      /** Reserves a free key and answers the token of this holding. */
      const hold = async (accountId: string, key: string, fingerprint: string, nowMs: number) => {
        const reservation = await reserve(accountId, key, fingerprint, nowMs)
        if (reservation.kind !== "reserved") throw new Error(`not reserved: ${JSON.stringify(reservation)}`)
        expect(reservation.token).toEqual(expect.any(String))
        return reservation.token
      }
      const complete = (accountId: string, key: string, token: string, kept: KeptAnswer) => run(IdempotencyStore.use((s) => s.complete(accountId, key, token, kept)))
      const release = (accountId: string, key: string, token: string) => run(IdempotencyStore.use((s) => s.release(accountId, key, token)))
      const reserved = { kind: "reserved", token: expect.any(String) }

      it("should reserve a free key, show it pending, then answer what was recorded", async () => {
        const key = uid("idem")
        const token = await hold("acc_i", key, "f1", t0)
        expect(await reserve("acc_i", key, "f1", t0 + 1)).toEqual({ kind: "pending", fingerprint: "f1" })
        await complete("acc_i", key, token, answer)
        expect(await reserve("acc_i", key, "f2", t0 + 2)).toEqual({ kind: "completed", fingerprint: "f1", answer })
      })

      it("should keep a write's answer with the revision it names, and a kept-nothing key for its own request again", async () => {
        const written = uid("idem")
        const byReference = { ...answer, body: '{"article":{"id":"art_1","body":null,"protected_links":null}}', revision: { articleId: "art_1", number: 2 } }
        await complete("acc_i", written, await hold("acc_i", written, "f1", t0), byReference)
        expect(await reserve("acc_i", written, "f1", t0 + 1)).toEqual({ kind: "completed", fingerprint: "f1", answer: byReference })
        const dry = uid("idem")
        await complete("acc_i", dry, await hold("acc_i", dry, "f1", t0), { rerun: true })
        expect(await reserve("acc_i", dry, "f2", t0 + 1)).toEqual({ kind: "completed", fingerprint: "f1", answer: { rerun: true } })
        expect(await reserve("acc_i", dry, "f1", t0 + 2)).toEqual(reserved)
        expect(await reserve("acc_i", dry, "f1", t0 + 3)).toEqual({ kind: "pending", fingerprint: "f1" })
      })

      it("should keep keys apart per account", async () => {
        const key = uid("idem")
        expect(await reserve("acc_i1", key, "f1", t0)).toEqual(reserved)
        expect(await reserve("acc_i2", key, "f1", t0)).toEqual(reserved)
      })

      it("should free a released key and let only its own request complete or release it", async () => {
        const key = uid("idem")
        const token = await hold("acc_i", key, "f1", t0)
        await complete("acc_i", key, "another-token", answer)
        await release("acc_i", key, "another-token")
        expect(await reserve("acc_i", key, "f1", t0)).toEqual({ kind: "pending", fingerprint: "f1" })
        await release("acc_i", key, token)
        expect(await reserve("acc_i", key, "f2", t0)).toEqual(reserved)
      })

      it("should take over a key after 24 hours, and a pending one whose lease ended", async () => {
        const done = uid("idem")
        await complete("acc_i", done, await hold("acc_i", done, "f1", t0), answer)
        expect((await reserve("acc_i", done, "f2", t0 + 23 * HOUR)).kind).toBe("completed")
        expect(await reserve("acc_i", done, "f2", t0 + 24 * HOUR)).toEqual(reserved)
        const stuck = uid("idem")
        await reserve("acc_i", stuck, "f1", t0)
        expect((await reserve("acc_i", stuck, "f1", t0 + 60_000)).kind).toBe("pending")
        expect(await reserve("acc_i", stuck, "f1", t0 + 5 * 60_000)).toEqual(reserved)
      })

      it("should never give a key whose change was applied to a retry: applied with its revision once its lease ends, not freed by a release", async () => {
        const { accountId, articles } = await seed()
        const target = articles[0]!
        const key = uid("idem")
        const token = await hold(accountId, key, "f1", t0)
        const out = await run(
          ArticleWriter.use((w) =>
            w.change(accountId, target.id, budget(), (c) => Effect.succeed({ ...changeOf(c, "Applied once"), idempotency: { key, fingerprint: "f1", token } })),
          ),
        )
        const revision = { articleId: target.id, number: out.committed!.revision.number }
        // its request still holds the key: pending
        expect(await reserve(accountId, key, "f1", t0 + 60_000)).toEqual({ kind: "pending", fingerprint: "f1" })
        // the lease ended and no answer was kept (the request died after its change): applied, for this request or another
        expect(await reserve(accountId, key, "f1", t0 + 5 * 60_000)).toEqual({ kind: "applied", fingerprint: "f1", revision })
        expect(await reserve(accountId, key, "f2", t0 + 5 * 60_000)).toEqual({ kind: "applied", fingerprint: "f1", revision })
        // released (its answer was not worth keeping): not freed, its lease ended at once
        await release(accountId, key, token)
        expect(await reserve(accountId, key, "f1", t0 + 1)).toEqual({ kind: "applied", fingerprint: "f1", revision })
        // an answer kept after all: completed as any
        await complete(accountId, key, token, answer)
        expect(await reserve(accountId, key, "f1", t0 + 2)).toEqual({ kind: "completed", fingerprint: "f1", answer })
        // a change made with another request's fingerprint marks nothing: that key is taken over when its lease ends
        const other = uid("idem")
        const otherToken = await hold(accountId, other, "f1", t0)
        await run(
          ArticleWriter.use((w) =>
            w.change(accountId, target.id, budget(), (c) => Effect.succeed({ ...changeOf(c, "Other"), idempotency: { key: other, fingerprint: "f9", token: otherToken } })),
          ),
        )
        expect(await reserve(accountId, other, "f1", t0 + 5 * 60_000)).toEqual(reserved)
      })

      it("should not make a request's change twice when its key was taken over after its lease ended while its first holder still ran", async () => {
        const { accountId, articles } = await seed()
        const target = articles[0]!
        const key = uid("idem")
        const firstToken = await hold(accountId, key, "f1", t0)
        const secondToken = await hold(accountId, key, "f1", t0 + 5 * 60_000)
        expect(secondToken).not.toBe(firstToken)
        const edit = (title: string, token: string) =>
          runtime.runPromiseExit(
            ArticleWriter.use((w) => w.change(accountId, target.id, budget(), (c) => Effect.succeed({ ...changeOf(c, title), idempotency: { key, fingerprint: "f1", token } }))),
          )
        // the first holder's change lands first: the key is its own again (its answer is the one to keep)
        const first = await edit("First holder", firstToken)
        expect(Exit.isSuccess(first)).toBe(true)
        const second = await edit("Second holder", secondToken)
        expect(Exit.isFailure(second) && (Option.getOrUndefined(Cause.findErrorOption(second.cause)) as { _tag: string })._tag).toBe("EditConflict")
        expect(await run(ArticleRepository.use((r) => r.get(accountId, target.id)))).toMatchObject({ title: "First holder", revision: 2 })
        // the successor, refused, frees nothing; once the first holder's answer is kept, the same holds
        await release(accountId, key, secondToken)
        expect(await reserve(accountId, key, "f1", t0 + 5 * 60_000 + 1)).toEqual({ kind: "pending", fingerprint: "f1" })
        const kept = { ...answer, revision: { articleId: target.id, number: 2 } }
        await complete(accountId, key, firstToken, kept)
        expect(await reserve(accountId, key, "f1", t0 + 5 * 60_000 + 2)).toEqual({ kind: "completed", fingerprint: "f1", answer: kept })
        const third = await edit("Third holder", secondToken)
        expect(Exit.isFailure(third)).toBe(true)
        expect((await run(ArticleRepository.use((r) => r.get(accountId, target.id)))).revision).toBe(2)
      })

      it("should let a first holder whose key was taken over after its lease ended neither keep its answer over its successor's nor free it", async () => {
        const { accountId, articles } = await seed()
        const target = articles[0]!
        const refusal = { status: 412, headers: {}, body: '{"code":"precondition_failed"}' }
        // the slow first holder ends with a refusal while its successor still runs: nothing of it is kept
        const key = uid("idem")
        const firstToken = await hold(accountId, key, "f1", t0)
        const secondToken = await hold(accountId, key, "f1", t0 + 5 * 60_000)
        await complete(accountId, key, firstToken, refusal)
        expect(await reserve(accountId, key, "f1", t0 + 5 * 60_000 + 1)).toEqual({ kind: "pending", fingerprint: "f1" })
        await release(accountId, key, firstToken)
        expect(await reserve(accountId, key, "f2", t0 + 5 * 60_000 + 2)).toEqual({ kind: "pending", fingerprint: "f1" })
        // the successor's answer is the one kept
        await complete(accountId, key, secondToken, answer)
        expect(await reserve(accountId, key, "f1", t0 + 5 * 60_000 + 3)).toEqual({ kind: "completed", fingerprint: "f1", answer })
        await complete(accountId, key, firstToken, refusal)
        expect(await reserve(accountId, key, "f1", t0 + 5 * 60_000 + 4)).toEqual({ kind: "completed", fingerprint: "f1", answer })
        // the successor made the change: the first holder's release does not end its lease (a retry waits for its answer)
        const applied = uid("idem")
        const oldToken = await hold(accountId, applied, "f1", t0)
        const newToken = await hold(accountId, applied, "f1", t0 + 5 * 60_000)
        const out = await run(
          ArticleWriter.use((w) =>
            w.change(accountId, target.id, budget(), (c) => Effect.succeed({ ...changeOf(c, "Successor"), idempotency: { key: applied, fingerprint: "f1", token: newToken } })),
          ),
        )
        await release(accountId, applied, oldToken)
        expect(await reserve(accountId, applied, "f1", t0 + 5 * 60_000 + 1)).toEqual({ kind: "pending", fingerprint: "f1" })
        const byReference = { ...answer, revision: { articleId: target.id, number: out.committed!.revision.number } }
        await complete(accountId, applied, newToken, byReference)
        expect(await reserve(accountId, applied, "f1", t0 + 5 * 60_000 + 2)).toEqual({ kind: "completed", fingerprint: "f1", answer: byReference })
      })

      it("should give a key to exactly one of many concurrent reservations", async () => {
        const key = uid("idem")
        const outcomes = await runtime.runPromise(
          Effect.all(
            Array.from({ length: 12 }, () => IdempotencyStore.use((s) => s.reserve("acc_i", key, "f1", times(t0)))),
            { concurrency: "unbounded" },
          ),
        )
        expect(outcomes.filter((o) => o.kind === "reserved")).toHaveLength(1)
        expect(outcomes.filter((o) => o.kind === "pending")).toHaveLength(11)
      })
    })

    describe("data importer", () => {
      it("should import once and leave existing ids untouched when imported again", async () => {
        const world = makeWorld()
        const first = await run(DataImporter.use((i) => i.apply(world.plan)))
        expect(first).toEqual({ created: { accounts: 1, apiKeys: 0, sites: 3, articles: 5, backlinks: 4 }, skipped: 0 })
        const target = world.articles[0]!
        await run(ArticleWriter.use((w) => w.change(world.accountId, target.id, budget(), (c) => Effect.succeed(changeOf(c, "edited")))))
        const again = await run(DataImporter.use((i) => i.apply(world.plan)))
        expect(again).toEqual({ created: { accounts: 0, apiKeys: 0, sites: 0, articles: 0, backlinks: 0 }, skipped: 13 })
        const after = await run(ArticleRepository.use((r) => r.get(world.accountId, target.id)))
        expect(after).toMatchObject({ title: "edited", revision: 2 })
        expect((await run(RevisionRepository.use((r) => r.list(world.accountId, target.id, { offset: 0, limit: 10 })))).total).toBe(2)
        expect(await run(RevisionRepository.use((r) => r.get(world.accountId, world.articles[1]!.id, 1)))).toMatchObject({ number: 1, reason: "Imported" })
      })

      it("should skip an imported API key whose hash is stored already, as one whose id is", async () => {
        const world = makeWorld()
        const key = { id: uid("key"), account_id: world.accountId, name: "ci", scope: "read-only" as const, key_hash: uid("hash"), created_at: T("2026-11-01T00:00:00Z"), last_used_at: null, revoked_at: null }
        await run(DataImporter.use((i) => i.apply({ ...world.plan, apiKeys: [key] })))
        const again = await run(DataImporter.use((i) => i.apply({ accounts: [], sites: [], articles: [], backlinks: [], apiKeys: [{ ...key, id: uid("key"), name: "copy" }] })))
        expect(again).toEqual({ created: { accounts: 0, apiKeys: 0, sites: 0, articles: 0, backlinks: 0 }, skipped: 1 })
        expect(await run(ApiKeyRepository.use((r) => r.list(world.accountId)))).toEqual([key])
      })

      it("should name the account that holds each stored id of a kind, and leave out ids nobody holds", async () => {
        const world = makeWorld()
        await run(DataImporter.use((i) => i.apply(world.plan)))
        const siteIds = world.sites.map((s) => s.id)
        const owners = await run(DataImporter.use((i) => i.owners("sites", [...siteIds, "site_nobody"])))
        expect([...owners].sort((a, b) => a.id.localeCompare(b.id))).toEqual([...siteIds].sort().map((id) => ({ id, accountId: world.accountId })))
        const articleOwners = await run(DataImporter.use((i) => i.owners("articles", [world.articles[0]!.id, "art_nobody"])))
        expect(articleOwners).toEqual([{ id: world.articles[0]!.id, accountId: world.accountId }])
        // an article's id is not a site's
        expect(await run(DataImporter.use((i) => i.owners("sites", [world.articles[0]!.id])))).toEqual([])
        expect(await run(DataImporter.use((i) => i.owners("backlinks", [])))).toEqual([])
      })
    })
  })
