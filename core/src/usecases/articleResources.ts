import { Context, Effect } from "effect"
import { InvalidRequest, type Unavailable } from "../errors.ts"
import { ArticleRepository, SiteRepository } from "../ports/Repositories.ts"
import { isStorableText } from "../schema/common.ts"
import type { ArticleListItem } from "../schema/resources.ts"
import type { Caller } from "./Caller.ts"
import { articleListView } from "./views.ts"

/** Articles a page of `resources/list` holds at most. */
export const RESOURCE_PAGE_SIZE = 50
/** Empty websites one `resources/list` call steps over at most before it answers (with a cursor). */
const MAX_SITES_PER_PAGE = 20
/** Completion values answered at most (the MCP specification's ceiling is 100). */
export const COMPLETION_VALUES = 20

/** A cursor as this server writes one: two numbers without leading zeros, the second a whole number of pages. */
const CURSOR = /^(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,11})$/

const badCursor = () =>
  new InvalidRequest({ detail: "The cursor is not one this server gave: start again without a cursor.", errors: [{ path: "cursor", message: "Unknown cursor" }] })

/**
 * One page of the caller's articles as resources, across its websites in their list order (by
 * name then id), each site's articles in theirs; `cursor` (`<site offset>.<article offset>`)
 * names where the page starts; the answer's `next` the next page, absent at the end. A cursor this
 * server could not have written (another form, leading zeros, an offset inside a page) is
 * refused; one past the end (websites or articles gone since) is an empty last page.
 */
export const listArticleResources = (caller: Caller, cursor: string | undefined) =>
  Effect.contextWith((services: Context.Context<ArticleRepository | SiteRepository>) => {
    const match = cursor === undefined ? ["", "0", "0"] : CURSOR.exec(cursor)
    // only a cursor this server could have given: its article offset a whole number of pages
    if (match === null || Number(match[2]) % RESOURCE_PAGE_SIZE !== 0) return Effect.fail(badCursor())
    const sites = Context.get(services, SiteRepository)
    const articles = Context.get(services, ArticleRepository)
    const step = (
      site: number,
      offset: number,
      budget: number,
    ): Effect.Effect<{ items: ReadonlyArray<ArticleListItem>; next?: string }, InvalidRequest | Unavailable> =>
      Effect.flatMap(sites.list(caller.accountId, { offset: site, limit: 1 }), ({ items, total }) => {
        const current = items[0]
        if (current === undefined) return Effect.succeed({ items: [] })
        return Effect.flatMap(articles.list(caller.accountId, { siteId: current.id }, { offset, limit: RESOURCE_PAGE_SIZE }), (page) => {
          const more = offset + RESOURCE_PAGE_SIZE < page.total
          const nextSite = site + 1 < total
          const next = more ? `${site}.${offset + RESOURCE_PAGE_SIZE}` : nextSite ? `${site + 1}.0` : undefined
          // an empty site is stepped over, at most MAX_SITES_PER_PAGE of them a call
          if (page.items.length === 0 && next !== undefined && budget > 1) return step(site + 1, 0, budget - 1)
          return Effect.succeed({ items: page.items.map(articleListView), ...(next !== undefined ? { next } : {}) })
        })
      })
    return step(Number(match[1]), Number(match[2]), MAX_SITES_PER_PAGE)
  })

/** How much of a typed value completion reads: 200 UTF-16 units, enough to tell titles apart (a title may be up to 300). */
export const COMPLETION_PREFIX_UNITS = 200

/**
 * Completion of an `article_id` (optionally within a site) or `site_id` argument from what the
 * caller has typed: ids that start with it (in id order), then titles (or site names) that do,
 * ignoring case; at most COMPLETION_VALUES, only the caller's own, and whether there are more.
 * Only the value's first COMPLETION_PREFIX_UNITS UTF-16 units count (a surrogate pair is not cut in
 * two); a value no stored text can start with (a NUL, an unpaired surrogate) completes to nothing.
 */
export const completeArgument = (caller: Caller, argument: "article_id" | "site_id", typed: string, siteId?: string) =>
  Effect.contextWith((services: Context.Context<ArticleRepository | SiteRepository>) => {
    const cut = /[\uD800-\uDBFF]/.test(typed.charAt(COMPLETION_PREFIX_UNITS - 1)) ? COMPLETION_PREFIX_UNITS - 1 : COMPLETION_PREFIX_UNITS
    const value = typed.slice(0, cut)
    if (!isStorableText(value)) return Effect.succeed({ values: [] as Array<string>, hasMore: false })
    if (argument === "article_id") {
      // one more than is answered: whether there are more
      return Effect.map(Context.get(services, ArticleRepository).complete(caller.accountId, value, COMPLETION_VALUES + 1, siteId), (rows) => ({
        values: rows.slice(0, COMPLETION_VALUES).map((r) => r.id),
        hasMore: rows.length > COMPLETION_VALUES,
      }))
    }
    const lower = value.toLowerCase()
    // an account's sites are few; the first 100 are read once and filtered here (past them, there may be more)
    return Effect.map(Context.get(services, SiteRepository).list(caller.accountId, { offset: 0, limit: 100 }), ({ items, total }) => {
      const matching = [...items.filter((s) => s.id.startsWith(value)), ...items.filter((s) => !s.id.startsWith(value) && s.name.toLowerCase().startsWith(lower))]
      return { values: matching.slice(0, COMPLETION_VALUES).map((s) => s.id), hasMore: matching.length > COMPLETION_VALUES || total > items.length }
    })
  })
