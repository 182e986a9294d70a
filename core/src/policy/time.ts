import { Effect } from "effect"
import { InvalidRequest } from "../errors.ts"

const DAY_MS = 86_400_000

/** The first instant of the year 10000, from which `toISOString` writes six-digit years. */
const YEAR_10000_MS = 253_402_300_800_000

// Every call of a request writes instants of the same second or so: the text of the second last
// written is kept, and an instant within it is that text and its milliseconds.
let keptSecond = Number.NaN
let keptSecondText = ""

/** An instant as the service writes it: RFC 3339 UTC with milliseconds (as `toISOString`). */
export const toTimestamp = (ms: number): string => {
  if (!Number.isSafeInteger(ms) || ms < 0 || ms >= YEAR_10000_MS) return new Date(ms).toISOString()
  const second = Math.floor(ms / 1000)
  if (second !== keptSecond) {
    keptSecondText = new Date(second * 1000).toISOString().slice(0, 20)
    keptSecond = second
  }
  const milli = ms - second * 1000
  return `${keptSecondText}${milli < 10 ? "00" : milli < 100 ? "0" : ""}${milli}Z`
}

/** The UTC calendar date `YYYY-MM-DD` of an instant. */
export const toCalendarDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

/** Seconds from `ms` to the next UTC midnight (at least 1). */
export const secondsToNextUtcMidnight = (ms: number): number => {
  const next = Math.floor(ms / DAY_MS) * DAY_MS + DAY_MS
  return Math.max(1, Math.ceil((next - ms) / 1000))
}

/**
 * The first and last instants a `from`/`to` may name: years 0001 to 9999 in UTC. RFC 3339 writes
 * four-digit years, and outside them PostgreSQL refuses the value (it has no year 0) or the
 * service's own writing of it (`toISOString` gives six-digit years from 10000 on) stops being a date.
 */
export const INSTANT_RANGE = { firstMs: -62_135_596_800_000, lastMs: YEAR_10000_MS - 1 } as const

/** The sentence of a `from`/`to` outside `INSTANT_RANGE`. */
export const OUT_OF_RANGE_MESSAGE =
  "Out of range: a date or date-time must lie between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z once its offset is applied"

const NOT_A_DATE_MESSAGE = "Not a real date or date-time"

const isBareDate = (s: string) => s.length === 10

/**
 * A `period` month, `YYYY-MM`, as a pattern source (year, month): years 0001 to 9999 as
 * `INSTANT_RANGE` (PostgreSQL has no year 0000; 1 BC comes right before 0001), written without a
 * lookahead, which some JSON Schema validators outside JavaScript do not support, and with `[0-9]`
 * rather than `\\d`, which some regular expression engines read as any Unicode digit.
 */
export const PERIOD_MONTH = "(000[1-9]|00[1-9][0-9]|0[1-9][0-9][0-9]|[1-9][0-9]{3})-(0[1-9]|1[0-2])"
const PERIOD_MONTH_ONLY = new RegExp(`^${PERIOD_MONTH}$`)

/**
 * The instant a `from`/`to` (already shaped as `YYYY-MM-DD` or RFC 3339) names, as milliseconds
 * (a bare date is the start of its UTC day, or its end when `end`), or why it is refused: a
 * calendar date that does not exist (`2026-02-31`, which `Date.parse` would roll over) or an
 * instant outside `INSTANT_RANGE`. Digits past the millisecond are cut off (`ms` is the instant
 * rounded down) and kept in `beyondMs` (`""` when they are zeros or absent), for `resolveDateRange`
 * to round a `from` up: stored instants have milliseconds, and an inclusive lower bound between
 * two of them must not take in the earlier one.
 */
export const parseDateBound = (s: string, end: boolean): { readonly ms: number; readonly beyondMs: string } | { readonly refused: string } => {
  const ms = parseBound(s, end)
  if (ms === null) return { refused: NOT_A_DATE_MESSAGE }
  if (ms < INSTANT_RANGE.firstMs || ms > INSTANT_RANGE.lastMs) return { refused: OUT_OF_RANGE_MESSAGE }
  return { ms, beyondMs: beyondMillisecond(s) }
}

