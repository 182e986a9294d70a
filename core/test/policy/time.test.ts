import fc from "fast-check"
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import {
  calendarDatesOf,
  decodeInput,
  ListActivityQuery,
  ListArticlesQuery,
  OUT_OF_RANGE_MESSAGE,
  resolveDateRange,
  resolveDateSpan,
  resolvePeriod,
  secondsToNextUtcMidnight,
  StatsQuery,
  toTimestamp,
} from "../../src/index.ts"

const run = <A, E>(eff: Effect.Effect<A, E>) => Effect.runSyncExit(eff)
const failureTag = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isFailure(exit) ? (exit.cause.reasons[0] as { error?: { _tag?: string } } | undefined)?.error?._tag : undefined
const failureOf = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isFailure(exit) ? (exit.cause.reasons[0] as { error?: { _tag?: string; detail?: string; errors?: unknown } } | undefined)?.error : undefined

const iso = (ms: number): string => {
  try {
    return new Date(ms).toISOString()
  } catch (error) {
    return `throws ${(error as Error).name}`
  }
}
const timestamp = (ms: number): string => {
  try {
    return toTimestamp(ms)
  } catch (error) {
    return `throws ${(error as Error).name}`
  }
}

describe("toTimestamp", () => {
  it("should write what toISOString writes, for instants in order, out of order, and at the edges", () => {
    const year10000 = 253_402_300_800_000
    const instants = fc.oneof(
      fc.integer({ min: 1_700_000_000_000, max: 1_700_000_003_000 }),
      fc.integer({ min: -year10000, max: 2 * year10000 }),
      fc.double({ min: -1e16, max: 1e16 }),
      fc.constantFrom(0, -1, 9, 10, 99, 100, 999, 1000, 1_700_000_000_009, 1_700_000_000_099, 1_700_000_000_100, year10000 - 1, year10000, 8.64e15, 8.64e15 + 1, Number.NaN, Infinity, 1.5, 1_700_000_000_999.9),
    )
    fc.assert(fc.property(fc.array(instants, { maxLength: 20 }), (list) => list.every((ms) => timestamp(ms) === iso(ms))), { numRuns: 2000 })
    const now = Date.now()
    for (const ms of [now, now + 1, now + 999, now - 1000, now]) expect(toTimestamp(ms)).toBe(new Date(ms).toISOString())
  })
})

