import type { ArticleListItem, Backlink, Page, PeriodSummary, Website } from "@content-site/core"
import { type Html, html } from "../html.ts"
import { badge, day, emptyPage, num, pager, when } from "../ui.ts"
import { searchBox } from "./search.ts"

/** One site card on the sites overview. */
const siteCard = (site: Website, stats: PeriodSummary | null): Html => html`<section class="card" aria-labelledby="site-${site.id}">
  <h2 id="site-${site.id}"><a href="/sites/${encodeURIComponent(site.id)}"><bdi>${site.name}</bdi></a></h2>
  <p class="muted"><a href="${site.url}" rel="noopener noreferrer">${site.url}</a></p>
  <dl class="stats">
    <div><dt>Articles</dt><dd>${num(site.article_count)}</dd></div>
    <div><dt>Backlinks</dt><dd>${num(site.backlink_count)}</dd></div>
  </dl>
  ${
    stats
      ? html`<h3>This month <span class="muted">(${day(stats.period.from)} – ${day(stats.period.to)})</span></h3>
        <dl class="stats">
          <div><dt>Published</dt><dd>${num(stats.articles.count)}</dd></div>
          <div><dt>Words</dt><dd>${num(stats.articles["word count"])}</dd></div>
          <div><dt>Industry links</dt><dd>${num(stats.backlinks.industry)}</dd></div>
          <div><dt>Local links</dt><dd>${num(stats.backlinks.local)}</dd></div>
        </dl>`
      : ""
  }
  <p><a class="button button-quiet" href="/sites/${encodeURIComponent(site.id)}">Open <bdi>${site.name}</bdi></a></p>
</section>`

/** The sites overview. */
export const sitesContent = (sites: Page<Website>, stats: ReadonlyMap<string, PeriodSummary>, query: Record<string, string | undefined>): Html =>
  html`<div class="page-head"><div><h1>Your sites</h1><p class="muted">Websites on this account, with this month's summary.</p></div></div>
  ${sites.data.length > 0 ? html`<section class="card">${searchBox()}</section>` : ""}
  ${
    // A page past the last of an account that has sites says so; only an account without any is told how sites come.
    sites.data.length === 0 && sites.pagination.total > 0
      ? html`<section class="card">${emptyPage(sites.pagination, "No websites on this page.", "/sites", query)}</section>`
      : sites.data.length === 0
      ? html`<section class="card" aria-labelledby="no-sites-title">
          <h2 id="no-sites-title">No websites on this account yet</h2>
          <p>Websites are added to your account by the Content-Site team when a site joins the service (an operator imports them); you cannot add one here. Once a site is added, its articles, backlinks and monthly numbers appear on this page.</p>
          <p>Meanwhile you can prepare: create an API key or connect an AI agent on <a href="/connect">Connect Site</a>. Both will see your sites as soon as they are added.</p>
        </section>`
      : html`<div class="grid">${sites.data.map((s) => siteCard(s, stats.get(s.id) ?? null))}</div>`
  }
  ${pager(sites.pagination, "/sites", query)}`

const STATUSES = ["draft", "scheduled", "published", "archived"] as const

/** Which tab of a site is shown. */
export type SiteTab = "articles" | "backlinks"

