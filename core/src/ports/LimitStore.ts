import { Context, type Effect } from "effect"
import type { Unavailable } from "../errors.ts"

/** The outcome of counting one hit against a fixed-window limit. */
export interface LimitVerdict {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Seconds until the window resets. */
  readonly resetSeconds: number
}

/** Counters shared by every instance of the service (memory, PostgreSQL or Redis). */
export class LimitStore extends Context.Service<LimitStore, {
  /** Counts one hit on `key` in a window of `windowSeconds`; exact across instances. */
  readonly hit: (key: string, limit: number, windowSeconds: number) => Effect.Effect<LimitVerdict, Unavailable>
  /** Reads the current window of `key` without counting a hit. */
  readonly peek: (key: string, limit: number, windowSeconds: number) => Effect.Effect<LimitVerdict, Unavailable>
}>()("core/LimitStore") {}
