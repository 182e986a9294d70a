/** Leased request counting against an in-memory stand-in for the lease statement. */
import { describe, expect, it } from "vitest"
import { leasedCounter, MAX_LEASE, type Lease, type Reserve, verdict, windowOf } from "../src/leases.ts"

/** The lease statement's arithmetic on one shared counter per key and window, with a log of calls. */
const sharedCounter = () => {
  const counts = new Map<string, number>()
  const calls: Array<{ key: string; windowStart: number; wanted: number; granted: number }> = []
  let inFlight = 0
  let mostInFlight = 0
  const reserve: Reserve = async (key, windowStart, limit, wanted): Promise<Lease> => {
    inFlight++
    mostInFlight = Math.max(mostInFlight, inFlight)
    // the statement's latency, not a wait for anything: hits that arrive meanwhile must share this lease
    await new Promise((r) => setTimeout(r, 1))
    inFlight--
    const id = `${key}@${windowStart}`
    const c = counts.get(id) ?? 0
    const granted = Math.max(0, Math.min(wanted, Math.ceil((limit - c) / 10), limit - c))
    counts.set(id, c + granted)
    calls.push({ key, windowStart, wanted, granted })
    return { count: c + granted, granted }
  }
  return { reserve, calls, count: (key: string, windowStart: number) => counts.get(`${key}@${windowStart}`) ?? 0, mostInFlight: () => mostInFlight }
}

const clock = (start = 1_000_000_000) => {
  let t = start
  return { now: () => t, advance: (ms: number) => void (t += ms) }
}

