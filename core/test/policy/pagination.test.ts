import { Effect, Exit } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeInput, ListSitesQuery, pageOf, pageRelations, paginationOf, resolvePaging } from "../../src/index.ts"

describe("resolvePaging", () => {
  it("should default to page 1 and 20 per page", () => {
    const p = Effect.runSync(resolvePaging({}, 100))
    expect(p).toEqual({ page: 1, perPage: 20, slice: { offset: 0, limit: 20 } })
  })
  it("should refuse per_page above the configured maximum instead of clamping", () => {
    const exit = Effect.runSyncExit(resolvePaging({ per_page: 51 }, 50))
    expect(Exit.isFailure(exit)).toBe(true)
  })
  it("should name per_page and the maximum in the refusal", () => {
    const error = Effect.runSync(Effect.flip(resolvePaging({ per_page: 51 }, 50)))
    expect(error).toMatchObject({
      _tag: "InvalidRequest",
      detail: "per_page must be between 1 and 50.",
      errors: [{ path: "per_page", message: "Expected a value between 1 and 50" }],
    })
    expect(Effect.runSync(resolvePaging({ page: 3, per_page: 50 }, 50))).toEqual({ page: 3, perPage: 50, slice: { offset: 100, limit: 50 } })
  })
  it("should refuse a page or per_page of too many digits as out of range, and read leading zeros as nothing", () => {
    const refusal = (query: Record<string, string>) => Effect.runSync(Effect.flip(decodeInput(ListSitesQuery, query, "Query string"))).errors
    expect(refusal({ page: "99999999999999999999" })).toEqual([{ path: "page", message: "Expected a value between 1 and 9007199254740991" }])
    expect(refusal({ per_page: "1000000000000000000000" })).toEqual([{ path: "per_page", message: "Expected a value between 1 and 100" }])
    expect(refusal({ page: "1e3" })).toEqual([{ path: "page", message: "Expected a whole number written in decimal digits only" }])
    expect(Effect.runSync(decodeInput(ListSitesQuery, { page: "00000000000000000002", per_page: "0000000000000000000050" }, "Query string"))).toEqual({ page: 2, per_page: 50 })
  })
  it("should use a lower configured maximum as the default when it is below 20", () => {
    expect(Effect.runSync(resolvePaging({}, 5)).perPage).toBe(5)
  })
})

describe("pagination math", () => {
  it("should cover every item exactly once across the pages", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 1, max: 100 }), (total, perPage) => {
        const facts = paginationOf(1, perPage, total)
        let seen = 0
        for (let page = 1; page <= facts.total_pages; page++) {
          const { slice } = Effect.runSync(resolvePaging({ page, per_page: perPage }, 100))
          seen += Math.max(0, Math.min(total, slice.offset + slice.limit) - slice.offset)
        }
        expect(seen).toBe(total)
        expect(facts.total_pages).toBe(total === 0 ? 0 : Math.ceil(total / perPage))
      }),
    )
  })
  it("should give first and last always, prev and next only where they exist", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 500 }), fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1, max: 30 }), (total, perPage, page) => {
        const facts = paginationOf(page, perPage, total)
        const rels = pageRelations(facts)
        const names = rels.map((r) => r.rel)
        expect(names[0]).toBe("first")
        expect(names[names.length - 1]).toBe("last")
        const last = Math.max(1, facts.total_pages)
        expect(names.includes("next")).toBe(page < last)
        expect(names.includes("prev")).toBe(page > 1)
        for (const r of rels) expect(r.page).toBeGreaterThanOrEqual(1)
      }),
    )
  })
})

describe("pageOf and pageRelations", () => {
  it("should wrap the items with their pagination facts", () => {
    expect(pageOf(["a", "b"], 2, 2, 5)).toEqual({ data: ["a", "b"], pagination: { page: 2, per_page: 2, total: 5, total_pages: 3 } })
  })
  it("should point prev of a page past the end at the last page, and give each relation its page", () => {
    expect(pageRelations(paginationOf(7, 10, 25))).toEqual([
      { rel: "first", page: 1 },
      { rel: "prev", page: 3 },
      { rel: "last", page: 3 },
    ])
    expect(pageRelations(paginationOf(2, 10, 25))).toEqual([
      { rel: "first", page: 1 },
      { rel: "prev", page: 1 },
      { rel: "next", page: 3 },
      { rel: "last", page: 3 },
    ])
  })
})
