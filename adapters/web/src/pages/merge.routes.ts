/** Routes: the conflict page, where a person settles the parts their edit and a newer revision changed differently. */
import type Router from "@koa/router"
import {
  type ArticleMerge,
  type ConflictChoice,
  decodeInput,
  getArticle,
  getRevision,
  HtmlAnalyzer,
  problemKindOf,
  type RateLimited,
  settleMerge,
  type Unavailable,
  UpdateArticleBody,
  updateArticle,
} from "@content-site/core"
import { problemHeaders, setFlash } from "@content-site/http"
import { Effect, Result } from "effect"
import { noteCommitted, noteError, noteOutcome, noteSubject, runCore, runCoreOrThrow } from "../call.ts"
import { type Draft, type EditRefusal, dropDraft, refusalHeading, findDraft, keepable, keepDraft, keepPendingDraft, MAX_SETTLING_UNITS, sentFromOwnPage, type Settling } from "../drafts.ts"
import { type FormFields, hiddenTextOf, queryParam, readForm } from "../forms.ts"
import { csrfOk } from "@content-site/http"
import { type Ctx, articleId, CSRF_REFUSED, CsrfRejected, isId, positiveNumberOf, queryOf, redirect, type PageKit, type Signed } from "../pageKit.ts"
import { draftUrl, isCallersArticle, keepForItsAccount, landOnDraft, madeBy, mergeUrl, OPENED_FOR_ANOTHER, openedForAnother, refusalOf, SAVED_ALREADY, savedFlash, whoMadeSince } from "./editOutcome.ts"
import { mergeContent, mergeFields } from "./merge.ts"

/** A conflict page's field of a unit's choice or typed text: `choice_title`, `edit_body_3`. */
const SETTLING_FIELD = /^(choice|edit)_(title|body_([0-9]{1,6}))$/

/** Conflicting parts shown with word marks (one comparison each); any further parts are shown side by side as they are. */
const MAX_COMPARED_PARTS = 20

