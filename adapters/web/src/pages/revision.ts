import type { Article, ProtectedBlockViolation, ReadingComparison, Revision } from "@content-site/core"
import { type DiffLine, diffLines } from "@content-site/core"
import { type Html, html } from "../html.ts"
import { csrfInput } from "../layout.ts"
import { extractProtectedBlocks } from "@content-site/core"
import { violationList } from "../ui.ts"
import { wordComparison } from "../wordCompare.ts"
import { protectedHtmlList, restoreOverInput, revisionByline, revisionTag } from "./article.ts"

const CONTEXT = 3

/** Rows of a diff with long unchanged runs folded (they can be unfolded), a few lines of context kept. */
const collapse = (lines: ReadonlyArray<DiffLine>): ReadonlyArray<DiffLine | { gap: ReadonlyArray<DiffLine> }> => {
  const keep = lines.map((l, i) => l.op !== "same" || lines.slice(Math.max(0, i - CONTEXT), i + CONTEXT + 1).some((x) => x.op !== "same"))
  const out: Array<DiffLine | { gap: ReadonlyArray<DiffLine> }> = []
  let gap: Array<DiffLine> = []
  lines.forEach((l, i) => {
    if (keep[i]) {
      if (gap.length > 0) out.push({ gap })
      gap = []
      out.push(l)
    } else gap.push(l)
  })
  if (gap.length > 0) out.push({ gap })
  return out
}

/** A line diff (for example a comparison's `lines`) as an accessible table: removed lines in `<del>`, added lines in `<ins>`. */
export const diffTable = (caption: string, lines: ReadonlyArray<DiffLine>): Html => {
  if (lines.every((l) => l.op === "same")) return html`<p class="empty">${caption}: no differences.</p>`
  const added = lines.filter((l) => l.op === "ins").length
  const removed = lines.filter((l) => l.op === "del").length
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Differences, scroll sideways"><table class="diff">
    <caption>${caption} <span class="muted">(${removed} line${removed === 1 ? "" : "s"} removed, ${added} added)</span></caption>
    <thead><tr><th scope="col">Old</th><th scope="col">New</th><th scope="col"><span class="visually-hidden">Change</span></th><th scope="col">Line</th></tr></thead>
    <tbody>${collapse(lines).map((row) =>
      "gap" in row
        ? html`<tr class="gap"><td colspan="4"><details><summary>${row.gap.length} unchanged line${row.gap.length === 1 ? "" : "s"}<span class="visually-hidden">: show them</span></summary><pre class="unchanged">${row.gap.map((l) => html`<span class="ln">${l.newNo}</span> ${l.text}\n`)}</pre></details></td></tr>`
        : row.op === "same"
          ? html`<tr><td class="ln">${row.oldNo}</td><td class="ln">${row.newNo}</td><td class="sign"></td><td>${row.text}</td></tr>`
          : row.op === "del"
            ? html`<tr class="del"><td class="ln">${row.oldNo}</td><td class="ln"></td><td class="sign" aria-hidden="true">−</td><td><del><span class="visually-hidden">Removed: </span>${row.text}</del></td></tr>`
            : html`<tr class="ins"><td class="ln"></td><td class="ln">${row.newNo}</td><td class="sign" aria-hidden="true">+</td><td><ins><span class="visually-hidden">Added: </span>${row.text}</ins></td></tr>`,
    )}</tbody>
  </table></div>`
}

const safeBlocks = (body: string) => {
  try {
    return extractProtectedBlocks(body)
  } catch {
    return []
  }
}

/** One revision compared with the current article (`comparison`: the two bodies and titles compared, null for the current revision), with Restore. */
export const revisionContent = (input: {
  article: Article
  siteName: string | null
  revision: Revision
  comparison: ReadingComparison | null
  csrf: string
  /** A refused restore's reason as typed, offered back with the form to restore again. */
  /** `uncertain`: the database did not answer, so the restore may or may not have been made (not headed "Not restored."). */
  refusal: { message: string; blocks: ReadonlyArray<ProtectedBlockViolation>; reason?: string; uncertain?: true } | null
}): Html => {
  const { article: a, revision: r } = input
  const id = encodeURIComponent(a.id)
  const comparison = input.comparison
  const isCurrent = r.number === a.revision || comparison === null
  return html`<nav class="breadcrumbs" aria-label="Breadcrumb"><ol>
    <li><a href="/sites">Sites</a></li>
    <li><a href="/sites/${encodeURIComponent(a.site_id)}">${input.siteName ?? a.site_id}</a></li>
    <li><a href="/articles/${id}"><bdi>${a.title}</bdi></a></li>
    <li aria-current="page">Revision ${r.number}</li>
  </ol></nav>
  <div class="page-head">
    <div>
      <h1>Revision ${r.number} ${revisionTag(r)}</h1>
      <p class="muted">${revisionByline(r)}${r.reason ? html` · ${r.reason}` : ""}</p>
    </div>
    <a class="button button-quiet" href="/articles/${id}#revisions">Back to the article</a>
  </div>
  ${
    input.refusal
      ? html`<div class="notice notice-error" role="alert" id="restore-error" tabindex="-1" autofocus><p><strong>${input.refusal.uncertain === true ? "Not confirmed." : "Not restored."}</strong> ${input.refusal.message}</p>${violationList(input.refusal.blocks)}${
          input.refusal.blocks.length > 0 ? html`<p>The current article's protected links, exactly as they are:</p>${protectedHtmlList(safeBlocks(a.body), "current")}` : ""
        }</div>`
      : ""
  }
  <section class="card" aria-labelledby="diff-title" id="diff">
    <h2 id="diff-title">${isCurrent ? "This is the current revision" : html`Changes from revision ${r.number} to the current revision (${a.revision})`}</h2>
    ${
      isCurrent
        ? html`<p class="empty">Pick an older revision on the article page to compare it with this one.</p>`
        : html`${wordComparison({ beforeLabel: `Revision ${r.number}`, afterLabel: `Current (revision ${a.revision})`, comparison })}
          <details class="html-changes"><summary>HTML changes (for developers)</summary>
          ${r.title === a.title ? "" : diffTable("Title", diffLines([r.title], [a.title]))}
          ${diffTable("Body (HTML)", comparison.lines)}
          </details>
          ${JSON.stringify(r["featured image"]) === JSON.stringify(a["featured image"]) ? "" : html`<p>The featured image differs${r["featured image"] ? html` (this revision: <code>${r["featured image"].url}</code>)` : " (this revision had none)"}.</p>`}`
    }
  </section>
  ${
    isCurrent
      ? ""
      : html`<section class="card" aria-labelledby="restore-title">
          <h2 id="restore-title">Restore revision ${r.number}</h2>
          <p>Restoring makes a new revision (tagged Editor) with this revision's title, body and featured image. Nothing is lost: the current text stays in the history.</p>
          <form method="post" action="/articles/${id}/revisions/${r.number}/restore" class="stack" data-confirm="Restore revision ${r.number}? It becomes a new revision; the current text stays in the history.">
            ${csrfInput(input.csrf)}
            ${restoreOverInput(a.revision)}
            <div><label for="restore-reason">Reason <span class="muted">(optional)</span></label><input type="text" id="restore-reason" name="reason" maxlength="500"${input.refusal?.reason ? html` value="${input.refusal.reason}"` : ""}></div>
            <div><button type="submit" class="button">Restore revision ${r.number}</button></div>
          </form>
        </section>`
  }`
}
