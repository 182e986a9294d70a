/** What the article page and the conflict page both do with an edit's outcome: who made a revision, refusals, the saved message. */
import { type Caller, type CoreError, getArticle, getRevision, listRevisions, type Revision, toProblem, type UpdateArticleResult } from "@content-site/core"
import type { Flash, HttpDeps, WebSession } from "@content-site/http"
import { displayName, requestIdOf, setFlash } from "@content-site/http"
import { Effect } from "effect"
import { type Draft, type EditRefusal, FORM_ACCOUNT, keepable, keepPendingDraft } from "../drafts.ts"
import type { FormFields } from "../forms.ts"
import { runCoreOrThrow } from "../call.ts"
import { type Ctx, redirect, removedText, sentences } from "../pageKit.ts"

const ORIGIN_WORDS: Readonly<Record<Revision["origin"], string>> = { api: "API", mcp: "Agent (MCP)", editor: "Editor", rewrite: "Rewrite job" }

/** Who made a revision, as a person reads it: the key's, agent's or person's name and how ("ci (API)"). */
export const madeBy = (revision: Pick<Revision, "actor" | "origin">): string => `${displayName(revision.actor.name)} (${ORIGIN_WORDS[revision.origin]})`

/**
 * Reads who made revision `n` of an article whose newest revision is `newest`: its summary from
 * the revision list (numbers are gapless, newest first), never its body, which may be 1 MiB.
 */
export const whoMade = (caller: Caller, articleId: string, n: number, newest: number) =>
  Effect.flatMap(listRevisions(caller, articleId, { page: Math.max(1, newest - n + 1), per_page: 1 }), (page) => {
    const found = page.data[0]
    return found !== undefined && found.number === n ? Effect.succeed(madeBy(found)) : Effect.map(getRevision(caller, articleId, n), madeBy)
  })

/** Makers named in a merge's flash; the rest are counted. */
const MAX_NAMED_MAKERS = 3

/**
 * Who made the revisions a merge kept changes of, `base` + 1 to `theirs`, of an article whose
 * newest revision is `newest`: their makers, newest first, each once ("Two (Editor) and Writer bot
 * (API)"), at most MAX_NAMED_MAKERS named and the rest counted. One page of at most 100 summaries
 * (never a body): past 100 revisions since `base`, the newest 100 are read and the rest said to be.
 */
export const whoMadeSince = (caller: Caller, articleId: string, base: number, theirs: number, newest: number) =>
  theirs - base <= 1
    ? whoMade(caller, articleId, theirs, newest)
    : Effect.map(listRevisions(caller, articleId, { page: 1, per_page: Math.min(100, newest - base) }), (page) => {
        const makers: Array<string> = []
        for (const r of page.data) if (r.number > base && r.number <= theirs && !makers.includes(madeBy(r))) makers.push(madeBy(r))
        const unread = page.data.every((r) => r.number > base + 1)
        const named = makers.slice(0, MAX_NAMED_MAKERS)
        const more = makers.length - named.length
        const rest = more > 0 ? [`${more} more`] : unread ? ["others"] : []
        const all = [...named, ...rest]
        return all.length <= 1 ? (all[0] ?? "") : `${all.slice(0, -1).join(", ")} and ${all[all.length - 1]}`
      })

/** The article page's address showing a kept draft and why it was not saved. */
export const draftUrl = (id: string, draftId: string): string => `/articles/${encodeURIComponent(id)}?draft=${draftId}#edit-error`
/** The conflict page's address for a kept draft. */
export const mergeUrl = (id: string, draftId: string): string => `/articles/${encodeURIComponent(id)}/merge?draft=${draftId}`

/**
 * Where a refused edit lands: its draft on the article page (or on the conflict page), or, when
 * its text is over 1 MiB and was not kept, the article page saying so.
 */
export const landOnDraft = async (
  ctx: Ctx,
  deps: HttpDeps,
  session: WebSession,
  id: string,
  draftId: string | null,
  why: EditRefusal,
  page: "draft" | "merge" = "draft",
): Promise<void> => {
  if (draftId !== null) return redirect(ctx, page === "merge" ? mergeUrl(id, draftId) : draftUrl(id, draftId))
  const message = "Your edit was not saved, and its text is over 1 MiB, too large to keep as a draft, so it is not shown again."
  await setFlash(deps, session, { kind: "error", message, details: why.details.length > 0 ? why.details : [why.message] })
  redirect(ctx, `/articles/${encodeURIComponent(id)}`)
}

