/**
 * Large request bodies are decoded and parsed one per turn of the event loop, in turns shared
 * fairly between accounts.
 *
 * When several large uploads end in the same poll phase, their reads resume in the same drain of
 * the microtask queue, and each one's decode, depth check and `JSON.parse` (about 5 to 15 ms for
 * 1 MiB) would then run back to back, with every other request (a `/healthz`, another account's
 * small edit) waiting behind all of them. Here each large body waits for a turn of its own
 * (`setImmediate`, scheduled once the previous one is done, so it runs in the next turn, after
 * that turn's poll phase has read other requests). The event loop is then held by at most one
 * large body's parse at a time. Small bodies never wait.
 *
 * The turns go round the accounts (or, for a caller not signed in, its address): each has a queue
 * of its own, and each turn serves the queue served longest ago (first come, first served within
 * one). An account that sends many large bodies at once delays another account's large body by
 * at most one body's parse, never by its whole queue. Each queue holds at most
 * `TURNS_WAITING_PER_KEY` bodies (429 `rate_limited` past it, for that account alone) and all the
 * queues together `TURNS_WAITING` (503 `unavailable` past it), the answers the shared pools give.
 */
import { RateLimited, Unavailable } from "@content-site/core"
import type { ParameterizedContext } from "koa"
import { clientAddress } from "./clientAddress.ts"
import { notesOf } from "./notes.ts"

/** A body over this many bytes is parsed in a turn of its own. */
export const LARGE_BODY_BYTES = 64 * 1024

/** Large bodies one account (or address) may have waiting for their turn; past it 429 for it alone. */
export const TURNS_WAITING_PER_KEY = 4

/**
 * Large bodies waiting for their turn over every account; past it 503. Each holds its bytes (at
 * most 4 MiB, a web form): 256 MiB at worst, reached only by 16 accounts at their cap at once.
 */
export const TURNS_WAITING = 64

/** Seconds a caller refused past its own cap is told to wait: a turn is milliseconds, one second frees them all. */
export const TURN_RETRY_AFTER_SECONDS = 1

interface Turn {
  readonly run: () => void
}

// The queues with a body waiting, in the order they are served: a Map keeps its keys in the order
// they were set, so the first key is the one served longest ago (or the first to come); a queue
// served goes to the back (deleted and set again) while it still holds a body.
const queues = new Map<string, Array<Turn>>()
let waiting = 0
let scheduled = false

// One turn: the first queue's first body, then the next turn if any body is left. O(1) a turn.
const serve = (): void => {
  const first = queues.entries().next()
  if (first.done === true) {
    scheduled = false
    return
  }
  const [key, queue] = first.value
  const turn = queue.shift()!
  waiting--
  queues.delete(key)
  if (queue.length > 0) queues.set(key, queue)
  if (waiting > 0) setImmediate(serve)
  else scheduled = false
  turn.run()
}

/** What waits for a turn now: over every key, or for one. */
export const turnsWaiting = (key?: string): number => (key === undefined ? waiting : (queues.get(key)?.length ?? 0))

/**
 * Runs `work` for `key` (an account, or an address) in a turn of the event loop of its own, in
 * rotation with the other keys' work; rejects at once with `RateLimited` when `key` has
 * `TURNS_WAITING_PER_KEY` bodies waiting already, with `Unavailable` when `TURNS_WAITING` wait in all.
 */
export const inOwnTurn = <A>(key: string, work: () => A): Promise<A> => {
  const queue = queues.get(key)
  if (queue !== undefined && queue.length >= TURNS_WAITING_PER_KEY) {
    return Promise.reject(
      new RateLimited({
        limit: TURNS_WAITING_PER_KEY,
        retryAfterSeconds: TURN_RETRY_AFTER_SECONDS,
        counted: "large request bodies of this account waiting to be read at once",
      }),
    )
  }
  if (waiting >= TURNS_WAITING) {
    return Promise.reject(new Unavailable({ detail: "Too many large request bodies are waiting to be read right now; retry in a moment." }))
  }
  return new Promise<A>((resolve, reject) => {
    const turn: Turn = {
      run: () => {
        try {
          resolve(work())
        } catch (e) {
          reject(e)
        }
      },
    }
    if (queue === undefined) queues.set(key, [turn])
    else queue.push(turn)
    waiting++
    if (!scheduled) {
      scheduled = true
      setImmediate(serve)
    }
  })
}

/** Whose turn a request's body takes: its account once authenticated, else its client address. */
export const turnKeyOf = (ctx: ParameterizedContext): string => {
  const accountId = notesOf(ctx).accountId
  return accountId === undefined ? `address ${clientAddress(ctx)}` : `account ${accountId}`
}

/**
 * `work` at once for a small body, in a turn of its own for a large one (`LARGE_BODY_BYTES`),
 * in the rotation of the request's account (`turnKeyOf`).
 */
export const parseInTurn = <A>(ctx: ParameterizedContext, bytes: number, work: () => A): A | Promise<A> =>
  bytes > LARGE_BODY_BYTES ? inOwnTurn(turnKeyOf(ctx), work) : work()
