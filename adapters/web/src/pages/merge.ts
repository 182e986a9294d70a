import type { Article, MergeConflict, ReadingComparison } from "@content-site/core"
import { type Html, html } from "../html.ts"
import { csrfInput } from "../layout.ts"
import { FORM_ACCOUNT, refusalHeading } from "../drafts.ts"
import { wordComparison } from "../wordCompare.ts"

/** Everything the conflict page shows: the parts both writers changed differently, theirs beside yours. */
export interface MergeView {
  readonly article: Article
  readonly draftId: string
  /** The revision the person's edit was written against. */
  readonly base: number
  /** The revision whose changes conflict with theirs (the article's current one when the page was made). */
  readonly theirs: number
  /** Who made revision `theirs` ("Claude (Agent (MCP))"). */
  readonly theirsBy: string
  readonly conflicts: ReadonlyArray<MergeConflict>
  /** Theirs against mine, word by word, for the first body conflicts (by unit); the rest are shown side by side as they are. */
  readonly comparisons: ReadonlyMap<string, ReadingComparison>
  /** Changes of theirs that merge cleanly and are kept whatever is chosen here. */
  readonly mergedUnits: number
  readonly reason: string
  /**
   * The person's whole edit (the draft's title and body as typed), sent back with the form: if the
   * sign-in has ended when it arrives, the draft (kept for that session) cannot be read, and this
   * text is kept instead and offered back after the next sign-in.
   */
  readonly mine: { readonly title: string; readonly body: string }
  readonly csrf: string
  /** The signed-in account the page is made for: the form names it (`FORM_ACCOUNT`). */
  readonly account: string
  /** Choices already made (after a form sent without one for every part), by unit. */
  readonly chosen: ReadonlyMap<string, "theirs" | "mine" | "edit">
  /** The text typed for each part (after a form sent back), whichever version was chosen: shown again, not lost. */
  readonly typed: ReadonlyMap<string, string>
  /** Why the form was sent back, if it was. */
  readonly error: string | null
  /** The error is of a save the database did not confirm: it may have been saved, so it is not headed "Not saved". */
  readonly errorUncertain?: true
}

const unitLabel = (unit: string, index: number): string => (unit === "title" ? "The title" : `Part ${index + 1} of the body`)
const fieldOf = (unit: string): string => unit.replace("/", "_")

/** The page a person settles a conflict on: each conflicting part, their version beside yours, a choice for each. */
export const mergeContent = (v: MergeView): Html => {
  const id = encodeURIComponent(v.article.id)
  const theirsLabel = `Their version (revision ${v.theirs}, by ${v.theirsBy})`
  let bodyIndex = 0
  return html`<nav class="breadcrumbs" aria-label="Breadcrumb"><ol>
    <li><a href="/sites">Sites</a></li>
    <li><a href="/articles/${id}">${v.article.title}</a></li>
    <li aria-current="page">Settle a conflict</li>
  </ol></nav>
  <div class="page-head"><div><h1>Your edit and revision ${v.theirs} changed the same parts</h1></div></div>
  <section class="card stack" aria-labelledby="merge-title">
    <h2 id="merge-title" class="visually-hidden">Conflicting parts</h2>
    ${
      v.error === null
        ? ""
        : html`<div class="notice notice-error" role="alert" id="merge-error" tabindex="-1" autofocus><p><strong>${refusalHeading(v.errorUncertain === true ? { uncertain: true } : null).notice}</strong> ${v.error}</p></div>`
    }
    <div class="notice notice-info" role="status">
      <p>Nothing is saved yet, and nothing is lost: you edited revision ${v.base}, and meanwhile ${v.theirsBy} saved
      <a href="/articles/${id}/revisions/${v.theirs}">revision ${v.theirs}</a>.
      ${v.mergedUnits > 0 ? `${v.mergedUnits} of their changes touch other parts and are kept beside yours. ` : ""}
      Below ${v.conflicts.length === 1 ? "is the part" : `are the ${v.conflicts.length} parts`} you both changed differently:
      choose a version for each (or write one), then save. Everything else of yours is saved as you wrote it.</p>
    </div>
    <form method="post" action="/articles/${id}/merge" class="stack">
      ${csrfInput(v.csrf)}
      <input type="hidden" name="${FORM_ACCOUNT}" value="${v.account}">
      <input type="hidden" name="draft" value="${v.draftId}">
      <input type="hidden" name="theirs" value="${v.theirs}">
      <input type="hidden" name="base" value="${v.base}">
      <input type="hidden" name="mine_title" value="${JSON.stringify(v.mine.title)}">
      <input type="hidden" name="mine_body" value="${v.mine.body}">
      ${v.conflicts.map((c) => {
        const label = unitLabel(c.unit, c.unit === "title" ? 0 : bodyIndex++)
        const field = fieldOf(c.unit)
        const chosen = v.chosen.get(c.unit)
        // what was typed for it, else (a form that sent no text for a part it chose to edit) nothing, else mine
        const mineOrEdit = v.typed.get(c.unit) ?? (chosen === "edit" ? "" : c.mine)
        return html`<fieldset class="merge-unit card" id="unit-${field}">
          <legend>${label}</legend>
          ${
            c.unit === "title"
              ? html`<dl class="meta"><dt>${theirsLabel}</dt><dd>${c.theirs}</dd><dt>Your version</dt><dd>${c.mine}</dd><dt>Before both</dt><dd>${c.base}</dd></dl>`
              : v.comparisons.has(c.unit)
                ? wordComparison({ beforeLabel: theirsLabel, afterLabel: "Your version", comparison: v.comparisons.get(c.unit)! })
                : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Both versions"><table class="compare"><thead><tr><th scope="col">${theirsLabel}</th><th scope="col">Your version</th></tr></thead>
                  <tbody><tr class="changed"><td><code>${c.theirs}</code></td><td><code>${c.mine}</code></td></tr></tbody></table></div>`
          }
          <div class="choices" role="radiogroup" aria-label="Which version of ${label.toLowerCase()} to save">
            <label><input type="radio" name="choice_${field}" value="theirs" required${chosen === "theirs" ? " checked" : ""}> Keep their version</label>
            <label><input type="radio" name="choice_${field}" value="mine"${chosen === "mine" ? " checked" : ""}> Keep my version (replaces theirs)</label>
            <label><input type="radio" name="choice_${field}" value="edit"${chosen === "edit" ? " checked" : ""}> Use the text below</label>
          </div>
          <div>
            <label for="edit_${field}">${c.unit === "title" ? "Title to save (if you choose the text below)" : "HTML to save (if you choose the text below)"}</label>
            ${
              c.unit === "title"
                ? html`<input type="text" id="edit_${field}" name="edit_${field}" value="${mineOrEdit}" maxlength="300">`
                : html`<textarea id="edit_${field}" name="edit_${field}" class="code" rows="6" spellcheck="false">
${mineOrEdit}</textarea>`
            }
          </div>
        </fieldset>`
      })}
      <div><label for="reason">Reason <span class="muted">(optional)</span></label><input type="text" id="reason" name="reason" value="${v.reason}" maxlength="450"></div>
      <div class="actions"><button type="submit" class="button">Save with these choices</button>
      <a class="button button-quiet" href="/articles/${id}?draft=${v.draftId}#edit">Back to my text</a></div>
    </form>
  </section>`
}

/** The form field names of a unit's choice and edited text. */
export const mergeFields = (unit: string): { readonly choice: string; readonly edit: string } => ({ choice: `choice_${fieldOf(unit)}`, edit: `edit_${fieldOf(unit)}` })
