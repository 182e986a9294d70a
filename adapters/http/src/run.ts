import { type CoreError, type CoreServices, isCoreError } from "@content-site/core"
import { Cause, type Effect, Exit, Option } from "effect"
import type { AppRuntime } from "./deps.ts"

/** A failure that is not a domain error: answered as 500 `internal`, logged with its cause. */
export class Defect extends Error {
  override readonly name = "Defect"
  readonly pretty: string
  constructor(pretty: string) {
    super("defect")
    this.pretty = pretty
  }
}

/**
 * Runs a core effect through the runtime: resolves with its value, rejects with the core's tagged
 * error (a domain failure) or with a `Defect` (anything else). Interruption counts as a defect.
 */
export const runEffect = async <A, E extends CoreError>(runtime: AppRuntime, effect: Effect.Effect<A, E, CoreServices>): Promise<A> => {
  const exit = await runtime.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) return exit.value
  const error = Cause.findErrorOption(exit.cause)
  if (Option.isSome(error) && isCoreError(error.value)) throw error.value
  throw new Defect(Cause.pretty(exit.cause))
}