describe("resolveDateRange", () => {
  it("should treat a bare to date as the end of that UTC day", () => {
    const r = Effect.runSync(resolveDateRange({ from: "2026-10-01", to: "2026-10-31" }))
    expect(r).toEqual({ from: "2026-10-01T00:00:00.000Z", to: "2026-10-31T23:59:59.999Z" })
  })
  it("should accept RFC 3339 date-times with offsets and normalise them to UTC", () => {
    const r = Effect.runSync(resolveDateRange({ from: "2026-10-01T10:00:00+02:00" }))
    expect(r).toEqual({ from: "2026-10-01T08:00:00.000Z" })
  })
  it("should refuse from after to", () => {
    expect(failureTag(run(resolveDateRange({ from: "2026-11-02", to: "2026-11-01" })))).toBe("InvalidRequest")
  })
  it("should accept from equal to to (both ends inclusive)", () => {
    const r = Effect.runSync(resolveDateRange({ from: "2026-11-01", to: "2026-11-01" }))
    expect(r.to).toBe("2026-11-01T23:59:59.999Z")
  })
  it("should refuse impossible calendar dates", () => {
    expect(failureTag(run(resolveDateRange({ from: "2026-02-31" })))).toBe("InvalidRequest")
    expect(failureTag(run(resolveDateRange({ to: "2026-02-30T10:00:00Z" })))).toBe("InvalidRequest")
  })
  it("should leave both ends open when neither is given", () => {
    expect(Effect.runSync(resolveDateRange({}))).toEqual({})
  })
  it("should refuse instants before 0001-01-01 or after 9999-12-31 UTC, naming the end, offsets applied", () => {
    const cases: ReadonlyArray<readonly ["from" | "to", string]> = [
      ["from", "0000-01-01"],
      ["to", "0000-12-31"],
      ["from", "0000-01-01T00:00:00Z"],
      ["to", "0000-12-31T23:59:59.999Z"],
      // 0001-01-01T00:00 at +00:01 is 0000-12-31T23:59 in UTC
      ["from", "0001-01-01T00:00:00+00:01"],
      // 9999-12-31T23:59:59 at -01:00 is 10000-01-01T00:59:59 in UTC
      ["from", "9999-12-31T23:59:59-01:00"],
      ["to", "9999-12-31T23:00:00-01:00"],
    ]
    for (const [end, value] of cases) {
      const error = failureOf(run(resolveDateRange({ [end]: value })))
      expect(error?._tag, value).toBe("InvalidRequest")
      expect(error?.errors, value).toEqual([{ path: end, message: OUT_OF_RANGE_MESSAGE }])
      expect(error?.detail, value).toMatch(/0001-01-01 to 9999-12-31/)
    }
  })
  it("should accept the first and last instants of the range", () => {
    expect(Effect.runSync(resolveDateRange({ from: "0001-01-01", to: "9999-12-31" }))).toEqual({
      from: "0001-01-01T00:00:00.000Z",
      to: "9999-12-31T23:59:59.999Z",
    })
    expect(Effect.runSync(resolveDateRange({ from: "0001-01-01T00:59:00+00:59", to: "9999-12-31T22:59:59.999-01:00" }))).toEqual({
      from: "0001-01-01T00:00:00.000Z",
      to: "9999-12-31T23:59:59.999Z",
    })
  })
  it("should round a from finer than the millisecond up and a to down, comparing them exactly", () => {
    expect(Effect.runSync(resolveDateRange({ from: "2026-11-02T13:00:00.0001Z", to: "2026-11-02T13:00:00.0009Z" }))).toEqual({
      from: "2026-11-02T13:00:00.001Z",
      to: "2026-11-02T13:00:00.000Z",
    })
    expect(Effect.runSync(resolveDateRange({ from: "2026-11-02T13:00:00.123000000+01:00" }))).toEqual({ from: "2026-11-02T12:00:00.123Z" })
    expect(Effect.runSync(resolveDateRange({ from: "2026-11-02T13:00:00.00051Z", to: "2026-11-02T13:00:00.0005100Z" }))).toEqual({
      from: "2026-11-02T13:00:00.001Z",
      to: "2026-11-02T13:00:00.000Z",
    })
    expect(failureOf(run(resolveDateRange({ from: "2026-11-02T13:00:00.00051Z", to: "2026-11-02T13:00:00.0005Z" })))?.errors).toEqual([
      { path: "from", message: "from is after to" },
    ])
    // past the range's last millisecond
    expect(failureOf(run(resolveDateRange({ from: "9999-12-31T23:59:59.9991Z" })))?.errors).toEqual([{ path: "from", message: OUT_OF_RANGE_MESSAGE }])
    expect(Effect.runSync(resolveDateRange({ to: "9999-12-31T23:59:59.9999Z" }))).toEqual({ to: "9999-12-31T23:59:59.999Z" })
    expect(Effect.runSync(resolveDateSpan({ from: "2026-11-02T23:59:59.9999Z", to: "2026-11-03T00:00:00.0001Z" }))).toEqual({
      fromDate: "2026-11-02",
      toDate: "2026-11-03",
    })
  })
  it("should refuse the same values when the query is decoded, REST and MCP alike", () => {
    for (const schema of [ListArticlesQuery, ListActivityQuery]) {
      for (const value of ["0000-01-01", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59-01:00", "2026-02-31"]) {
        const error = failureOf(run(decodeInput(schema, { from: value }, "Query")))
        expect(error?._tag, value).toBe("InvalidRequest")
        expect(error?.errors, value).toEqual([expect.objectContaining({ path: "from" })])
      }
      expect(Effect.runSync(decodeInput(schema, { from: "0001-01-01", to: "9999-12-31T23:59:59.999Z" }, "Query"))).toMatchObject({ from: "0001-01-01" })
    }
  })
})

describe("calendarDatesOf", () => {
  it("should give the calendar dates of the range's ends, at the ends of the range too", () => {
    const range = Effect.runSync(resolveDateRange({ from: "0001-01-01", to: "9999-12-31T23:59:59.999Z" }))
    expect(calendarDatesOf(range)).toEqual({ fromDate: "0001-01-01", toDate: "9999-12-31" })
    expect(calendarDatesOf(Effect.runSync(resolveDateRange({ from: "2026-11-02T23:30:00-01:00" })))).toEqual({ fromDate: "2026-11-03" })
  })
})

describe("resolvePeriod", () => {
  const now = Date.parse("2026-11-22T21:30:00.000Z")
  it("should resolve this_month to the UTC calendar month", () => {
    const p = Effect.runSync(resolvePeriod("this_month", now))
    expect([p.from, p.to, p.toInstant]).toEqual(["2026-11-01", "2026-11-30", "2026-11-30T23:59:59.999Z"])
  })
  it("should resolve last_month across a year boundary", () => {
    const p = Effect.runSync(resolvePeriod("last_month", Date.parse("2026-01-15T00:00:00Z")))
    expect([p.from, p.to]).toEqual(["2025-12-01", "2025-12-31"])
  })
  it("should resolve last_30_days to today and the 29 days before", () => {
    const p = Effect.runSync(resolvePeriod("last_30_days", now))
    expect([p.from, p.to]).toEqual(["2026-10-24", "2026-11-22"])
  })
  it("should resolve a YYYY-MM month including leap days", () => {
    const p = Effect.runSync(resolvePeriod("2028-02", now))
    expect([p.key, p.from, p.to]).toEqual(["2028-02", "2028-02-01", "2028-02-29"])
  })
  it("should refuse anything else", () => {
    for (const bad of ["2026-13", "this_week", "2026-1", "", "0000-01", "0000-12", "10000-01"]) {
      expect(failureTag(run(resolvePeriod(bad, now)))).toBe("InvalidRequest")
    }
  })
  it("should resolve any month from 0001-01 to 9999-12, the years 0001 to 0099 as themselves", () => {
    const month = (key: string) => {
      const p = Effect.runSync(resolvePeriod(key, now))
      return [p.from, p.to, p.fromInstant, p.toInstant]
    }
    expect(month("0001-01")).toEqual(["0001-01-01", "0001-01-31", "0001-01-01T00:00:00.000Z", "0001-01-31T23:59:59.999Z"])
    expect(month("0099-12")).toEqual(["0099-12-01", "0099-12-31", "0099-12-01T00:00:00.000Z", "0099-12-31T23:59:59.999Z"])
    expect(month("0004-02")).toEqual(["0004-02-01", "0004-02-29", "0004-02-01T00:00:00.000Z", "0004-02-29T23:59:59.999Z"])
    expect(month("1969-07")).toEqual(["1969-07-01", "1969-07-31", "1969-07-01T00:00:00.000Z", "1969-07-31T23:59:59.999Z"])
    expect(month("9999-12")).toEqual(["9999-12-01", "9999-12-31", "9999-12-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z"])
  })
  it("should accept those months when the query is decoded, and refuse 0000", () => {
    for (const period of ["0001-01", "0099-12", "1969-07", "9999-12"]) {
      expect(Effect.runSync(decodeInput(StatsQuery, { period }, "Query"))).toEqual({ period })
    }
    for (const period of ["0000-01", "0000-12"]) {
      expect(failureOf(run(decodeInput(StatsQuery, { period }, "Query")))?.errors).toEqual([expect.objectContaining({ path: "period" })])
    }
  })
})

describe("secondsToNextUtcMidnight", () => {
  it("should count the seconds to the next UTC midnight", () => {
    expect(secondsToNextUtcMidnight(Date.parse("2026-11-22T23:59:00.000Z"))).toBe(60)
    expect(secondsToNextUtcMidnight(Date.parse("2026-11-22T00:00:00.000Z"))).toBe(86_400)
  })
  it("should never answer zero", () => {
    expect(secondsToNextUtcMidnight(Date.parse("2026-11-22T23:59:59.999Z"))).toBe(1)
  })
})