describe("leased request counting", () => {
  it("should answer exact remaining values and refuse past the limit on one instance", async () => {
    const shared = sharedCounter()
    const counter = leasedCounter(shared.reserve, { now: clock().now, onExhausted: () => {} })
    const verdicts = []
    for (let i = 0; i < 5; i++) verdicts.push(await counter.hit("k", 3, 60))
    expect(verdicts.map((v) => [v.allowed, v.remaining])).toEqual([[true, 2], [true, 1], [true, 0], [false, 0], [false, 0]])
  })

  it("should share one lease request among concurrent hits on one key and spend no more than granted", async () => {
    const shared = sharedCounter()
    const counter = leasedCounter(shared.reserve, { now: clock().now, onExhausted: () => {} })
    const verdicts = await Promise.all(Array.from({ length: 200 }, () => counter.hit("k", 120, 60)))
    expect(shared.mostInFlight()).toBe(1)
    expect(verdicts.filter((v) => v.allowed).length).toBe(120)
    expect(shared.calls.reduce((sum, c) => sum + c.granted, 0)).toBe(120)
  })

  it("should double the lease while it is spent within a second, up to the maximum", async () => {
    const shared = sharedCounter()
    const counter = leasedCounter(shared.reserve, { now: clock().now, onExhausted: () => {} })
    for (let i = 0; i < 2_000; i++) await counter.hit("k", 1_000_000_000, 60)
    const wanted = shared.calls.map((c) => c.wanted)
    expect(wanted.slice(0, 10)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 256])
    expect(Math.max(...wanted)).toBe(MAX_LEASE)
  })

  it("should keep asking for one hit when the key is hit rarely", async () => {
    const shared = sharedCounter()
    const time = clock()
    const counter = leasedCounter(shared.reserve, { now: time.now, onExhausted: () => {} })
    for (let i = 0; i < 5; i++) {
      await counter.hit("authfail:x", 10, 3600)
      time.advance(2_000)
    }
    expect(shared.calls.map((c) => c.wanted)).toEqual([1, 1, 1, 1, 1])
  })

  it("should shrink leases to one hit near the limit", async () => {
    const shared = sharedCounter()
    const counter = leasedCounter(shared.reserve, { now: clock().now, onExhausted: () => {} })
    for (let i = 0; i < 100; i++) await counter.hit("k", 100, 60)
    const last = shared.calls.slice(-5).map((c) => c.granted)
    expect(last).toEqual([1, 1, 1, 1, 1])
  })

  it("should drop hits still held when a new window starts", async () => {
    const shared = sharedCounter()
    const time = clock(60_000 * 1_000)
    const counter = leasedCounter(shared.reserve, { now: time.now, onExhausted: () => {} })
    for (let i = 0; i < 8; i++) await counter.hit("k", 1_000, 60)
    const first = shared.calls.length
    time.advance(60_000)
    expect(await counter.hit("k", 1_000, 60)).toMatchObject({ allowed: true })
    expect(shared.calls.length).toBe(first + 1)
    expect(shared.calls.at(-1)!.windowStart).toBe(60_000 * 1_001)
  })

  it("should announce the window's exhaustion once, from the lease that reached the limit", async () => {
    const shared = sharedCounter()
    const announced: Array<[string, number]> = []
    const time = clock(60_000 * 1_000)
    const counter = leasedCounter(shared.reserve, { now: time.now, onExhausted: (key, end) => announced.push([key, end]) })
    for (let i = 0; i < 6; i++) await counter.hit("k", 4, 60)
    expect(announced).toEqual([["k", 60_000 * 1_001]])
  })

  it("should know a window is exhausted when another instance took the last hits", async () => {
    const shared = sharedCounter()
    const time = clock(60_000 * 1_000)
    const announced: Array<string> = []
    const here = leasedCounter(shared.reserve, { now: time.now, onExhausted: (key) => announced.push(`here:${key}`) })
    const there = leasedCounter(shared.reserve, { now: time.now, onExhausted: (key) => announced.push(`there:${key}`) })
    for (let i = 0; i < 3; i++) await there.hit("k", 3, 60)
    expect(here.exhaustedIn("k", 60_000 * 1_000)).toBe(false)
    expect(await here.hit("k", 3, 60)).toMatchObject({ allowed: false, remaining: 0 })
    expect(here.exhaustedIn("k", 60_000 * 1_000)).toBe(true)
    expect(announced).toEqual(["there:k"])
  })

  it("should tell how many hits this instance let through in a window", async () => {
    const shared = sharedCounter()
    const time = clock(60_000 * 1_000)
    const counter = leasedCounter(shared.reserve, { now: time.now, onExhausted: () => {} })
    for (let i = 0; i < 5; i++) await counter.hit("k", 3, 60)
    expect(counter.spentIn("k", 60_000 * 1_000)).toBe(3)
    expect(counter.spentIn("k", 60_000 * 999)).toBe(0)
  })

  it("should let every waiter fail when the lease statement fails", async () => {
    const failing: Reserve = () => Promise.reject(new Error("connection refused"))
    const counter = leasedCounter(failing, { now: clock().now, onExhausted: () => {} })
    const outcomes = await Promise.allSettled(Array.from({ length: 3 }, () => counter.hit("k", 10, 60)))
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected", "rejected"])
  })
})

describe("a lease's verdicts and what an instance knows of a window", () => {
  it("should answer the seconds to the window's end rounded up, at least 1, and never a negative remainder", () => {
    const now = 1_000_000_000
    expect(verdict(5, 2, now + 1_500, now, true)).toEqual({ allowed: true, limit: 5, remaining: 3, resetSeconds: 2 })
    expect(verdict(5, 7, now + 60_000, now, false)).toEqual({ allowed: false, limit: 5, remaining: 0, resetSeconds: 60 })
    expect(verdict(5, 5, now + 100, now, false).resetSeconds).toBe(1)
    expect(verdict(5, 5, now, now, false).resetSeconds).toBe(1)
  })

  it("should say a window exhausted, and the hits spent in it, for that window only", async () => {
    const shared = sharedCounter()
    const time = clock()
    const counter = leasedCounter(shared.reserve, { now: time.now, onExhausted: () => {} })
    const { start } = windowOf(60, time.now())
    for (let i = 0; i < 3; i++) await counter.hit("k", 2, 60)
    expect([counter.exhaustedIn("k", start), counter.spentIn("k", start)]).toEqual([true, 2])
    expect([counter.exhaustedIn("k", start - 60_000), counter.spentIn("k", start - 60_000)]).toEqual([false, 0])
    expect([counter.exhaustedIn("other", start), counter.spentIn("other", start)]).toEqual([false, 0])
  })
})