/** Why an edit was not saved, in the page's words; null for an error the page does not handle (it is thrown). */
export const refusalOf = (ctx: Ctx, deps: HttpDeps, e: CoreError): EditRefusal | null =>
  e._tag === "ProtectedLinkChanged"
    ? { message: "Your edit removes, changes or adds protected links. Keep each of them exactly as it is (you may move them):", blocks: e.blocks, details: [] }
    : e._tag === "PreconditionFailed"
      ? {
          message: `Someone saved revision ${e.current} while you were editing revision ${e.expected.join(" or ")}. Your text is below; saving it now merges it with revision ${e.current}.`,
          blocks: [],
          details: [],
        }
      : e._tag === "InvalidRequest"
        ? { message: "Please correct the following:", blocks: [], details: sentences(e.errors) }
        : e._tag === "DailyEditLimit" || e._tag === "EditConflict"
          ? { message: toProblem(e, requestIdOf(ctx), deps.publicUrl).detail, blocks: [], details: [] }
          : e._tag === "PayloadTooLarge"
            ? // Within the body limit as sent, over a limit once parsed (its sanitised HTML, its elements): the text is kept all the same.
              { message: "Your edit is too large to save:", blocks: [], details: [e.detail] }
          : e._tag === "RateLimited"
            ? // The account's share of the sanitiser (or of the form reader) is busy: the text waits, not lost.
              {
                message: `Your edit was not saved: ${e.counted === undefined ? `your account has made more than ${e.limit} requests in a minute` : `more than ${e.limit} ${e.counted}`}. Wait ${e.retryAfterSeconds} ${e.retryAfterSeconds === 1 ? "second" : "seconds"}, then save again.`,
                blocks: [],
                details: [],
              }
            : e._tag === "Unavailable"
              ? // The commit may have landed before the answer was lost (the connection dropped after
                // COMMIT): not "not saved". Saving again cannot save it twice: the form keeps its base
                // revision, and the core finds an edit it saved already (`savedAlready`).
                {
                  message: "Your edit may or may not have been saved: the service could not confirm it (it is busy or cannot reach its database). Your text is kept below; wait a few seconds, then save again: saving it again is safe, an edit found saved already is not saved twice.",
                  blocks: [],
                  details: [],
                  uncertain: true,
                }
              : null

/** What a form sent again, whose edit its first post saved, is told: the same words on the article page and the conflict page. */
export const SAVED_ALREADY = "This edit is saved already (the form was sent twice): nothing changed."

/**
 * The message after a saved edit: the revision made, whose changes it was merged with, what the
 * sanitiser removed; or, no revision made, that the edit is saved already (`savedAlready`: the
 * core found this very edit saved by its first post) or that it changed nothing.
 */
export const savedFlash = (id: string, outcome: { readonly result: UpdateArticleResult; readonly savedAlready?: true }, theirsBy: string | null, settled = 0): Flash => {
  const { result } = outcome
  const removed = removedText(result.sanitized.removed)
  if (result.revision === null && outcome.savedAlready === true) return { kind: "info", message: SAVED_ALREADY }
  if (result.revision === null) return { kind: "info", message: "Nothing changed, so no new revision was made.", details: removed }
  const merge = result.merge
  return {
    kind: "success",
    message: [
      `Saved as revision ${result.revision.number}.`,
      settled > 0 ? `You settled ${settled === 1 ? "the conflicting part" : `${settled} conflicting parts`}.` : "",
      merge !== undefined
        ? `Merged with ${merge.theirs - merge.base <= 1 ? `revision ${merge.theirs}` : `revisions ${merge.base + 1} to ${merge.theirs}`}${theirsBy === null ? "" : ` by ${theirsBy}`}: ${merge.merged_units === 0 ? "none of their changes needed merging" : `${merge.merged_units} of their changes kept beside yours`}.`
        : "",
      result.sanitized.changed ? "The sanitiser removed some markup:" : "",
    ]
      .filter((s) => s !== "")
      .join(" "),
    details: removed,
    ...(merge !== undefined ? { link: { href: `/articles/${encodeURIComponent(id)}/revisions/${merge.theirs}`, text: `See revision ${merge.theirs}` } } : {}),
  }
}

/** Whether the article is the caller's (another account's is not found for it). */
export const isCallersArticle = (deps: HttpDeps, caller: Caller, id: string): Promise<boolean> =>
  runCoreOrThrow(deps, getArticle(caller, id).pipe(Effect.as(true), Effect.catchTag("NotFound", () => Effect.succeed(false))))

/**
 * Whether a form of an earlier sign-in (its CSRF token not this session's) was opened for another
 * account than the one signed in now: it names another (`FORM_ACCOUNT`), or, from a page made
 * before the form named its account, its article is not this account's (`isCallers`).
 */
export const openedForAnother = async (fields: FormFields, accountId: string, isCallers: () => Promise<boolean>): Promise<boolean> => {
  const opener = fields[FORM_ACCOUNT]
  return opener !== undefined ? opener !== accountId : !(await isCallers())
}

/** Why a form opened for another account was not saved, told to that account when it gets the text back. */
export const OPENED_FOR_ANOTHER = "This edit was sent while another account was signed in on this browser, so it was not saved."

/**
 * A form opened for another account than the one signed in now (another person's sign-in on this
 * browser): not saved, and its text not made this account's draft (it would be this account's
 * to open, or lost behind the article's 404 for it, and never its own account's again). It is
 * kept as a pending draft of this browser for its own account, offered back at that account's
 * next sign-in here, as an edit sent after its session ended is (`adoptPendingDraft` leaves it to
 * the account whose article it is); this account is told so on its sites list.
 */
export const keepForItsAccount = async (ctx: Ctx, deps: HttpDeps, session: WebSession, draft: Draft): Promise<void> => {
  const kept = keepable(draft)
  if (kept) await keepPendingDraft(ctx, deps, draft)
  await setFlash(deps, session, {
    kind: "error",
    message: kept
      ? "An edit was not saved: its page was opened while another account was signed in on this browser. Its text is kept for that account for a day: sign in with it on this browser and open the article to get it back."
      : "An edit was not saved: its page was opened while another account was signed in on this browser, and its text is over 1 MiB, too large to keep, so it is not kept.",
  })
  redirect(ctx, "/sites")
}
