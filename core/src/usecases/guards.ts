import { Effect } from "effect"
import { InsufficientScope } from "../errors.ts"
import type { Caller } from "./Caller.ts"

/** Fails unless the caller may write (a read-only key may not). */
export const requireWriteScope = (caller: Caller): Effect.Effect<void, InsufficientScope> =>
  caller.scope === "write"
    ? Effect.void
    : Effect.fail(new InsufficientScope({ detail: "This API key is read-only; create a write key on the Connect Site page to edit articles." }))
