import { Effect } from "effect"
import { InsufficientScope } from "../errors.ts"
import type { Caller } from "./Caller.ts"

/** Fails unless the caller may write (a read-only key or a read-only agent connection may not). */
export const requireWriteScope = (caller: Caller): Effect.Effect<void, InsufficientScope> =>
  caller.scope === "write"
    ? Effect.void
    : Effect.fail(
        new InsufficientScope({
          detail:
            caller.actor.type === "oauth_client"
              ? "This agent was allowed read-only access; to let it edit articles, connect it again and choose “Read and edit”."
              : "This API key is read-only; create a write key on the API & agents page (Connect Site) to edit articles.",
        }),
      )
