/** Searching through the use cases: what reaches the storage is the query as a person reads it. */
import { Effect, Exit, Scheduler } from "effect"
import { describe, expect, it } from "vitest"
import { ArticleRepository, defaultLimits, importData, listArticles, SEARCHES_AT_ONCE, runningSearches, searchArticles, Settings, SiteRepository } from "../../src/index.ts"
import { caller, makeWorld, oneSiteOfArticles } from "./harness.ts"

const texts = [
  { title: "Garden roses", body: "<p>Pruning garden roses in spring.</p>" },
  { title: "Tulips", body: "<p>Roses and tulips, planted apart.</p>" },
  { title: "Compost", body: "<p>Nothing about flowers.</p>" },
]

describe("searchArticles and listArticles with q", () => {
  it("should read any Unicode white space in a query as a space, as it reads a plain one", async () => {
    const w = await makeWorld()
    await w.run(importData(oneSiteOfArticles("q", texts.length, (i) => texts[i]!)))
    const who = caller({ accountId: "acc_q" })
    const found = async (q: string) => (await w.run(searchArticles(who, { q }))).data.map((a) => a.id).sort()
    const plain = await found("roses OR compost")
    expect(plain).toEqual(["art_q00", "art_q01", "art_q02"])
    // no-break, em, narrow no-break and ideographic spaces, a line separator: the same three words
    for (const space of ["\u00a0", "\u2003", "\u202f", "\u3000", "\u2028"]) {
      expect(await found(`roses${space}OR${space}compost`), JSON.stringify(space)).toEqual(plain)
    }
    // in a phrase too: "garden roses" whichever space parts the words
    expect(await found('"garden\u00a0roses"')).toEqual(["art_q00"])
    // and the snippet marks what the plain query marks
    const hit = (await w.run(searchArticles(who, { q: "garden\u2003roses" }))).data[0]!
    expect(hit.snippet).toContain("<mark>garden</mark> <mark>roses</mark>")
    const listed = await w.run(listArticles(who, "site_q", { q: "tulips\u00a0OR\u00a0compost" }))
    expect(listed.data.map((a) => a.id).sort()).toEqual(["art_q01", "art_q02"])
  })
})

describe("searchArticles at once", () => {
  it("should have the storage run at most SEARCHES_AT_ONCE searches of one account at once, refuse the next with RateLimited, and not another account's", async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    let started = 0
    const repository = {
      search: () =>
        Effect.promise(async () => {
          started++
          await gate
          return { items: [], total: 1 }
        }),
    } as unknown as ArticleRepository["Service"]
    const run = (accountId: string) =>
      Effect.runPromiseExit(
        searchArticles(caller({ accountId }), { q: "roses", per_page: 100 }).pipe(
          Effect.provideService(ArticleRepository, repository),
          Effect.provideService(SiteRepository, {} as SiteRepository["Service"]),
          Effect.provideService(Settings, { limits: defaultLimits } as Settings["Service"]),
        ),
      )
    // a batch of 60 searches of one account at once, and one of another account
    const batch = Array.from({ length: 60 }, () => run("acc_batch"))
    const other = run("acc_other")
    await new Promise((r) => setTimeout(r, 10))
    expect(started).toBe(SEARCHES_AT_ONCE + 1)
    expect(runningSearches("acc_batch")).toBe(SEARCHES_AT_ONCE)
    release()
    const exits = await Promise.all(batch)
    expect(exits.filter(Exit.isSuccess)).toHaveLength(SEARCHES_AT_ONCE)
    for (const exit of exits.filter(Exit.isFailure)) expect(JSON.stringify(exit.cause)).toContain("RateLimited")
    expect(Exit.isSuccess(await other)).toBe(true)
    expect(runningSearches("acc_batch")).toBe(0)
    // the places are given back: the next one runs
    expect(Exit.isSuccess(await run("acc_batch"))).toBe(true)
  })

  it("should give the place back when the search is interrupted at any step, right after it took the place too", async () => {
    // A scheduler that yields after every step and runs the steps one at a time, by hand: the
    // search is interrupted at the first step at which it holds a place, wherever that falls.
    const tasks: Array<() => void> = []
    // (every third step: a fiber that yields at once on resuming, or after its one step of resuming, makes no progress)
    let asked = 0
    const stepping: Scheduler.Scheduler = {
      executionMode: "async",
      shouldYield: () => asked++ % 3 === 2,
      makeDispatcher: () => ({ scheduleTask: (task) => void tasks.push(task), flush: () => {} }),
    }
    const repository = { search: () => Effect.never } as unknown as ArticleRepository["Service"]
    const fiber = Effect.runFork(
      searchArticles(caller({ accountId: "acc_interrupted" }), { q: "roses" }).pipe(
        Effect.provideService(ArticleRepository, repository),
        Effect.provideService(SiteRepository, {} as SiteRepository["Service"]),
        Effect.provideService(Settings, { limits: defaultLimits } as Settings["Service"]),
      ),
      { scheduler: stepping },
    )
    expect(runningSearches("acc_interrupted")).toBe(0)
    let interrupted = false
    // (a bound on the steps: the search takes its place within a few dozen)
    for (let step = 0; step < 10_000 && tasks.length > 0; step++) {
      tasks.shift()!()
      if (!interrupted && runningSearches("acc_interrupted") > 0) {
        fiber.interruptUnsafe()
        interrupted = true
      }
    }
    expect(interrupted).toBe(true)
    expect(tasks).toHaveLength(0)
    expect(runningSearches("acc_interrupted")).toBe(0)
  })
})
