/** The demo data and its seeding, on memory storage: what it seeds, not how a database stores it (that is the persistence tests' job). */
import { ArticleRepository, BacklinkRepository, DataImporter, SiteRepository, ApiKeyRepository, Secrets, createAccount, type CoreServices } from "@content-site/core"
import { headerImageInspector, inlineHtmlAnalyzer, makeMemoryState, type MemoryState, memoryStorage, settingsLayer, tableImageFetcher } from "@content-site/memory"
import { randomIds, systemClock, webCryptoSecrets } from "@content-site/platform/web"
import { Deferred, Effect, Layer, ManagedRuntime, Option } from "effect"
import { describe, expect, it } from "vitest"
import { demoData, seedDemo } from "../demo.ts"

/** A core runtime over memory storage of the given state. */
const runtimeOn = (state: MemoryState) =>
  ManagedRuntime.make(
    Layer.mergeAll(
      memoryStorage(state),
      systemClock,
      randomIds,
      webCryptoSecrets(1_000),
      settingsLayer("http://localhost:3000"),
      headerImageInspector,
      inlineHtmlAnalyzer,
      tableImageFetcher(new Map()),
    ) as Layer.Layer<CoreServices>,
  )

describe("demo data", () => {
  it("should seed the demo account once with sites, articles, backlinks and a fresh write key", async () => {
    const runtime = runtimeOn(makeMemoryState())
    try {
      const demo = await seedDemo(runtime)
      expect(demo?.email).toBe("demo@example.com")
      expect(demo?.apiKey).toMatch(/^cs_[A-Za-z0-9]{32,}$/)
      expect(await seedDemo(runtime)).toBeNull()
      const facts = await runtime.runPromise(
        Effect.gen(function* () {
          const sites = yield* (yield* SiteRepository).list("acc_demo", { offset: 0, limit: 10 })
          const articles = yield* Effect.forEach(sites.items, (s) => ArticleRepository.use((r) => r.list("acc_demo", { siteId: s.id }, undefined)))
          const backlinks = yield* Effect.forEach(sites.items, (s) => BacklinkRepository.use((r) => r.list("acc_demo", { siteId: s.id }, undefined)))
          const key = yield* (yield* ApiKeyRepository).findByHash(yield* (yield* Secrets).hashApiKey(demo!.apiKey))
          return { sites, articles: articles.flatMap((a) => a.items), backlinks: backlinks.flatMap((b) => b.items), key }
        }),
      )
      expect(facts.sites.total).toBe(3)
      expect(facts.articles.length).toBe(30)
      expect(facts.backlinks.length).toBe(40)
      expect(new Set(facts.backlinks.map((b) => b.category))).toEqual(new Set(["industry", "local"]))
      expect(Option.getOrThrow(facts.key).scope).toBe("write")
      for (const a of facts.articles) {
        const { body } = await runtime.runPromise(ArticleRepository.use((r) => r.get("acc_demo", a.id)))
        expect(body).toContain('data-service-protected="backlink"')
        expect(body).toContain('data-service-protected="internal"')
      }
      const published = facts.articles.filter((a) => a.status === "published").map((a) => Date.parse(a.published_at!))
      const now = Date.now()
      expect(Math.min(...published)).toBeGreaterThan(now - 95 * 86_400_000)
      expect(Math.max(...published)).toBeLessThanOrEqual(now + 86_400_000)
    } finally {
      await runtime.dispose()
    }
  })

  it("should seed nothing into a database that holds accounts already", async () => {
    const state = makeMemoryState()
    const runtime = runtimeOn(state)
    try {
      await runtime.runPromise(createAccount({ email: "owner@example.test", password: "owner-password-1", name: "Owner" }))
      expect(await seedDemo(runtime)).toBeNull()
      expect([...state.accounts.values()].map((a) => a.email)).toEqual(["owner@example.test"])
      expect(state.sites.size).toBe(0)
    } finally {
      await runtime.dispose()
    }
  })

  it("should seed nothing when an import holding the lock (admin import on another process) writes an account while the seeding waits", async () => {
    const state = makeMemoryState()
    const runtime = runtimeOn(state)
    try {
      const gate = await runtime.runPromise(Deferred.make<void>())
      // an import that has the lock and is about to write the operator's account
      const importing = runtime.runPromise(
        DataImporter.use((importer) =>
          importer.exclusive(Effect.andThen(Deferred.await(gate), createAccount({ email: "owner@example.test", password: "owner-password-1", name: "Owner" }))),
        ),
      )
      await new Promise((resolve) => setTimeout(resolve, 20))
      const seeding = seedDemo(runtime)
      // the seeding found no account yet and waits for the lock
      await new Promise((resolve) => setTimeout(resolve, 50))
      await runtime.runPromise(Deferred.succeed(gate, undefined))
      await importing
      expect(await seeding).toBeNull()
      expect([...state.accounts.values()].map((a) => a.email)).toEqual(["owner@example.test"])
      expect(state.sites.size).toBe(0)
    } finally {
      await runtime.dispose()
    }
  })

  it("should move the file's dates forward to the current day", () => {
    const later = demoData(Date.parse("2027-01-01T12:00:00Z"))
    const now = demoData(Date.parse("2026-11-22T12:00:00Z"))
    const first = (f: typeof now) => f.accounts[0]!.sites![0]!.backlinks![0]!.date_acquired
    expect(Date.parse(first(later)) - Date.parse(first(now))).toBe(40 * 86_400_000)
  })
})
