import type { ActivityEntry, Article, Page, RevisionSummary } from "@content-site/core"
import { displayName } from "@content-site/http"
import { extractProtectedBlocks } from "@content-site/core"
import type { EditRefusal } from "../drafts.ts"
import { type Html, html } from "../html.ts"
import { csrfInput } from "../layout.ts"
import { FORM_ACCOUNT, refusalHeading } from "../drafts.ts"
import { articlePreview } from "../preview.ts"
import { badge, emptyPage, num, originTag, pager, violationList, when } from "../ui.ts"
import { activityTable } from "./activity.ts"

/** What the edit form shows: the person's own text after a refused edit, else the article's. */
export interface EditForm {
  readonly title: string
  readonly body: string
  readonly reason: string
  /** The revision the person started from (optimistic concurrency). */
  readonly revision: number
  /** The kept draft this form shows, if any (dropped once saved). */
  readonly draftId: string | null
  /** The editor's mode the draft was sent from. */
  readonly mode?: "visual" | "source"
}

/** Everything the article page shows. */
export interface ArticleView {
  readonly article: Article
  readonly siteName: string | null
  readonly revisions: Page<RevisionSummary>
  readonly activity: Page<ActivityEntry>
  readonly form: EditForm
  readonly refusal: EditRefusal | null
  /** The address named a kept draft that is no longer there. */
  readonly missingDraft: boolean
  /** The form shows a refused text too large to keep as a draft: it is on this page only. */
  readonly unkept?: boolean
  readonly csrf: string
  /** The signed-in account the page is made for: the edit form names it (`FORM_ACCOUNT`). */
  readonly account: string
  readonly query: Record<string, string | undefined>
  /** Whether the visual editor's bundle is served (else the body is edited as HTML only). */
  readonly editor?: boolean
}

const protectedBlocksOf = (body: string) => {
  try {
    return extractProtectedBlocks(body)
  } catch {
    return []
  }
}

/** Whether a revision is the article as it was imported (its origin stays `editor`). */
export const isImport = (r: Pick<RevisionSummary, "actor">): boolean => r.actor.type === "system" && r.actor.id === "import"

/** Who made a revision, named as what they are: "API key “ci”", "agent “Claude”", a person's name. */
const madeByWords = (r: RevisionSummary): string =>
  r.origin === "api" ? `API key “${displayName(r.actor.name)}”` : r.origin === "mcp" ? `agent “${displayName(r.actor.name)}”` : displayName(r.actor.name)

/** A revision's tag: "Imported" for the imported first revision (once, instead of its origin), else its origin. */
export const revisionTag = (r: RevisionSummary): Html => (isImport(r) ? html`<span class="tag tag-import">Imported</span>` : originTag(r.origin))

/** Who made a revision and when (the imported one says only when), and what it restored or changed. */
export const revisionByline = (r: RevisionSummary, imageChanged = false): Html =>
  html`${isImport(r) ? "" : html`${madeByWords(r)} · `}${when(r.created_at)}${r.restored_from !== null ? html` · restored from revision ${r.restored_from}` : ""}${
    imageChanged ? " · featured image changed" : ""
  }`

/** The exact HTML of protected links, each ready to copy back into the body. */
export const protectedHtmlList = (blocks: ReadonlyArray<{ readonly canonical: string; readonly text: string }>, idPrefix: string): Html =>
  html`<ol class="protected-html">${blocks.map(
    (b, i) => html`<li><pre><code id="${idPrefix}-${i + 1}">${b.canonical}</code></pre><button type="button" class="button button-quiet button-small" data-copy="${idPrefix}-${i + 1}" hidden>Copy<span class="visually-hidden"> the HTML of “${b.text || "(no text)"}”</span></button></li>`,
  )}</ol>`

/**
 * The restore forms' field naming the article's revision the page showed as current: the restore
 * is refused if another was saved since, rather than replace a change nobody has looked at.
 */
export const RESTORE_OVER = "current_revision"

/** The hidden `RESTORE_OVER` field of a restore form. */
export const restoreOverInput = (revision: number): Html => html`<input type="hidden" name="${RESTORE_OVER}" value="${String(revision)}">`

/** The revision a restore form was sent over (`RESTORE_OVER`), or undefined when it names none (a form of an earlier version of the page). */
export const restoreOverOf = (fields: Readonly<Record<string, string | undefined>>): number | undefined => {
  const value = fields[RESTORE_OVER] ?? ""
  return /^[0-9]{1,15}$/.test(value) ? Number(value) : undefined
}

