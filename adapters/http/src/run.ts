import { type CoreError, type CoreServices, isCoreError } from "@content-site/core"
import { Cause, type Effect, Exit, type Fiber, Option } from "effect"
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
 * An effect that finishes without waiting (a cached key, a journaled entry) settles at once.
 */
export const runEffect = <A, E extends CoreError>(runtime: AppRuntime, effect: Effect.Effect<A, E, CoreServices>): Promise<A> => {
  const fiber = runtime.runFork(effect)
  const exit = fiber.pollUnsafe()
  if (exit !== undefined) return settled(exit)
  return new Promise<A>((resolve, reject) => {
    fiber.addObserver((done) => (Exit.isSuccess(done) ? resolve(done.value) : reject(failureOf(done.cause))))
  })
}

/**
 * The exit of an effect run through the runtime, as `runPromiseExit` answers it; one that finishes
 * without waiting settles at once.
 */
export const runExit = <A, E, R>(
  runtime: { readonly runFork: <A2, E2>(effect: Effect.Effect<A2, E2, R>) => Fiber.Fiber<A2, E2> },
  effect: Effect.Effect<A, E, R>,
): Promise<Exit.Exit<A, E>> => {
  const fiber = runtime.runFork(effect)
  const exit = fiber.pollUnsafe()
  return exit !== undefined ? Promise.resolve(exit) : new Promise((resolve) => fiber.addObserver(resolve))
}

const settled = <A, E>(exit: Exit.Exit<A, E>): Promise<A> => (Exit.isSuccess(exit) ? Promise.resolve(exit.value) : Promise.reject(failureOf(exit.cause)))

const failureOf = <E>(cause: Cause.Cause<E>): unknown => {
  const error = Cause.findErrorOption(cause)
  return Option.isSome(error) && isCoreError(error.value) ? error.value : new Defect(Cause.pretty(cause))
}
