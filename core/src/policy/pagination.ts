import { InvalidRequest } from "../errors.ts"
import { DEFAULT_PER_PAGE } from "../schema/queries.ts"
import type { Page, Pagination } from "../schema/resources.ts"
import type { Slice } from "../ports/records.ts"
import { Effect } from "effect"

/** Resolves `page`/`per_page` (defaults 1 and 20) against the configured maximum; never clamps. */
export const resolvePaging = (
  query: { readonly page?: number; readonly per_page?: number },
  maxPerPage: number,
): Effect.Effect<{ readonly page: number; readonly perPage: number; readonly slice: Slice }, InvalidRequest> => {
  const page = query.page ?? 1
  const perPage = query.per_page ?? Math.min(DEFAULT_PER_PAGE, maxPerPage)
  if (perPage > maxPerPage) {
    return Effect.fail(
      new InvalidRequest({
        detail: `per_page must be between 1 and ${maxPerPage}.`,
        errors: [{ path: "per_page", message: `Expected a value between 1 and ${maxPerPage}` }],
      }),
    )
  }
  return Effect.succeed({ page, perPage, slice: { offset: (page - 1) * perPage, limit: perPage } })
}

/** The pagination facts for a page of a list of `total` items. */
export const paginationOf = (page: number, perPage: number, total: number): Pagination => ({
  page,
  per_page: perPage,
  total,
  total_pages: Math.ceil(total / perPage),
})

/** Wraps items and facts into the list envelope. */
export const pageOf = <A>(items: ReadonlyArray<A>, page: number, perPage: number, total: number): Page<A> => ({
  data: items,
  pagination: paginationOf(page, perPage, total),
})

/** The RFC 8288 relations (`first`, `prev`, `next`, `last`) that apply to a page, as page numbers. */
export const pageRelations = (p: Pagination): ReadonlyArray<{ readonly rel: "first" | "prev" | "next" | "last"; readonly page: number }> => {
  const last = Math.max(1, p.total_pages)
  const rels: Array<{ rel: "first" | "prev" | "next" | "last"; page: number }> = [{ rel: "first", page: 1 }]
  if (p.page > 1) rels.push({ rel: "prev", page: Math.min(p.page - 1, last) })
  if (p.page < last) rels.push({ rel: "next", page: p.page + 1 })
  rels.push({ rel: "last", page: last })
  return rels
}
