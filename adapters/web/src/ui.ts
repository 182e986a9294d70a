import type { Origin, Pagination, ProtectedBlockViolation } from "@content-site/core"
import { type Html, html } from "./html.ts"

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

/** A timestamp as people read it, in UTC, inside a machine-readable `<time>`. */
export const when = (iso: string | null): Html => {
  if (iso === null) return html`<span class="muted">—</span>`
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return html`${iso}`
  const hh = String(d.getUTCHours()).padStart(2, "0")
  const mm = String(d.getUTCMinutes()).padStart(2, "0")
  return html`<time datetime="${iso}">${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${hh}:${mm} UTC</time>`
}

/** A calendar date as people read it. */
export const day = (date: string | null): Html => {
  if (date === null) return html`<span class="muted">—</span>`
  const d = new Date(`${date.slice(0, 10)}T00:00:00Z`)
  if (Number.isNaN(d.getTime())) return html`${date}`
  return html`<time datetime="${date.slice(0, 10)}">${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}</time>`
}

// The words the activity log uses for the same channels: an agent's revisions are "Agent (MCP)" everywhere.
const ORIGIN_LABEL: Record<Origin, string> = { api: "API", mcp: "Agent (MCP)", editor: "Editor", rewrite: "Rewrite" }

/** The origin tag of a revision. */
export const originTag = (origin: Origin): Html => html`<span class="tag tag-${origin}">${ORIGIN_LABEL[origin]}</span>`

/** A status badge (article status or call outcome). */
export const badge = (text: string, tone: string): Html => html`<span class="badge badge-${tone}">${text}</span>`

/** Formats a number with thousands separators. */
export const num = (n: number): string => n.toLocaleString("en-GB")

/** Previous/next page navigation that keeps the other query parameters. */
const pageLink = (basePath: string, query: Record<string, string | undefined>, pageParam: string, anchor: string) => (n: number) => {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== "" && k !== pageParam) q.set(k, v)
  q.set(pageParam, String(n))
  return `${basePath}?${q.toString()}${anchor}`
}

/**
 * What an empty page of a list says: past the last page, that it is (with a link to the last);
 * otherwise that nothing matches (`none`).
 */
export const emptyPage = (p: Pagination, none: string, basePath: string, query: Record<string, string | undefined>, pageParam = "page", anchor = ""): Html =>
  p.total > 0 && p.page > p.total_pages
    ? html`<p class="empty">Page ${p.page} is past the end: there ${p.total_pages === 1 ? "is only 1 page" : `are only ${p.total_pages} pages`}. <a href="${pageLink(basePath, query, pageParam, anchor)(p.total_pages)}">Go to page ${p.total_pages}</a>.</p>`
    : html`<p class="empty">${none}</p>`

export const pager = (
  p: Pagination,
  basePath: string,
  query: Record<string, string | undefined>,
  pageParam = "page",
  label = "Pages",
  anchor = "",
): Html => {
  // past the end, the empty page's sentence links back (emptyPage): no "Previous" to another page past the end
  if (p.total_pages <= 1 || p.page > p.total_pages) return html``
  const link = pageLink(basePath, query, pageParam, anchor)
  // (the first and the last page a click away from anywhere: an activity log runs to thousands)
  return html`<nav class="pager" aria-label="${label}">
    <span class="pager-side">${p.page > 2 ? html`<a class="button button-quiet" href="${link(1)}">« First</a>` : ""}${p.page > 1 ? html`<a class="button button-quiet" href="${link(p.page - 1)}" rel="prev">← Previous</a>` : ""}</span>
    <span class="pager-info">Page ${p.page} of ${Math.max(1, p.total_pages)} · ${num(p.total)} in all</span>
    <span class="pager-side">${p.page < p.total_pages ? html`<a class="button button-quiet" href="${link(p.page + 1)}" rel="next">Next →</a>` : ""}${p.page < p.total_pages - 1 ? html`<a class="button button-quiet" href="${link(p.total_pages)}">Last »</a>` : ""}</span>
  </nav>`
}

const KIND_TEXT: Record<ProtectedBlockViolation["kind"], string> = {
  removed: "Removed",
  changed: "Changed",
  forged: "Not allowed to add",
  hidden: "Hidden or struck through",
}

/** The list of protected blocks that a refused edit or restore would break. */
export const violationList = (blocks: ReadonlyArray<ProtectedBlockViolation>): Html =>
  html`<ul class="violations">${blocks.map(
    (b) => html`<li><strong>${KIND_TEXT[b.kind]}:</strong> the protected link “${b.text || "(no text)"}”${
      b.href ? html` → <code>${b.href}</code>` : ""
    }${b.kind === "forged" ? " (only the platform can mark a block as protected)" : b.kind === "changed" ? " (its link, text or attributes differ)" : b.kind === "hidden" ? " (it is inside a deletion, strike-through, collapsed details or hidden element: it must stay visible)" : " (it must stay in the article)"}</li>`,
  )}</ul>`
