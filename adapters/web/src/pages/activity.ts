import type { ActivityEntry, Page } from "@content-site/core"
import { type Html, html } from "../html.ts"
import { badge, pager, when } from "../ui.ts"

const CHANNEL_LABEL: Record<ActivityEntry["channel"], string> = { api: "API", mcp: "MCP", web: "Web", platform: "Platform" }

const outcomeBadge = (e: ActivityEntry): Html => {
  const failed = e.error_code !== null || (typeof e.status === "number" ? e.status >= 400 : e.status === "error")
  return html`${badge(String(e.status), failed ? "error" : "ok")}${e.error_code ? html` <code>${e.error_code}</code>` : ""}`
}

/** A table of activity entries. */
export const activityTable = (entries: Page<ActivityEntry>, showArticle: boolean): Html =>
  entries.data.length === 0
    ? html`<p class="empty">No activity matches.</p>`
    : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Table, scrolls sideways"><table>
        <caption class="visually-hidden">Activity</caption>
        <thead><tr><th scope="col">When</th><th scope="col">Channel</th><th scope="col">Who</th><th scope="col">Action</th>${showArticle ? html`<th scope="col">Article</th>` : ""}<th scope="col">Result</th><th scope="col" class="num">Time</th></tr></thead>
        <tbody>${entries.data.map(
          (e) => html`<tr>
            <td>${when(e.at)}</td>
            <td>${CHANNEL_LABEL[e.channel]}</td>
            <td>${e.actor?.name ?? html`<span class="muted">anonymous</span>`}</td>
            <td><code>${e.action}</code></td>
            ${showArticle ? html`<td>${e.article_id ? html`<a href="/articles/${encodeURIComponent(e.article_id)}">${e.article_id}</a>` : html`<span class="muted">—</span>`}</td>` : ""}
            <td>${outcomeBadge(e)}</td>
            <td class="num">${e.duration_ms} ms</td>
          </tr>`,
        )}</tbody>
      </table></div>`

/** The account's activity log with its filters. */
export const activityContent = (input: {
  entries: Page<ActivityEntry> | null
  query: Record<string, string | undefined>
  error: string | null
}): Html => {
  const q = input.query
  const opt = (name: string, value: string, label: string) => html`<option value="${value}"${q[name] === value ? " selected" : ""}>${label}</option>`
  return html`<div class="page-head"><div><h1>Activity</h1><p class="muted">Every API call, agent (MCP) tool call and web action on this account, newest first.</p></div></div>
  <section class="card" aria-labelledby="filters-title">
    <h2 id="filters-title" class="visually-hidden">Filters</h2>
    <form method="get" action="/activity" class="filters">
      ${q["article"] ? html`<input type="hidden" name="article" value="${q["article"]}">` : ""}
      <div><label for="channel">Channel</label><select id="channel" name="channel">${opt("channel", "", "All channels")}${opt("channel", "api", "API")}${opt("channel", "mcp", "MCP")}${opt("channel", "web", "Web")}${opt("channel", "platform", "Platform")}</select></div>
      <div><label for="status">Result</label><select id="status" name="status">${opt("status", "", "Any result")}${opt("status", "ok", "Succeeded")}${opt("status", "error", "Refused or failed")}</select></div>
      <div><label for="from">From</label><input type="date" id="from" name="from" value="${q["from"] ?? ""}"></div>
      <div><label for="to">To</label><input type="date" id="to" name="to" value="${q["to"] ?? ""}"></div>
      <div class="actions"><button type="submit" class="button">Apply</button><a class="button button-quiet" href="/activity">Reset</a></div>
    </form>
    ${q["article"] ? html`<p>Showing the activity of article <a href="/articles/${encodeURIComponent(q["article"])}">${q["article"]}</a> only. <a href="/activity">Show all</a></p>` : ""}
  </section>
  ${input.error ? html`<div class="notice notice-error" role="alert"><p>${input.error}</p></div>` : ""}
  <section class="card" aria-labelledby="log-title">
    <h2 id="log-title">Log</h2>
    ${input.entries ? html`${activityTable(input.entries, true)}${pager(input.entries.pagination, "/activity", q)}` : ""}
  </section>`
}
