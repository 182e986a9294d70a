/** The research connectors' `search` and `fetch`: one query string in, the best articles out. */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { ArticleRepository, importData, proseOfHtml, RESEARCH_RESULTS, researchFetch, researchSearch } from "../../src/index.ts"
import { caller, makeWorld, oneSiteOfArticles, recordingHtmlAnalyzer } from "./harness.ts"

/** An account of `n` articles on one site, each with the word "compost" in its title. */
const manyArticles = (n: number) => oneSiteOfArticles("r", n, (i) => ({ title: `Compost ${i}`, body: "<p>compost</p>" }))

describe("researchSearch", () => {
  it("should answer at most RESEARCH_RESULTS results", async () => {
    const w = await makeWorld()
    await w.run(importData(manyArticles(RESEARCH_RESULTS + 3)))
    const found = await w.run(researchSearch(caller({ accountId: "acc_r" }), "compost"))
    expect(found.results).toHaveLength(RESEARCH_RESULTS)
  })

  it("should answer the operator's page size when MAX_PER_PAGE is below RESEARCH_RESULTS, not refuse a per_page nobody sent", async () => {
    const w = await makeWorld({ maxPerPage: 5 })
    await w.run(importData(manyArticles(8)))
    const found = await w.run(researchSearch(caller({ accountId: "acc_r" }), "compost"))
    expect(found.results).toHaveLength(5)
  })

  it("should find what a question asks about, its words all required before any one of them, and leave a query in the syntax as written", async () => {
    const w = await makeWorld()
    const titles = ["Tomato blight in wet summers", "Tomato soup", "Potato blight", "Basil for beginners", "Pesto made with walnuts"]
    await w.run(importData(oneSiteOfArticles("q", titles.length, (i) => ({ title: titles[i]!, body: "<p>Notes from the garden.</p>" }))))
    const search = async (q: string) => (await w.run(researchSearch(caller({ accountId: "acc_q" }), q))).results.map((r) => r.title).sort()
    // all of its words first: the one article on tomato blight, not every tomato or every blight
    expect(await search("What did we write about tomato blight?")).toEqual(["Tomato blight in wet summers"])
    // none has both words: any of them
    expect(await search("Which articles mention basil pesto?")).toEqual(["Basil for beginners", "Pesto made with walnuts"])
    // as written first: what the syntax finds is the answer
    expect(await search("soup")).toEqual(["Tomato soup"])
    // the syntax is taken at its word: a phrase that matches nothing is no result
    expect(await search('"blight tomato"')).toEqual([])
    expect(await search("basil -beginners")).toEqual([])
  })

  it("should leave out a question's contracted words (what's, where’s) and anything, as it leaves out what and where", async () => {
    const w = await makeWorld()
    const titles = ["Best spades for clay", "Leaf mould", "Mulch"]
    const bodies = ["<p>Spades and forks.</p>", "<p>The best compost mix is two parts leaves.</p>", "<p>Bark is good.</p>"]
    await w.run(importData(oneSiteOfArticles("c", titles.length, (i) => ({ title: titles[i]!, body: bodies[i]! }))))
    const search = async (q: string) => (await w.run(researchSearch(caller({ accountId: "acc_c" }), q))).results.map((r) => r.title)
    // all of its own words (best compost mix) find the one article, before any one of them (a title with "best") is tried
    for (const q of ["What's the best compost mix?", "What’s the best compost mix?", "Where's our best compost mix?", "Do you have anything on the best compost mix?"])
      expect([q, await search(q)]).toEqual([q, ["Leaf mould"]])
  })

  it("should ask the storage to mark no body: it shows no snippet", async () => {
    const w = await makeWorld()
    await w.run(importData(manyArticles(3)))
    const asked: Array<boolean> = []
    // the storage as it is, each search's filter seen on the way
    const found = await w.run(
      ArticleRepository.use((repo) =>
        Effect.provideService(researchSearch(caller({ accountId: "acc_r" }), "Which articles talk about compost?"), ArticleRepository, {
          ...repo,
          search: (accountId, filter, slice) => {
            asked.push(filter.headlines)
            return repo.search(accountId, filter, slice)
          },
        }),
      ),
    )
    expect(found.results).toHaveLength(3)
    // the question as written, then its own word
    expect(asked).toEqual([false, false])
  })
})

describe("researchFetch", () => {
  it("should make a body's prose where the HtmlAnalyzer does its work (a pool for a large body), not in the calling thread", async () => {
    const seen: Array<string> = []
    const w = await makeWorld({}, new Map(), recordingHtmlAnalyzer(seen))
    // a stored body whose prose costs most per character (a <pre> keeps its white space): 0.4 s of
    // event loop for 1 MiB when it was made in the calling thread
    const body = `<pre>${" \n\t".repeat(2_000)}x</pre><p>compost</p>`
    await w.run(importData(oneSiteOfArticles("f", 1, () => ({ title: "Compost", body }))))
    const stored = (await w.run(ArticleRepository.use((r) => r.get("acc_f", "art_f00")))).body
    expect(stored.length).toBeGreaterThan(6_000)
    seen.length = 0
    const fetched = await w.run(researchFetch(caller({ accountId: "acc_f" }), "art_f00"))
    expect(fetched.text).toBe(proseOfHtml(stored))
    // one piece of work handed to the analyzer for the prose, with the stored body
    expect(seen.filter((s) => s.startsWith("prose: "))).toEqual([`prose: ${stored}`])
  })
})
