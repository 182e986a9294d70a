import { Context, Effect, Option } from "effect"
import { Clock, Ids } from "../ports/Platform.ts"
import { ActivityLog, ArticleRepository } from "../ports/Repositories.ts"
import type { LoggedCaller } from "./Caller.ts"
import { activityFor, validIdOrNull } from "./views.ts"
import { refusalSourceOf } from "../policy/refusedCalls.ts"

/**
 * Records the outcome of a call in the activity log. An entry about an article carries the
 * article's site whenever the article is on the caller's account, refused calls included: when
 * the transport could not tell the site (the call failed before reading the article), it is looked
 * up here; a missing or foreign article, or a database that cannot answer, leaves it null. A change
 * already wrote its entry in its own transaction; the log is idempotent by request id, so
 * recording again is harmless. A call no key or token named an account for (401, or refused by
 * its address's failure budget) is recorded too, with a null account and actor: every API and
 * connector call is in the log (the seed), such an entry in no account's view of it. A refused
 * call is counted against its key (or agent, or person), else its address: past its budget in a
 * minute it adds to one summary entry (see ActivityLog), and once that entry is begun a call that
 * only adds to its count costs no lookup.
 */
export const recordActivity = (
  caller: LoggedCaller,
  outcome: {
    readonly ok: boolean
    readonly httpStatus?: number
    readonly errorCode?: string | null
    readonly siteId?: string | null
    readonly articleId?: string | null
  },
) =>
  // every call runs this: a chain, not a generator
  Effect.contextWith((services: Context.Context<Clock | Ids | ActivityLog | ArticleRepository>) => {
    const articleId = validIdOrNull(outcome.articleId)
    const siteId = validIdOrNull(outcome.siteId)
    const log = Context.get(services, ActivityLog)
    // the source a refused call is counted against (its entry's actor, account and code are the caller's and the outcome's)
    const source = outcome.ok ? undefined : refusalSourceOf({ actor: caller.actor, account_id: caller.accountId, error_code: outcome.errorCode ?? null }, caller.address)
    const write = (site: string | null, now: number) =>
      Effect.flatMap(Context.get(services, Ids).make("act"), (id) => log.record(activityFor(caller, { ...outcome, articleId, siteId: site, id, nowMs: now }), source))
    return Effect.flatMap(Context.get(services, Clock).now, (now) => {
      if (siteId !== null || articleId === null || caller.accountId === null) return write(siteId, now)
      // A refused call that would only add one to its source's summary entry of the minute (a
      // flood's calls past the budget) writes none of its own fields: its site is not looked up.
      if (source !== undefined && log.folds(source, now)) return write(null, now)
      // Where the article lives (its account and site, not its body, which may be a megabyte): its
      // site only when it is the caller's account's article.
      const accountId = caller.accountId
      return Effect.flatMap(
        Context.get(services, ArticleRepository)
          .locate(articleId)
          .pipe(
            Effect.map((located): string | null => (Option.isSome(located) && located.value.account_id === accountId ? located.value.site_id : null)),
            Effect.orElseSucceed(() => null),
          ),
        (siteId) => write(siteId, now),
      )
    })
  })

/**
 * An action with the name of what it concerned, when that is no article (a key, an agent):
 * `POST /connect/keys “Reporting script”`. The name is cut at 100 characters; curly quotes in it
 * become straight ones, so the name's end stays where the last quote is.
 */
export const namedAction = (action: string, name: string): string => `${action} “${[...name.replace(/[“”]/g, '"')].slice(0, 100).join("")}”`