/** The digits of a date-time's fraction past the third, without trailing zeros (`""` for none). */
const beyondMillisecond = (s: string): string => {
  const fraction = /\.([0-9]+)/.exec(s)?.[1] ?? ""
  return fraction.slice(3).replace(/0+$/, "")
}

const parseBound = (s: string, end: boolean): number | null => {
  if (isBareDate(s)) {
    const ms = Date.parse(`${s}T00:00:00.000Z`)
    if (Number.isNaN(ms) || toCalendarDate(ms) !== s) return null
    return end ? ms + DAY_MS - 1 : ms
  }
  const ms = Date.parse(s)
  if (Number.isNaN(ms)) return null
  // Reject impossible calendar dates that Date.parse rolls over (2026-02-31T…).
  const datePart = s.slice(0, 10)
  const offsetMatch = /([+-])(\d{2}):(\d{2})$/.exec(s)
  const offsetMs = offsetMatch ? (offsetMatch[1] === "-" ? -1 : 1) * (Number(offsetMatch[2]) * 60 + Number(offsetMatch[3])) * 60_000 : 0
  if (toCalendarDate(ms + offsetMs) !== datePart) return null
  return ms
}

/** An inclusive range of instants, as RFC 3339 UTC strings; either end may be open. */
export interface InstantRange {
  readonly from?: string
  readonly to?: string
}

/** The two ends of a `from`/`to` as read, before rounding: instants rounded down and their digits past the millisecond. */
interface ReadBounds {
  readonly from?: { readonly ms: number; readonly beyondMs: string }
  readonly to?: { readonly ms: number; readonly beyondMs: string }
}

const readBounds = (query: { readonly from?: string; readonly to?: string }): Effect.Effect<ReadBounds, InvalidRequest> => {
  const errors: Array<{ path: string; message: string }> = []
  const from = query.from === undefined ? undefined : parseDateBound(query.from, false)
  const to = query.to === undefined ? undefined : parseDateBound(query.to, true)
  if (from !== undefined && "refused" in from) errors.push({ path: "from", message: from.refused })
  if (to !== undefined && "refused" in to) errors.push({ path: "to", message: to.refused })
  // a `from` past the last millisecond of the range (9999-12-31T23:59:59.9995Z) lies outside it
  if (from !== undefined && "ms" in from && from.ms === INSTANT_RANGE.lastMs && from.beyondMs !== "") {
    errors.push({ path: "from", message: OUT_OF_RANGE_MESSAGE })
  }
  if (errors.length > 0) {
    return Effect.fail(
      new InvalidRequest({
        detail: `from/to must be real dates or date-times from 0001-01-01 to 9999-12-31 (UTC): ${errors.map((e) => `${e.path}: ${e.message}`).join("; ")}.`,
        errors,
      }),
    )
  }
  const bounds: ReadBounds = {
    ...(from !== undefined && "ms" in from ? { from } : {}),
    ...(to !== undefined && "ms" in to ? { to } : {}),
  }
  // compared exactly: the milliseconds, then the digits past them (as decimals, so padded alike)
  if (bounds.from !== undefined && bounds.to !== undefined) {
    const after =
      bounds.from.ms !== bounds.to.ms
        ? bounds.from.ms > bounds.to.ms
        : bounds.from.beyondMs.padEnd(bounds.to.beyondMs.length, "0") > bounds.to.beyondMs.padEnd(bounds.from.beyondMs.length, "0")
    if (after) {
      return Effect.fail(
        new InvalidRequest({ detail: "from must not be after to.", errors: [{ path: "from", message: "from is after to" }] }),
      )
    }
  }
  return Effect.succeed(bounds)
}

/**
 * Resolves `from`/`to` (already shaped as `YYYY-MM-DD` or RFC 3339) into inclusive UTC instants:
 * a bare `to` date means the end of that UTC day; a date that does not exist, an instant outside
 * `INSTANT_RANGE` and `from` after `to` are refused. Stored instants have milliseconds: a `from`
 * with finer digits is rounded up to the next millisecond, a `to` down, so that the range takes
 * in exactly the stored instants that lie between the two.
 */