export const mountMergeRoutes = (router: Router, kit: PageKit): void => {
  const { deps, render, signedIn } = kit

  /** The three-way merge of a draft (mine, written against its revision) with revision `theirs` of the article. */
  const mergeOf = (s: Signed, id: string, draft: Draft, theirs: number, withComparisons = false) =>
    runCoreOrThrow(
      deps,
      Effect.gen(function* () {
        const analyzer = yield* HtmlAnalyzer
        const [base, their, mine] = yield* Effect.all(
          [getRevision(s.caller, id, draft.revision), getRevision(s.caller, id, theirs), analyzer.analyze(draft.body, s.caller.accountId)],
          { concurrency: 3 },
        )
        const merge: ArticleMerge = yield* analyzer.merge(
          { title: base.title, body: base.body },
          { title: their.title, body: their.body },
          { title: draft.title.trim(), body: mine.html },
          s.caller.accountId,
        )
        // Word marks for the first parts, each one comparison within its budget, off the event loop.
        const compared = withComparisons ? merge.conflicts.filter((c) => c.unit !== "title").slice(0, MAX_COMPARED_PARTS) : []
        const comparisons = new Map(
          yield* Effect.forEach(compared, (c) => Effect.map(analyzer.compare(c.theirs, c.mine, { reading: true }, s.caller.accountId), (comparison) => [c.unit, comparison] as const), {
            concurrency: 1,
          }),
        )
        return { merge, theirsBy: madeBy(their), comparisons }
      }),
    )

  const show = async (
    ctx: Ctx,
    s: Signed,
    status: number,
    id: string,
    draftId: string,
    draft: Draft,
    theirs: number,
    chosen: ReadonlyMap<string, "theirs" | "mine" | "edit">,
    typed: ReadonlyMap<string, string>,
    error: string | null,
    uncertain?: true,
  ) => {
    const article = await runCoreOrThrow(deps, getArticle(s.caller, id))
    noteSubject(ctx, { siteId: article.site_id, articleId: id })
    const { merge, theirsBy, comparisons } = await mergeOf(s, id, draft, theirs, true)
    // Settled meanwhile (their change was undone, say): the text goes back to the edit form.
    if (merge.conflicts.length === 0) return redirect(ctx, draftUrl(id, draftId))
    render(
      ctx,
      status,
      s,
      "sites",
      `${error === null ? "" : refusalHeading(uncertain === true ? { uncertain } : null).title}Settle a conflict · ${article.title}`,
      mergeContent({ article, draftId, base: draft.revision, theirs, theirsBy, conflicts: merge.conflicts, comparisons, mergedUnits: merge.mergedUnits, reason: draft.reason, mine: { title: draft.title, body: draft.body }, csrf: s.session.csrf, account: s.caller.accountId, chosen, typed, error, ...(uncertain === true ? { errorUncertain: uncertain } : {}) }),
      null,
      true,
    )
  }

  router.get(
    "/articles/:id/merge",
    signedIn("GET /articles/{id}/merge", async (ctx, s) => {
      const id = articleId(ctx)
      queryOf(ctx, ["draft"])
      const draftId = queryParam(ctx, "draft")
      const draft = await findDraft(deps, s.session, id, draftId)
      if (draft === null || draftId === undefined) return redirect(ctx, `/articles/${encodeURIComponent(id)}?draft=${draftId ?? ""}#edit`)
      if (draft.refusal.conflictWith === undefined) return redirect(ctx, draftUrl(id, draftId))
      // What was chosen and typed on a conflict page whose form could not be saved in its session: shown again as it was sent, against the same revision.
      const settling = draft.settling
      if (settling !== undefined) {
        const chosen = new Map(Object.entries(settling.chosen).filter(([, take]) => take === "theirs" || take === "mine" || take === "edit"))
        return show(ctx, s, 200, id, draftId, draft, settling.theirs, chosen, new Map(Object.entries(settling.typed)), draft.refusal.message, draft.refusal.uncertain)
      }
      const article = await runCoreOrThrow(deps, getArticle(s.caller, id))
      // Always against the newest revision: a page reloaded after yet another save shows what conflicts now.
      await show(ctx, s, 200, id, draftId, draft, article.revision, new Map(), new Map(), null)
    }),
  )

  /**
   * The choices and typed texts a conflict page's form sent (`choice_<unit>`, `edit_<unit>`),
   * read without the merge (no session to read it with), so by their names alone; none without
   * a revision `theirs` to settle against.
   */
  const settlingSent = (fields: FormFields): Settling | undefined => {
    const theirs = positiveNumberOf(fields["theirs"])
    if (theirs === undefined) return undefined
    const chosen: Record<string, "theirs" | "mine" | "edit"> = {}
    const typed: Record<string, string> = {}
    // (a form of more fields than a draft keeps is not read on: its settling would not be kept,
    // and a 4 MiB form of short fields would otherwise make records of a million units)
    let fieldsRead = 0
    for (const [name, value] of Object.entries(fields)) {
      const field = SETTLING_FIELD.exec(name)
      if (field === null) continue
      if (++fieldsRead > 2 * MAX_SETTLING_UNITS) return undefined
      const unit = field[2] === "title" ? "title" : `body/${field[3]}`
      if (field[1] === "edit") typed[unit] = value
      else if (value === "theirs" || value === "mine" || value === "edit") chosen[unit] = value
    }
    return { theirs, chosen, typed }
  }

  /**
   * The person's edit as the conflict page sends it back (`mine_title`, `mine_body`, against
   * revision `base`), for when the draft it came from cannot be read: its session has ended.
   * With it, what they chose and typed there, to settle against revision `theirs` on the
   * conflict page again, when that fits beside their edit in a draft's bound (else their edit alone).
   */
  const sentBack = (id: string, fields: FormFields, message: string): Draft | null => {
    if (fields["mine_body"] === undefined) return null
    const mine: Draft = {
      articleId: id,
      // (as JSON: a title's own line breaks would come back as CR LF, hiddenTextOf)
      title: hiddenTextOf(fields["mine_title"]) ?? fields["mine_title"] ?? "",
      body: fields["mine_body"],
      reason: (fields["reason"] ?? "").trim(),
      revision: positiveNumberOf(fields["base"]) ?? 0,
      refusal: { message, blocks: [], details: [] },
    }
    const settling = settlingSent(fields)
    if (settling === undefined) return mine
    const withSettling: Draft = { ...mine, refusal: { ...mine.refusal, conflictWith: settling.theirs }, settling }
    return keepable(withSettling) ? withSettling : mine
  }

  /** Where a draft sent back lands: the conflict page when it carries what was settled there, else the article page. */
  const pageOf = (draft: Draft): "draft" | "merge" => (draft.settling === undefined ? "draft" : "merge")

  /**
   * The parts typed on the conflict page, each sanitised on its own: a closed fragment. Joined to
   * the other parts as typed, an unclosed comment, `script` or `textarea` (or a tag left open)
   * reached past it and swallowed every part after it, theirs and the person's, and the sanitiser
   * then removed them all from the saved body. All in one call of the sanitiser, not one each: a
   * 1 MiB body can make thousands of conflicts, and the pool takes them in at most (their
   * characters / 1 MiB) + 1 jobs, five for a 4 MiB form (`PARTS_JOB_CHARS`, workerHtmlAnalyzer.ts).
   * A part the sanitiser refuses is left as typed (the save sanitises the whole and refuses what it
   * refuses). When the sanitiser cannot take them now (the account's share of the pool is busy, or
   * the pool is), its refusal: the parts are not joined as typed, where one could swallow the rest.
   */
  const closedParts = async (s: Signed, parts: ReadonlyArray<string>): Promise<Result.Result<ReadonlyArray<string>, RateLimited | Unavailable>> => {
    if (parts.length === 0) return Result.succeed([])
    const sanitised = await runCore(deps, HtmlAnalyzer.use((analyzer) => analyzer.sanitizeEach(parts, s.caller.accountId)))
    return Result.map(sanitised, (closed) => parts.map((part, i) => closed[i] ?? part))
  }

  /**
   * What a conflict page's form settled (`choice_<unit>`, `edit_<unit>`) over `merge`: each
   * part's choice and typed text, how many parts have none, and, with every part chosen, the
   * title and body to save.
   */
  const settlementOf = async (s: Signed, merge: ArticleMerge, draft: Draft, fields: FormFields) => {
    const chosen = new Map<string, "theirs" | "mine" | "edit">()
    // What the person typed for a part, chosen or not: a form sent back shows it again.
    const typed = new Map<string, string>()
    for (const c of merge.conflicts) {
      const names = mergeFields(c.unit)
      const take = fields[names.choice]
      const edited = fields[names.edit]
      if (edited !== undefined) typed.set(c.unit, edited)
      if (take === "theirs" || take === "mine" || take === "edit") chosen.set(c.unit, take)
    }
    const missing = merge.conflicts.filter((c) => !chosen.has(c.unit)).length
    if (missing > 0) return { chosen, typed, missing, settled: null }
    const choices = new Map<string, ConflictChoice>()
    // (the title's typed text is the title, not HTML: it is settled below as typed, never sanitised as a part)
    const editedUnits = [...chosen].filter(([unit, take]) => take === "edit" && unit !== "title").map(([unit]) => unit)
    const closed = await closedParts(s, editedUnits.map((unit) => typed.get(unit) ?? ""))
    if (Result.isFailure(closed)) return { chosen, typed, missing, settled: null, refused: closed.failure }
    editedUnits.forEach((unit, i) => choices.set(unit, { html: closed.success[i]! }))
    for (const [unit, take] of chosen) if (take !== "edit") choices.set(unit, { take })
    const title = chosen.get("title")
    const settledTitle = title === undefined ? merge.title! : title === "edit" ? (typed.get("title") ?? "") : title === "mine" ? draft.title : merge.conflicts.find((c) => c.unit === "title")!.theirs
    return { chosen, typed, missing, settled: { title: settledTitle, body: settleMerge(merge, choices) } }
  }

  /**
   * Whether the edit and choices a conflict page's form sends back, its draft gone, are saved
   * already: settled, they would change nothing (a dry run). So it is when the same form was sent
   * a moment before (a double click, a retried post) and that one saved it and dropped the draft.
   */
  const savedAlready = async (s: Signed, id: string, draft: Draft, fields: FormFields): Promise<boolean> => {
    if (draft.settling === undefined) return false
    const theirs = draft.settling.theirs
    const { merge } = await mergeOf(s, id, draft, theirs)
    const { settled } = await settlementOf(s, merge, draft, fields)
    if (settled === null) return false
    const outcome = await runCore(
      deps,
      Effect.flatMap(decodeInput(UpdateArticleBody, { ...settled, base_revision: theirs }, "Edit"), (input) => updateArticle(s.caller, id, input, { dryRun: true })),
    )
    if (Result.isFailure(outcome)) return false
    const current = await runCoreOrThrow(deps, getArticle(s.caller, id))
    const next = outcome.success.result.article
    return next.title === current.title && next.body === current.body
  }

  router.post(
    "/articles/:id/merge",
    signedIn(
      "POST /articles/{id}/merge",
      async (ctx, s) => {
        const id = articleId(ctx)
        noteSubject(ctx, { articleId: id })
        const fields = await readForm(ctx)
        if (!csrfOk(ctx, s.session, fields["_csrf"])) {
          // A conflict page of an earlier sign-in, sent from this service's page: its draft belonged
          // to that session, so the text it sends back is kept in this one (as the edit form's is).
          const kept = sentFromOwnPage(ctx, deps) ? sentBack(id, fields, "This form was opened before you last signed in, so it was not saved.") : null
          if (kept === null) throw new CsrfRejected()
          noteOutcome(ctx, CSRF_REFUSED.status, CSRF_REFUSED.code)
          // Opened for another account (signed in on this browser before this one): kept for that account, not made this one's.
          if (await openedForAnother(fields, s.caller.accountId, () => isCallersArticle(deps, s.caller, id))) {
            return keepForItsAccount(ctx, deps, s.session, { ...kept, refusal: { ...kept.refusal, message: OPENED_FOR_ANOTHER } })
          }
          return landOnDraft(ctx, deps, s.session, id, await keepDraft(deps, s.session, kept), kept.refusal, pageOf(kept))
        }
        const draftId = fields["draft"]
        const draft = await findDraft(deps, s.session, id, draftId)
        if (draft === null || draftId === undefined) {
          // The draft is gone (a day old, or the oldest of more than five): the text sent back is kept anew.
          const kept = sentBack(id, fields, "This edit was not saved: it waited too long on the conflict page. Save it again to compare it with the newest revision.")
          // Unless this very form saved it a moment ago (sent twice): then the page says so, not "not saved".
          if (kept !== null && (await savedAlready(s, id, kept, fields).catch(() => false))) {
            await setFlash(deps, s.session, { kind: "info", message: SAVED_ALREADY })
            return redirect(ctx, `/articles/${encodeURIComponent(id)}`)
          }
          if (kept !== null) return landOnDraft(ctx, deps, s.session, id, await keepDraft(deps, s.session, kept), kept.refusal, pageOf(kept))
          return redirect(ctx, `/articles/${encodeURIComponent(id)}?draft=${draftId ?? ""}#edit`)
        }
        const theirs = positiveNumberOf(fields["theirs"]) ?? null
        if (theirs === null) return redirect(ctx, mergeUrl(id, draftId))
        const { merge } = await mergeOf(s, id, draft, theirs)
        const reason = (fields["reason"] ?? "").trim()
        const { chosen, typed, missing, settled: settlement, refused } = await settlementOf(s, merge, draft, fields)
        if (refused !== undefined) {
          // The typed parts could not be sanitised now: this page again, everything typed on it,
          // under the refusal's status and its Retry-After; the draft stays as it was.
          noteError(ctx, refused)
          for (const [name, value] of Object.entries(problemHeaders(refused))) ctx.set(name, value)
          return show(ctx, s, problemKindOf(refused).status, id, draftId, { ...draft, reason }, theirs, chosen, typed, refusalOf(ctx, deps, refused)?.message ?? null)
        }
        if (settlement === null) {
          // Replacing their version is a choice made here, never a default: each part needs one.
          const kept = { ...draft, reason }
          return show(ctx, s, 400, id, draftId, kept, theirs, chosen, typed, `Choose a version for each part (${missing} without a choice), then save again.`)
        }
        const { title: settledTitle, body } = settlement
        const outcome = await runCore(
          deps,
          Effect.flatMap(
            decodeInput(UpdateArticleBody, { title: settledTitle, body, ...(reason === "" ? {} : { reason }), base_revision: theirs }, "Edit"),
            (input) => updateArticle(s.caller, id, input, { dryRun: false }),
          ),
        )
        if (Result.isSuccess(outcome)) {
          const { result } = outcome.success
          if (result.revision !== null) noteCommitted(ctx)
          await dropDraft(deps, s.session, draftId)
          const theirsBy = result.merge === undefined ? null : await runCoreOrThrow(deps, whoMadeSince(s.caller, id, result.merge.base, result.merge.theirs, result.article.revision))
          await setFlash(deps, s.session, savedFlash(id, outcome.success, theirsBy, merge.conflicts.length))
          return redirect(ctx, `/articles/${encodeURIComponent(id)}`)
        }
        const e = outcome.failure
        noteError(ctx, e)
        const settled: Draft = { ...draft, title: settledTitle, body, reason, revision: theirs }
        /**
         * Not saved: the settled text kept as a draft, which replaces this one; or, too large to
         * keep (a part typed past the body's 1 MiB), this page again as it was sent, under the
         * refusal's status, this draft left as it was.
         */
        const keepOrShow = async (refusal: EditRefusal, page: "draft" | "merge") => {
          const kept = await keepDraft(deps, s.session, { ...settled, refusal })
          if (kept !== null) {
            await dropDraft(deps, s.session, draftId)
            return landOnDraft(ctx, deps, s.session, id, kept, refusal, page)
          }
          const said = [refusal.message, ...refusal.details].join(" ")
          await show(ctx, s, problemKindOf(e).status, id, draftId, { ...draft, reason }, theirs, chosen, typed, `${said} The settled text is too large to keep as a draft: it is on this page only.`, refusal.uncertain)
        }
        if (e._tag === "EditConflict" && e.conflicts !== undefined) {
          // Someone saved again meanwhile: the settled text is the new "mine", against the revision it was settled with.
          const current = await runCoreOrThrow(deps, getArticle(s.caller, id))
          return keepOrShow({ message: e.detail, blocks: [], details: [], conflictWith: current.revision }, "merge")
        }
        const refusal = refusalOf(ctx, deps, e)
        if (refusal === null) throw e
        await keepOrShow(refusal, "draft")
      },
      // Sent after the sign-in ended: the draft cannot be read now, the text sent back with the form is kept.
      async (ctx) => {
        const id = ctx.params["id"]
        if (!isId(id)) return
        const kept = sentBack(id, await readForm(ctx), "Your session had expired, so this edit was not saved.")
        if (kept !== null) await keepPendingDraft(ctx, deps, kept)
      },
    ),
  )
}