/** A revision row with its tags, who, when, reason, and its diff and restore actions. */
export const revisionItem = (article: Article, r: RevisionSummary, csrf: string, before?: RevisionSummary): Html => {
  const isCurrent = r.number === article.revision
  const base = `/articles/${encodeURIComponent(article.id)}/revisions/${r.number}`
  const imageChanged = before !== undefined && before["featured image"]?.url !== r["featured image"]?.url
  return html`<li>
    <div>
      <strong>Revision ${r.number}</strong> ${revisionTag(r)}
      ${isCurrent ? html`<span class="current-mark">Current</span>` : ""}
      <div class="muted">${revisionByline(r, imageChanged)}</div>
    </div>
    <div class="rev-actions">
      ${isCurrent ? "" : html`<a class="button button-quiet button-small" href="${base}">Compare<span class="visually-hidden"> revision ${r.number} with current</span></a>
      <form method="post" action="${base}/restore" class="inline" data-confirm="Restore revision ${r.number}? It becomes a new revision; the current text stays in the history.">
        ${csrfInput(csrf)}
        ${restoreOverInput(article.revision)}
        <button type="submit" class="button button-quiet button-small">Restore<span class="visually-hidden"> revision ${r.number}</span></button>
      </form>`}
    </div>
    ${r.reason ? html`<p class="rev-reason">Reason: ${r.reason}</p>` : ""}
  </li>`
}

/**
 * The featured image, with a placeholder behind it that shows when the image cannot be loaded
 * (app.js swaps a broken image for it).
 */
const featuredImage = (image: { url: string; alt: string }): Html =>
  html`<figure class="featured-frame">
    <img class="featured" src="${image.url}" alt="${image.alt}">
    <figcaption class="featured-missing" hidden><strong>The image could not be loaded.</strong> <span class="muted">Its address: <code>${image.url}</code></span></figcaption>
  </figure>`

