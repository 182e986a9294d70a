import { Effect } from "effect"
import { InsufficientScope, PreconditionFailed } from "../errors.ts"
import type { Caller } from "./Caller.ts"

/**
 * Fails unless a write's preconditions hold for the article's current revision, in the order of
 * RFC 9110 13.2.2: first `expected` (If-Match, if_revision): none given (`undefined`), or the
 * article is at one of the revisions named. `If-Match` may list several tags and holds when any
 * of them matches; tags that name no revision of the article give an empty list, which never
 * holds. Then `unexpected` (If-None-Match): none given, or the article is at none of the
 * revisions named; `*` never holds, the article being there.
 */
export const requireRevision = (
  expected: ReadonlyArray<number> | undefined,
  current: number,
  unexpected?: ReadonlyArray<number> | "*",
): Effect.Effect<void, PreconditionFailed> =>
  expected !== undefined && !expected.includes(current)
    ? Effect.fail(new PreconditionFailed({ expected, current }))
    : unexpected !== undefined && (unexpected === "*" || unexpected.includes(current))
      ? Effect.fail(new PreconditionFailed({ expected: expected ?? [], current, noneMatch: unexpected }))
      : Effect.void

/** Fails unless the caller may write (a read-only key or a read-only agent connection may not). */
export const requireWriteScope = (caller: Caller): Effect.Effect<void, InsufficientScope> =>
  caller.scope === "write"
    ? Effect.void
    : Effect.fail(
        new InsufficientScope({
          detail:
            caller.actor.type === "oauth_client"
              ? "This agent was allowed read-only access; to let it edit articles, connect it again and choose “Read and edit”."
              : "This API key is read-only; create a write key on the Connect Site page (/connect) to edit articles.",
        }),
      )
