/** Reading Effect exits in tests. */
import { Cause, Exit, Option } from "effect"

/** "success", the tag of the exit's typed failure, or "defect". */
export const tagOf = <A, E>(exit: Exit.Exit<A, E>): string =>
  Exit.isSuccess(exit) ? "success" : ((Option.getOrUndefined(Cause.findErrorOption(exit.cause)) as { _tag?: string } | undefined)?._tag ?? "defect")

/** The `detail` of the exit's typed failure, if it has one. */
export const detailOf = <A, E>(exit: Exit.Exit<A, E>): string | undefined =>
  Exit.isFailure(exit) ? (Option.getOrUndefined(Cause.findErrorOption(exit.cause)) as { detail?: string } | undefined)?.detail : undefined
