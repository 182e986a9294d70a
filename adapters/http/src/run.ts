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
  const exit = exitOf(runtime.runFork(effect))
  return exit instanceof Promise ? exit.then(valueOf) : settled(exit)
}

/**
 * The exit of an effect run through the runtime, as `runPromiseExit` answers it; one that finishes
 * without waiting settles at once.
 */
export const runExit = <A, E, R>(
  runtime: { readonly runFork: <A2, E2>(effect: Effect.Effect<A2, E2, R>) => Fiber.Fiber<A2, E2> },
  effect: Effect.Effect<A, E, R>,
): Promise<Exit.Exit<A, E>> => {
  const exit = exitOf(runtime.runFork(effect))
  return exit instanceof Promise ? exit : Promise.resolve(exit)
}

/** A forked fiber's exit: at once when it finished without waiting, else when it ends. */
const exitOf = <A, E>(fiber: Fiber.Fiber<A, E>): Exit.Exit<A, E> | Promise<Exit.Exit<A, E>> =>
  fiber.pollUnsafe() ?? new Promise((resolve) => fiber.addObserver(resolve))

const settled = <A, E>(exit: Exit.Exit<A, E>): Promise<A> => (Exit.isSuccess(exit) ? Promise.resolve(exit.value) : Promise.reject(failureOf(exit.cause)))

const valueOf = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isSuccess(exit)) return exit.value
  throw failureOf(exit.cause)
}

const failureOf = <E>(cause: Cause.Cause<E>): unknown => {
  const error = Cause.findErrorOption(cause)
  return Option.isSome(error) && isCoreError(error.value) ? error.value : new Defect(Cause.pretty(cause))
}
