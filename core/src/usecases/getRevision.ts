import { Effect } from "effect"
import { RevisionRepository } from "../ports/Repositories.ts"
import type { Caller } from "./Caller.ts"
import { revisionView } from "./views.ts"

/** One revision of an article, with its body. */
export const getRevision = (caller: Caller, articleId: string, number: number) =>
  Effect.gen(function* () {
    const revisions = yield* RevisionRepository
    return revisionView(yield* revisions.get(caller.accountId, articleId, number))
  })
