/** The research connectors' `search` and `fetch`: one query string in, the best articles out. */
import { describe, expect, it } from "vitest"
import { importData, RESEARCH_RESULTS, researchSearch } from "../../src/index.ts"
import { caller, makeWorld, oneSiteOfArticles } from "./harness.ts"

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
})
