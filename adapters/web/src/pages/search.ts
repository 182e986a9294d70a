import type { Page, SearchHit, Website } from "@content-site/core"
import { escapeHtml, type Html, html, raw } from "../html.ts"
import { badge, emptyPage, pager, when } from "../ui.ts"

/**
 * The search box: a plain GET form to `/search` (works without JavaScript), for all sites or,
 * with `site`, for one (its id in a hidden field). With `errorId`, the words were refused: the
 * field is invalid and described by that message.
 */
export const searchBox = (site?: { readonly id: string; readonly name: string }, q = "", errorId?: string): Html =>
  html`<form method="get" action="/search" role="search" class="search-box" aria-label="${site ? `Search the articles of ${site.name}` : "Search your articles"}">
    ${site ? html`<input type="hidden" name="site_id" value="${site.id}">` : ""}
    <label for="search-q">${site ? `Search ${site.name}` : "Search all your articles"}</label>
    <div class="search-row"><input type="search" id="search-q" name="q" value="${q}" maxlength="200" required placeholder="words, &quot;a phrase&quot;, -word"${errorId ? html` aria-invalid="true" aria-describedby="${errorId}"` : ""}><button type="submit" class="button">Search</button></div>
  </form>`

// A snippet is text the core escaped with `<mark>` as its only markup; anything else fails closed (shown escaped).
const SNIPPET = /^(?:[^<>]|<\/?mark>)*$/

/** A snippet as markup: its marks rendered as marks, everything else as the core escaped it. */
export const snippetHtml = (snippet: string): Html => (SNIPPET.test(snippet) ? raw(snippet) : raw(escapeHtml(snippet)))

/** The results page: the box, then the hits with their snippets, or why there are none. */
export const searchContent = (input: {
  readonly q: string
  readonly site: Website | null
  readonly results: Page<SearchHit> | null
  readonly query: Record<string, string | undefined>
  readonly error: string | null
}): Html => {
  const { q, site, results } = input
  return html`${site ? html`<nav class="breadcrumbs" aria-label="Breadcrumb"><ol><li><a href="/sites">Sites</a></li><li><a href="/sites/${encodeURIComponent(site.id)}"><bdi>${site.name}</bdi></a></li><li aria-current="page">Search</li></ol></nav>` : ""}
  <div class="page-head"><div><h1>Search${site ? html` <bdi>${site.name}</bdi>` : ""}</h1><p class="muted">Titles, target keywords and article text; case and accents are ignored. Use "a phrase", OR, and -word to leave one out.</p></div></div>
  <section class="card">${searchBox(site ?? undefined, q, input.error ? "search-error" : undefined)}</section>
  ${input.error ? html`<div class="notice notice-error" role="alert" id="search-error"><p>${input.error}</p></div>` : ""}
  ${
    results === null
      ? ""
      : html`<section class="card" aria-labelledby="results-title">
          <h2 id="results-title">${results.pagination.total === 1 ? "1 article" : `${results.pagination.total} articles`} found</h2>
          ${
            results.data.length === 0
              ? emptyPage(results.pagination, "No article matches. Try fewer or other words.", "/search", input.query)
              : html`<ol class="results">${results.data.map(
                  (a) => html`<li class="result">
                    <h3><a href="/articles/${encodeURIComponent(a.id)}"><bdi>${a.title}</bdi></a></h3>
                    <p class="snippet">${snippetHtml(a.snippet)}</p>
                    <p class="muted">${badge(a.status, a.status)} · ${when(a.published_at)}${site ? "" : html` · <a href="/sites/${encodeURIComponent(a.site_id)}">${a.site_id}</a>`}</p>
                  </li>`,
                )}</ol>
                ${pager(results.pagination, "/search", input.query, "page", "Result pages")}`
          }
        </section>`
  }`
}