/** The article page's content. */
export const articleContent = (v: ArticleView): Html => {
  const a = v.article
  const id = encodeURIComponent(a.id)
  const blocks = protectedBlocksOf(a.body)
  // The textarea's content starts with a newline because HTML drops one leading newline there:
  // a body that itself starts with one comes back unchanged.
  return html`<nav class="breadcrumbs" aria-label="Breadcrumb"><ol>
    <li><a href="/sites">Sites</a></li>
    <li><a href="/sites/${encodeURIComponent(a.site_id)}">${v.siteName ?? a.site_id}</a></li>
    <li aria-current="page">${a.title}</li>
  </ol></nav>
  <div class="page-head">
    <div>
      <h1>${a.title}</h1>
      <p>${badge(a.status, a.status)} · <a href="${a.url}" rel="noopener noreferrer">${a.url}</a></p>
    </div>
    <a class="button button-quiet" href="/activity?article=${id}">Full activity log</a>
  </div>
  <div class="layout-2">
    <div>
      <section class="card" aria-labelledby="edit-title" id="edit">
        <h2 id="edit-title">Edit</h2>
        ${
          v.refusal
            ? html`<div class="notice notice-error" role="alert" id="edit-error" tabindex="-1" autofocus>
                <p><strong>${refusalHeading(v.refusal).notice}</strong> ${v.refusal.message}</p>
                ${v.refusal.blocks.length > 0 ? violationList(v.refusal.blocks) : ""}
                ${v.refusal.details.length > 0 ? html`<ul>${v.refusal.details.map((d) => html`<li>${d}</li>`)}</ul>` : ""}
                ${
                  v.refusal.blocks.length > 0 && blocks.length > 0
                    ? html`<p>The article's protected links, exactly as they must stay (copy each back into the body):</p>${protectedHtmlList(blocks, "keep")}`
                    : ""
                }
                ${
                  v.unkept === true
                    ? html`<p class="hint">Your text is below, as you sent it, but it is too large to keep as a draft (a body of at most 1 MiB, a title and reason of at most 16 KiB): it is on this page only. Shorten it and save again, or copy it somewhere before you leave or reload.</p>`
                    : html`<p class="hint">Your text is kept below: check it and save again.</p>`
                }
              </div>`
            : v.missingDraft
              ? html`<div class="notice notice-info" role="status" id="edit-error" tabindex="-1" autofocus><p>That unsaved edit is no longer kept here (it was saved, is more than a day old, or was made in another browser). The form shows the current article.</p></div>`
              : ""
        }
        <form method="post" action="/articles/${id}/edit" class="stack" data-unsaved-warning="${v.form.draftId === null ? "" : "draft"}">
          ${csrfInput(v.csrf)}
          <input type="hidden" name="${FORM_ACCOUNT}" value="${v.account}">
          <input type="hidden" name="revision" value="${v.form.revision}">
          ${v.form.draftId === null ? "" : html`<input type="hidden" name="draft" value="${v.form.draftId}">`}
          <div><label for="title">Title</label><input type="text" id="title" name="title" value="${v.form.title}" required maxlength="300"></div>
          ${/[\r\n]/.test(v.form.title) ? html`<input type="hidden" name="title_as_stored" value="${JSON.stringify(v.form.title)}">` : ""}
          <div>
            <label for="body">Body (HTML)</label>
            <p class="hint" id="body-hint">Scripts, frames, styles and event handlers are removed when you save. Keep every element with <code>data-service-protected</code> exactly as it is.</p>
            <textarea id="body" name="body" class="code" aria-describedby="body-hint${v.refusal ? " edit-error" : ""}"${v.refusal ? html` aria-invalid="true"` : ""} spellcheck="false"${v.editor ? html` data-editor data-preview="/articles/${id}/preview"${v.form.mode === "source" ? html` data-mode="source"` : ""}` : ""}>
${v.form.body}</textarea>
          </div>
          <div><label for="reason">Reason <span class="muted">(optional)</span></label><input type="text" id="reason" name="reason" value="${v.form.reason}" maxlength="500"></div>
          <div id="edit-preview" class="edit-preview" aria-live="polite" hidden></div>
          <div><button type="submit" class="button">Save as new revision</button></div>
        </form>
        ${v.editor ? html`<link rel="stylesheet" href="/static/editor.css"><script src="/static/editor.js" defer></script>` : ""}
      </section>
      <section class="card" aria-labelledby="preview-title">
        <h2 id="preview-title">The article as readers see it</h2>
        ${articlePreview(a.body, a.title)}
        <p class="legend"><span class="lock">Protected</span> Protected links (inserted backlinks and internal links) are outlined. They cannot be removed or changed, only moved.</p>
      </section>
    </div>
    <div>
      <section class="card" aria-labelledby="details-title">
        <h2 id="details-title">Details</h2>
        <dl class="meta">
          <dt>Revision</dt><dd>${a.revision}</dd>
          <dt>Published</dt><dd>${when(a.published_at)}</dd>
          <dt>Updated</dt><dd>${when(a.updated_at)}</dd>
          <dt>Target keyword</dt><dd>${a["target keyword"]}</dd>
          <dt>Words</dt><dd>${num(a["word count"])}</dd>
        </dl>
      </section>
      <section class="card" aria-labelledby="protected-title">
        <h2 id="protected-title">Protected links (${blocks.length})</h2>
        ${
          blocks.length === 0
            ? html`<p class="empty">This article has no protected links.</p>`
            : html`<ul class="protected-list">${blocks.map((b) => html`<li>“${b.text || "(no text)"}”${b.href ? html` → <code>${b.href}</code>` : ""}</li>`)}</ul>`
        }
      </section>
      <section class="card" aria-labelledby="image-title">
        <h2 id="image-title">Featured image</h2>
        ${a["featured image"] ? featuredImage(a["featured image"]) : html`<p class="empty">No featured image.</p>`}
        <form method="post" action="/articles/${id}/image" enctype="multipart/form-data" class="stack">
          ${csrfInput(v.csrf)}
          <div><label for="image">New image</label><input type="file" id="image" name="image" accept="image/jpeg,image/png,image/webp,image/gif,image/avif" required aria-describedby="image-hint">
            <p class="hint" id="image-hint">JPEG, PNG, WebP, GIF or AVIF, at most 10 MiB and 8000 px a side.</p></div>
          <div><label for="alt">Alternative text</label><input type="text" id="alt" name="alt" value="${a["featured image"]?.alt ?? ""}"></div>
          <div><button type="submit" class="button button-quiet">Upload image</button></div>
        </form>
      </section>
      <section class="card" aria-labelledby="revisions-title" id="revisions">
        <h2 id="revisions-title">Revisions</h2>
        ${v.revisions.data.length === 0
          ? emptyPage(v.revisions.pagination, "No revisions.", `/articles/${id}`, v.query, "rev_page", "#revisions")
          : html`<ul class="revisions">${v.revisions.data.map((r, i) => revisionItem(a, r, v.csrf, v.revisions.data[i + 1]))}</ul>`}
        ${pager(v.revisions.pagination, `/articles/${id}`, v.query, "rev_page", "Revision pages", "#revisions")}
      </section>
    </div>
  </div>
  <section class="card" aria-labelledby="activity-title" id="activity">
    <h2 id="activity-title">Activity on this article</h2>
    <p class="muted">Changes and attempted changes, by API, agents and these pages. <a href="/activity?article=${id}">Everything on this article, reads included</a></p>
    ${activityTable(v.activity, new Map(), false, emptyPage(v.activity.pagination, "No changes to this article yet.", `/articles/${id}`, v.query, "act_page", "#activity"))}
    ${pager(v.activity.pagination, `/articles/${id}`, v.query, "act_page", "Activity pages", "#activity")}
  </section>`
}
