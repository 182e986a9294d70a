/**
 * A fair share of a few slots (worker threads, child processes) between accounts. Each account
 * has its own queue and a cap of jobs running and waiting; a freed slot goes to the waiting account
 * with the fewest jobs running, and among those the one served longest ago (round-robin across
 * accounts, first come first served within one), so an account with many slow jobs delays another account's job by at most the jobs
 * already running when it arrives, never by its whole queue. An account may hold at most
 * `perOwnerRunning` slots at once, so with more slots than that one stays free for the others.
 *
 * Written here, not taken from a library: p-queue, p-limit, @henrygd/queue and async-sema keep
 * one FIFO for every caller; bottleneck's Group gives each key a limiter of its own with no
 * shared cap (and is unmaintained since 2019); piscina's own `taskQueue` hook serves piscina
 * alone, while the image pool is child processes (killed to stop a decoder).
 */

/** Why a job was not taken. */
export type Refusal =
  /** This account has `perOwner` jobs running and waiting already. */
  | "owner"
  /** `maxWaiting` jobs of all accounts are waiting already. */
  | "full"

/** What became of a job: its value (a job that rejects rejects `run`), or why it was not taken. */
export type FairOutcome<A> = { readonly value: A } | { readonly refused: Refusal }

export interface FairQueueOptions {
  /** Jobs running at once, over every account (the pool's threads or processes). */
  readonly slots: number
  /** Jobs one account may have running and waiting at once; past it that account alone is refused. */
  readonly perOwner: number
  /** Slots one account may hold at once (default `slots`). */
  readonly perOwnerRunning?: number
  /** Jobs waiting at most, over every account; past it a new job is refused. */
  readonly maxWaiting: number
}

export interface FairQueue {
  /** Runs `job` for `owner` when its turn comes, or refuses it at once. */
  readonly run: <A>(owner: string, job: () => Promise<A>) => Promise<FairOutcome<A>>
  /** Jobs running and waiting now, over every account and for one. */
  readonly load: (owner?: string) => { readonly running: number; readonly waiting: number }
}

interface Waiting {
  readonly start: () => void
}

interface Account {
  running: number
  /** When its last job started (a count of starts); 0 for an account not served since it came. */
  served: number
  readonly waiting: Array<Waiting>
}

/** A fair queue over `slots` slots (see the module's comment). */
export const fairQueue = (options: FairQueueOptions): FairQueue => {
  const perOwnerRunning = Math.max(1, Math.min(options.perOwnerRunning ?? options.slots, options.slots))
  const accounts = new Map<string, Account>()
  // Accounts with a job waiting, in the order they came to wait.
  const queued: Array<string> = []
  let running = 0
  let waiting = 0
  let starts = 0

  const account = (owner: string): Account => {
    let found = accounts.get(owner)
    if (found === undefined) {
      found = { running: 0, served: 0, waiting: [] }
      accounts.set(owner, found)
    }
    return found
  }
  const forget = (owner: string, a: Account): void => {
    if (a.running === 0 && a.waiting.length === 0) accounts.delete(owner)
  }

  // Hands free slots out: each to the waiting account with the fewest jobs running, and among
  // those the one served longest ago (round-robin; one that has not been served yet comes first,
  // in the order accounts came). An account at its running cap is passed over. One scan of the
  // waiting accounts per slot handed out: at most `queued.length` steps each.
  const dispatch = (): void => {
    while (running < options.slots) {
      let chosen = -1
      let best: Account | undefined
      for (let i = 0; i < queued.length; i++) {
        const a = accounts.get(queued[i]!)!
        if (a.running >= perOwnerRunning) continue
        if (best === undefined || a.running < best.running || (a.running === best.running && a.served < best.served)) {
          best = a
          chosen = i
        }
      }
      if (best === undefined) return
      const next = best.waiting.shift()!
      waiting--
      if (best.waiting.length === 0) queued.splice(chosen, 1)
      best.running++
      best.served = ++starts
      running++
      next.start()
    }
  }

  const run = <A>(owner: string, job: () => Promise<A>): Promise<FairOutcome<A>> => {
    const a = account(owner)
    if (a.running + a.waiting.length >= options.perOwner) {
      forget(owner, a)
      return Promise.resolve({ refused: "owner" })
    }
    if (waiting >= options.maxWaiting && !(running < options.slots && a.running < perOwnerRunning)) {
      forget(owner, a)
      return Promise.resolve({ refused: "full" })
    }
    return new Promise<FairOutcome<A>>((resolve, reject) => {
      const start = (): void => {
        const finish = (): void => {
          a.running--
          running--
          forget(owner, a)
          dispatch()
        }
        let started: Promise<A>
        try {
          started = job()
        } catch (error) {
          started = Promise.reject(error)
        }
        started.then(
          (value) => {
            finish()
            resolve({ value })
          },
          (error: unknown) => {
            finish()
            reject(error)
          },
        )
      }
      a.waiting.push({ start })
      waiting++
      if (a.waiting.length === 1) queued.push(owner)
      dispatch()
    })
  }

  return {
    run,
    load: (owner) => {
      if (owner === undefined) return { running, waiting }
      const a = accounts.get(owner)
      return { running: a?.running ?? 0, waiting: a?.waiting.length ?? 0 }
    },
  }
}