export const resolveDateRange = (query: { readonly from?: string; readonly to?: string }): Effect.Effect<InstantRange, InvalidRequest> =>
  Effect.map(readBounds(query), ({ from, to }) => ({
    ...(from !== undefined ? { from: toTimestamp(from.beyondMs === "" ? from.ms : from.ms + 1) } : {}),
    ...(to !== undefined ? { to: toTimestamp(to.ms) } : {}),
  }))

/**
 * Resolves `from`/`to` as `resolveDateRange` does, into the calendar dates (inclusive) whose days
 * reach into the range, for date-valued fields such as `date_acquired`: the day an instant lies
 * in counts, however late in it the `from` falls.
 */
export const resolveDateSpan = (query: { readonly from?: string; readonly to?: string }): Effect.Effect<{ readonly fromDate?: string; readonly toDate?: string }, InvalidRequest> =>
  Effect.map(readBounds(query), ({ from, to }) => ({
    ...(from !== undefined ? { fromDate: toCalendarDate(from.ms) } : {}),
    ...(to !== undefined ? { toDate: toCalendarDate(to.ms) } : {}),
  }))

/** The calendar dates (inclusive) covered by an instant range, for date-valued fields such as `date_acquired`. */
export const calendarDatesOf = (range: InstantRange): { readonly fromDate?: string; readonly toDate?: string } => ({
  ...(range.from !== undefined ? { fromDate: toCalendarDate(Date.parse(range.from)) } : {}),
  ...(range.to !== undefined ? { toDate: toCalendarDate(Date.parse(range.to)) } : {}),
})

/** A resolved reporting period. */
export interface Period {
  readonly key: string
  /** Inclusive UTC dates. */
  readonly from: string
  readonly to: string
  /** Inclusive instants. */
  readonly fromInstant: string
  readonly toInstant: string
}

/** The first instant of a UTC month (a month out of 0 to 11 rolls into the year before or after). */
const monthStart = (year: number, month0: number): number => {
  // Not Date.UTC: it reads the years 0 to 99 as 1900 to 1999.
  const date = new Date(0)
  date.setUTCFullYear(year, month0, 1)
  return date.getTime()
}

const monthPeriod = (key: string, year: number, month0: number): Period => {
  const start = monthStart(year, month0)
  const end = monthStart(year, month0 + 1) - 1
  return { key, from: toCalendarDate(start), to: toCalendarDate(end), fromInstant: toTimestamp(start), toInstant: toTimestamp(end) }
}

/**
 * Resolves a `period` (`this_month`, `last_month`, `last_30_days` — today and the 29 days
 * before — or `YYYY-MM`, 0001-01 to 9999-12) at the instant `nowMs`, in UTC.
 */
export const resolvePeriod = (key: string, nowMs: number): Effect.Effect<Period, InvalidRequest> => {
  const now = new Date(nowMs)
  if (key === "this_month") return Effect.succeed(monthPeriod(key, now.getUTCFullYear(), now.getUTCMonth()))
  if (key === "last_month") return Effect.succeed(monthPeriod(key, now.getUTCFullYear(), now.getUTCMonth() - 1))
  if (key === "last_30_days") {
    const today = Math.floor(nowMs / DAY_MS) * DAY_MS
    const start = today - 29 * DAY_MS
    const end = today + DAY_MS - 1
    return Effect.succeed({ key, from: toCalendarDate(start), to: toCalendarDate(end), fromInstant: toTimestamp(start), toInstant: toTimestamp(end) })
  }
  const m = PERIOD_MONTH_ONLY.exec(key)
  if (m) return Effect.succeed(monthPeriod(key, Number(m[1]), Number(m[2]) - 1))
  return Effect.fail(
    new InvalidRequest({
      detail: "period must be this_month, last_month, last_30_days or a month YYYY-MM.",
      errors: [{ path: "period", message: "Unknown period" }],
    }),
  )
}