/** One site: header, this month's summary, and its articles or backlinks. */
export const siteContent = (input: {
  site: Website
  stats: PeriodSummary | null
  tab: SiteTab
  query: Record<string, string | undefined>
  articles: Page<ArticleListItem> | null
  backlinks: Page<Backlink> | null
  error: string | null
  /** The filters the error is about (`from`, `to`, `status`): marked invalid and described by it. */
  invalid: ReadonlyArray<string>
}): Html => {
  const { site, stats, tab, query } = input
  // A filter the error is about points to it.
  const invalid = (field: string) => (input.error && input.invalid.includes(field) ? html` aria-invalid="true" aria-describedby="filter-error"` : "")
  const base = `/sites/${encodeURIComponent(site.id)}`
  const tabLink = (key: SiteTab, label: string) =>
    html`<li><a href="${base}${key === "articles" ? "" : "?tab=backlinks"}"${tab === key ? html` aria-current="page"` : ""}>${label}</a></li>`
  return html`<nav class="breadcrumbs" aria-label="Breadcrumb"><ol><li><a href="/sites">Sites</a></li><li aria-current="page"><bdi>${site.name}</bdi></li></ol></nav>
  <div class="page-head">
    <div><h1><bdi>${site.name}</bdi></h1><p><a href="${site.url}" rel="noopener noreferrer">${site.url}</a> · added ${when(site.created_at)}</p></div>
  </div>
  <section class="card">${searchBox(site)}</section>
  <section class="card" aria-labelledby="summary-title">
    <h2 id="summary-title">This month${stats ? html` <span class="muted">(${day(stats.period.from)} – ${day(stats.period.to)})</span>` : ""}</h2>
    <dl class="stats">
      <div><dt>All articles</dt><dd>${num(site.article_count)}</dd></div>
      <div><dt>All backlinks</dt><dd>${num(site.backlink_count)}</dd></div>
      ${
        stats
          ? html`<div><dt>Published this month</dt><dd>${num(stats.articles.count)}</dd></div>
            <div><dt>Words this month</dt><dd>${num(stats.articles["word count"])}</dd></div>
            <div><dt>Industry links</dt><dd>${num(stats.backlinks.industry)}</dd></div>
            <div><dt>Local links</dt><dd>${num(stats.backlinks.local)}</dd></div>`
          : ""
      }
    </dl>
  </section>
  <ul class="tabs">${tabLink("articles", `Articles (${num(site.article_count)})`)}${tabLink("backlinks", `Backlinks (${num(site.backlink_count)})`)}</ul>
  <section class="card" aria-labelledby="list-title">
    <h2 id="list-title">${tab === "articles" ? "Articles" : "Backlinks"}</h2>
    <form method="get" action="${base}" class="filters" aria-label="Filters">
      ${tab === "backlinks" ? html`<input type="hidden" name="tab" value="backlinks">` : ""}
      <div><label for="from">${tab === "articles" ? "Published from" : "Acquired from"}</label><input type="date" id="from" name="from" value="${query["from"] ?? ""}"${invalid("from")}></div>
      <div><label for="to">to</label><input type="date" id="to" name="to" value="${query["to"] ?? ""}"${invalid("to")}></div>
      ${
        tab === "articles"
          ? html`<div><label for="status">Status</label><select id="status" name="status"${invalid("status")}>
              <option value="">Any status</option>
              ${STATUSES.map((s) => html`<option value="${s}"${query["status"] === s ? " selected" : ""}>${s[0]!.toUpperCase() + s.slice(1)}</option>`)}
            </select></div>`
          : ""
      }
      <div class="actions"><button type="submit" class="button">Apply</button><a class="button button-quiet" href="${base}${tab === "backlinks" ? "?tab=backlinks" : ""}">Reset</a></div>
    </form>
    ${input.error ? html`<div class="notice notice-error" role="alert" id="filter-error"><p>${input.error}</p></div>` : ""}
    ${tab === "articles" && input.articles ? articleTable(input.articles, base, query) : ""}
    ${tab === "backlinks" && input.backlinks ? backlinkTable(input.backlinks, base, query) : ""}
  </section>`
}

/** Whether a filter narrows the list (an empty list then says so, not that the site has none). */
const filtered = (query: Record<string, string | undefined>): boolean => query["from"] !== undefined || query["to"] !== undefined || query["status"] !== undefined

const articleTable = (articles: Page<ArticleListItem>, base: string, query: Record<string, string | undefined>): Html =>
  articles.data.length === 0
    ? emptyPage(articles.pagination, filtered(query) ? "No articles match these filters. Widen the dates, choose another status, or Reset to see them all." : "This site has no articles yet.", base, query)
    : html`<div class="table-wrap"><table class="stacked">
        <caption class="visually-hidden">Articles</caption>
        <thead><tr><th scope="col">Title</th><th scope="col">Status</th><th scope="col">Published</th><th scope="col">Target keyword</th><th scope="col" class="num">Words</th></tr></thead>
        <tbody>${articles.data.map(
          (a) => html`<tr>
            <td data-label="Title"><a href="/articles/${encodeURIComponent(a.id)}"><bdi>${a.title}</bdi></a></td>
            <td data-label="Status">${badge(a.status, a.status)}</td>
            <td data-label="Published">${when(a.published_at)}</td>
            <td data-label="Target keyword">${a["target keyword"]}</td>
            <td data-label="Words" class="num">${num(a["word count"])}</td>
          </tr>`,
        )}</tbody>
      </table></div>
      ${pager(articles.pagination, base, query, "page", "Article pages")}`

const backlinkTable = (backlinks: Page<Backlink>, base: string, query: Record<string, string | undefined>): Html =>
  backlinks.data.length === 0
    ? emptyPage(backlinks.pagination, filtered(query) ? "No backlinks match these filters. Widen the dates, or Reset to see them all." : "This site has no backlinks yet.", base, query)
    : html`<div class="table-wrap"><table class="stacked">
        <caption class="visually-hidden">Backlinks</caption>
        <thead><tr><th scope="col">Acquired</th><th scope="col">Source</th><th scope="col">Anchor</th><th scope="col">Type</th><th scope="col">Category</th><th scope="col">Target</th></tr></thead>
        <tbody>${backlinks.data.map(
          (b) => html`<tr>
            <td data-label="Acquired">${day(b.date_acquired)}</td>
            <td data-label="Source"><a href="${b.source_url}" rel="noopener noreferrer nofollow">${b.source_domain}</a></td>
            <td data-label="Anchor">${b.anchor_text}</td>
            <td data-label="Type">${b.anchor_type}</td>
            <td data-label="Category">${badge(b.category === "industry" ? "Industry" : "Local", b.category)}</td>
            <td data-label="Target"><a href="${b.target_url}" rel="noopener noreferrer">${b.target_url}</a></td>
          </tr>`,
        )}</tbody>
      </table></div>
      ${pager(backlinks.pagination, base, { ...query, tab: "backlinks" }, "page", "Backlink pages")}`
