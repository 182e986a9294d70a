import type { ActivityEntry, Page } from "@content-site/core"
import { CHANNEL_WORDS, entryWords, failed, outcomeWords, whoWords } from "../activityWords.ts"
import { type Html, html } from "../html.ts"
import { badge, emptyPage, pager, when } from "../ui.ts"

/** Article titles by id, for the entries of a page (an article not found keeps its id). */
export type TitlesById = ReadonlyMap<string, string>

const callLine = (e: ActivityEntry): string => (e.channel === "mcp" ? `tool ${e.action}` : e.action)

/** One entry's technical facts, folded away: call, status, code, duration, request id. */
const entryDetails = (e: ActivityEntry): Html => html`<details class="entry-details"><summary>Details<span class="visually-hidden"> of this entry</span></summary>
  <dl class="meta">
    <dt>Call</dt><dd><code>${callLine(e)}</code></dd>
    <dt>Status</dt><dd><code>${String(e.status)}</code>${e.error_code ? html` <code>${e.error_code}</code>` : ""}</dd>
    <dt>Duration</dt><dd>${e.duration_ms} ms</dd>
    <dt>Request id</dt><dd><code>${e.request_id}</code></dd>
    ${e.count > 1 ? html`<dt>Calls</dt><dd>${e.count}</dd>` : ""}
  </dl>
</details>`

const articleLink = (e: ActivityEntry, titles: TitlesById): Html =>
  e.article_id === null ? html`` : html` <a href="/articles/${encodeURIComponent(e.article_id)}"><bdi>${titles.get(e.article_id) ?? e.article_id}</bdi></a>`

/** An entry that sums refused calls says how many it stands for. */
const repeated = (e: ActivityEntry): Html =>
  e.count > 1 ? html` <span class="muted">(${e.count} refused calls in this minute, counted in one entry)</span>` : html``

/** A table of activity entries in words, each with its technical details folded away. */
export const activityTable = (entries: Page<ActivityEntry>, titles: TitlesById, showArticle: boolean, empty: Html = html`<p class="empty">No activity matches.</p>`): Html =>
  entries.data.length === 0
    ? empty
    : html`<table class="stacked activity">
        <caption class="visually-hidden">Activity</caption>
        <thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Channel</th><th scope="col">Who</th><th scope="col">Result</th></tr></thead>
        <tbody>${entries.data.map(
          (e) => html`<tr>
            <td data-label="When">${when(e.at)}</td>
            <td data-label="What"><strong>${entryWords(e)}</strong>${showArticle ? articleLink(e, titles) : ""}${repeated(e)}${entryDetails(e)}</td>
            <td data-label="Channel">${CHANNEL_WORDS[e.channel]}</td>
            <td data-label="Who">${whoWords(e)}</td>
            <td data-label="Result">${badge(outcomeWords(e), failed(e) ? "error" : "ok")}</td>
          </tr>`,
        )}</tbody>
      </table>`

/** The account's activity log with its filters. */
export const activityContent = (input: {
  entries: Page<ActivityEntry> | null
  titles: TitlesById
  /** The articles the article filter offers, by title. */
  articles: ReadonlyArray<{ readonly id: string; readonly title: string }>
  query: Record<string, string | undefined>
  error: string | null
  /** The filters the error is about (`channel`, `status`, `article`, `from`, `to`): marked invalid and described by it. */
  invalid: ReadonlyArray<string>
}): Html => {
  const q = input.query
  // A filter the error is about points to it.
  const invalid = (field: string) => (input.error && input.invalid.includes(field) ? html` aria-invalid="true" aria-describedby="filter-error"` : "")
  // an article's title may be right to left: its option takes the direction of its own text
  const opt = (name: string, value: string, label: string, auto = false) => html`<option value="${value}"${(q[name] ?? "") === value ? " selected" : ""}${auto ? html` dir="auto"` : ""}>${label}</option>`
  const articles = q["article"] !== undefined && !input.articles.some((a) => a.id === q["article"])
    ? [...input.articles, { id: q["article"], title: input.titles.get(q["article"]) ?? q["article"] }]
    : input.articles
  return html`<div class="page-head"><div><h1>Activity</h1><p class="muted">What happened on this account, newest first: API calls, agent (MCP) tool calls, and the changes and sign-ins made on these pages.</p></div></div>
  <section class="card" aria-labelledby="filters-title">
    <h2 id="filters-title" class="visually-hidden">Filters</h2>
    <form method="get" action="/activity" class="filters">
      <div><label for="channel">Channel</label><select id="channel" name="channel"${invalid("channel")}>${opt("channel", "", "All channels")}${opt("channel", "api", "API")}${opt("channel", "mcp", "Agent (MCP)")}${opt("channel", "web", "Web")}${opt("channel", "platform", "Platform (rewrite job, administrator)")}</select></div>
      <div><label for="status">Result</label><select id="status" name="status"${invalid("status")}>${opt("status", "", "Any result")}${opt("status", "ok", "Done")}${opt("status", "error", "Refused or failed")}</select></div>
      <div><label for="article">Article</label><select id="article" name="article"${invalid("article")}>${opt("article", "", "All articles")}${articles.map((a) => opt("article", a.id, a.title, true))}</select></div>
      <div><label for="from">From</label><input type="date" id="from" name="from" value="${q["from"] ?? ""}"${invalid("from")}></div>
      <div><label for="to">To</label><input type="date" id="to" name="to" value="${q["to"] ?? ""}"${invalid("to")}></div>
      <div class="check"><label class="radio"><input type="checkbox" name="changes" value="1"${q["changes"] === "1" ? " checked" : ""}> Changes only</label></div>
      <div class="actions"><button type="submit" class="button">Apply</button><a class="button button-quiet" href="/activity">Reset</a></div>
    </form>
  </section>
  ${input.error ? html`<div class="notice notice-error" role="alert" id="filter-error" tabindex="-1" autofocus><p>${input.error}</p></div>` : ""}
  <section class="card" aria-labelledby="log-title">
    <h2 id="log-title">Log</h2>
    ${input.entries ? html`${activityTable(input.entries, input.titles, true, emptyPage(input.entries.pagination, ["channel", "status", "from", "to", "article", "changes"].some((f) => q[f] !== undefined) ? "No activity matches these filters. Widen the dates, choose another channel, result or article, or Reset to see it all." : "Nothing has happened on this account yet.", "/activity", q))}${pager(input.entries.pagination, "/activity", q)}` : ""}
  </section>`
}
