import type { ActivityRecord } from "../ports/records.ts"
import { toTimestamp } from "./time.ts"

/**
 * Calls refused at the gate of one source (an address, or a key / agent / person) a minute that
 * are logged as an entry each; past them, the source's such calls of that minute are summed in
 * one entry.
 */
export const REFUSED_ENTRIES_PER_MINUTE = 30

/**
 * The error codes of calls refused at the gate, before any work: a failed authentication and a
 * limit (the account's requests, the address's failures). Nothing else bounds how many of them
 * one source can send; a call past the gate counts against its account's request limit, which
 * bounds its entries already, so it always has an entry of its own.
 */
export const GATE_REFUSALS: ReadonlySet<string> = new Set(["unauthenticated", "rate_limited"])

/**
 * The source a refused call is counted against, when it is a call that may be summed (refused
 * at the gate, or by nobody known): its key, agent or person on its account, else its client
 * address. An agent's id is its OAuth client_id, which every account connecting the same app
 * shares (a client described by a metadata document): the account is part of the source, so one
 * account's refused calls never add to another's summary entry (nor spend its budget).
 */
export const refusalSourceOf = (entry: Pick<ActivityRecord, "actor" | "account_id" | "error_code">, address: string | undefined): string | undefined => {
  if (entry.account_id !== null && (entry.error_code === null || !GATE_REFUSALS.has(entry.error_code))) return undefined
  if (entry.actor !== null) return `${entry.account_id ?? ""}:${entry.actor.type}:${entry.actor.id}`
  return address === undefined ? undefined : `address:${address}`
}

// FNV-1a, twice (two offsets), 64 bits of hex: names a source in an entry without writing its address.
const fnv = (text: string, seed: number): string => {
  let h = seed >>> 0
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h.toString(16).padStart(8, "0")
}
const sourceTag = (source: string): string => fnv(source, 0x811c9dc5) + fnv(source, 0x1b873593)

const MINUTE_MS = 60_000

/**
 * The entry that sums one source's refused calls of one minute past the budget (pure): the first
 * such call's channel, account, actor, action, status and code, at the start of the minute, with
 * an id and request id that name the source (hashed) and the minute, so that every call of it,
 * on every instance, adds to the one entry; `count` 1 for this call.
 */
export const refusalSummaryOf = (entry: ActivityRecord, source: string): ActivityRecord => {
  const minute = Math.floor(Date.parse(entry.at) / MINUTE_MS) * MINUTE_MS
  const stamp = toTimestamp(minute).slice(0, 16).replace(/[-:T]/g, "")
  const tag = `${sourceTag(source)}-${stamp}`
  return { ...entry, id: `act_refused-${tag}`, at: toTimestamp(minute), request_id: `refused-${tag}`, count: 1 }
}

/**
 * Counts the refused calls of each source in the current minute, in memory (one instance's
 * share): `admit` says whether a call still gets an entry of its own. Sources of past minutes are
 * forgotten; at most `maxSources` are tracked (past it the oldest go, and their next call starts
 * again), so memory stays flat whatever the flood.
 */
export class RefusalBudget {
  readonly #limit: number
  readonly #maxSources: number
  readonly #seen = new Map<string, { minute: number; n: number }>()
  constructor(limit = REFUSED_ENTRIES_PER_MINUTE, maxSources = 10_000) {
    this.#limit = limit
    this.#maxSources = maxSources
  }
  /** Counts one refused call of `source` at `nowMs`: true while the source is within its budget this minute. */
  admit(source: string, nowMs: number): boolean {
    const minute = Math.floor(nowMs / MINUTE_MS)
    const seen = this.#seen.get(source)
    if (seen === undefined || seen.minute !== minute) {
      this.#seen.delete(source)
      this.#seen.set(source, { minute, n: 1 })
      if (this.#seen.size > this.#maxSources) this.#seen.delete(this.#seen.keys().next().value as string)
      return 1 <= this.#limit
    }
    seen.n++
    return seen.n <= this.#limit
  }
  /**
   * Whether the next refused call of `source` at `nowMs` would only add one to a summary entry this
   * instance has begun already this minute (past the budget and past the call that began it), so
   * that nothing of the call but its count is written. A look: nothing is counted.
   */
  folds(source: string, nowMs: number): boolean {
    const seen = this.#seen.get(source)
    return seen !== undefined && seen.minute === Math.floor(nowMs / MINUTE_MS) && seen.n > this.#limit
  }
}

/**
 * What an activity log writes for an entry (pure given the budget): the entry itself, or for a
 * refused call past its source's budget, the minute's summary entry (to add its `count` to).
 */
export const entryToWrite = (budget: RefusalBudget, entry: ActivityRecord, refusedBy: string | undefined): { readonly entry: ActivityRecord; readonly summary: boolean } =>
  refusedBy === undefined || budget.admit(refusedBy, Date.parse(entry.at)) ? { entry, summary: false } : { entry: refusalSummaryOf(entry, refusedBy), summary: true }
