import { analyzeArticleHtml, applyTextEdits, compareBodies, HtmlAnalyzer, makeDiffBudget, proseOfHtml, RateLimited, readStoredBody, Unavailable } from "@content-site/core"
import { Effect, Exit, ManagedRuntime } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import analyzeInWorker, * as worker from "../src/htmlWorker.ts"
import type { HtmlWorkerAnswer } from "../src/htmlWorker.ts"
import type { NamedTasks } from "../src/workerHtmlAnalyzer.ts"
import { ADMITTED_HOLD_MS, pooledHtmlAnalyzer, SMALL_BODY, STORED_INLINE, workerHtmlAnalyzer } from "../src/index.ts"
import { PARTS_JOB_CHARS } from "../src/workerHtmlAnalyzer.ts"

const runtime = ManagedRuntime.make(workerHtmlAnalyzer({ maxThreads: 1 }))
afterAll(() => runtime.dispose())

const inWorker = (html: string) => runtime.runPromiseExit(HtmlAnalyzer.use((a) => a.analyze(html, "acc_a")))

describe("workerHtmlAnalyzer", () => {
  it("should answer what analyzeArticleHtml answers: result, InvalidRequest and PayloadTooLarge", async () => {
    const bodies = [
      '<p>Hi <a href="https://x.test" data-service-protected="backlink" onclick="y">x</a><script>1</script></p>',
      "",
      "<div>".repeat(300),
      "<p><b><i><u>".repeat(20_000),
      `<p>${"word ".repeat(2_000)}</p>`,
    ]
    for (const body of bodies) {
      const expected = Effect.runSyncExit(analyzeArticleHtml(body))
      const actual = await inWorker(body)
      expect(Exit.isSuccess(actual)).toBe(Exit.isSuccess(expected))
      if (Exit.isSuccess(actual) && Exit.isSuccess(expected)) expect(actual.value).toStrictEqual(expected.value)
      else expect(JSON.stringify(actual)).toBe(JSON.stringify(expected))
    }
  })

  it("should keep the event loop free while it sanitises", async () => {
    let done = false
    const work = inWorker("<p><b><i><u>".repeat(80_000)).then((exit) => {
      done = true
      return exit
    })
    // The next turn of the loop comes before a parse of 131 072 elements elsewhere ends; sanitising
    // in this thread would end first. An order, not a count of turns (which depends on speed).
    const turned = new Promise<boolean>((resolve) => setImmediate(() => resolve(!done)))
    const exit = await work
    expect(Exit.isFailure(exit)).toBe(true)
    expect(await turned).toBe(true)
  })
})

describe("workerHtmlAnalyzer: diffs and stored bodies", () => {
  it("should answer what compareBodies and readStoredBody answer", async () => {
    const from = '<p>one two</p><p>See <a href="https://x.test/" data-service-protected="backlink">x</a></p>'
    const to = "<p>one three</p>"
    const compared = await runtime.runPromise(HtmlAnalyzer.use((a) => a.compare(from, to, { reading: true }, "acc_a")))
    expect(compared).toStrictEqual(compareBodies(from, to, { reading: true }, makeDiffBudget()))
    expect(compared.diff.granularity).toBe("word")
    const stored = await runtime.runPromise(HtmlAnalyzer.use((a) => a.readStored(from, "acc_a")))
    expect(stored).toStrictEqual(readStoredBody(from))
  })

  it("should keep the event loop free while it compares", async () => {
    const words = (prefix: string) => Array.from({ length: 500 }, (_, i) => `<p>${`${prefix}${i}`.padEnd(1_000, prefix)}</p>`).join("")
    let done = false
    const work = runtime.runPromise(HtmlAnalyzer.use((a) => a.compare(words("a"), words("b"), {}, "acc_a"))).then((c) => {
      done = true
      return c
    })
    // As above: the next turn of the loop comes before the comparison elsewhere ends.
    const turned = new Promise<boolean>((resolve) => setImmediate(() => resolve(!done)))
    const compared = await work
    expect(compared.diff.added_words).toBe(500)
    expect(await turned).toBe(true)
  })
})

describe("workerHtmlAnalyzer: find-and-replace edits", () => {
  it("should answer what applyTextEdits answers", async () => {
    const edits = [{ find: "b", replace: "x" }, { find: "a", replace: "y" }]
    const out = await runtime.runPromise(HtmlAnalyzer.use((a) => a.applyEdits("a b a", edits, "acc_a")))
    expect(out).toStrictEqual(applyTextEdits("a b a", edits))
  })
})

/** A pool that runs the worker's task in this thread, counting the bodies sent to it; `hold` keeps them running. */
const countingPool = (threads = 1) => {
  const sent: Array<string> = []
  const named: Array<string> = []
  const held: Array<() => void> = []
  let hold = false
  return {
    sent,
    named,
    held,
    holdAll: () => (hold = true),
    release: () => held.splice(0).forEach((go) => go()),
    pool: {
      threads,
      // The named tasks run here too, through the same functions the worker runs.
      runNamed: async <K extends keyof NamedTasks>(name: K, task: NamedTasks[K][0]): Promise<NamedTasks[K][1]> => {
        named.push(name)
        return (worker[name] as (t: NamedTasks[K][0]) => NamedTasks[K][1])(task)
      },
      run: (html: string) =>
        new Promise<HtmlWorkerAnswer>((resolve) => {
          sent.push(html)
          const go = () => resolve(analyzeInWorker(html))
          if (hold) held.push(go)
          else go()
        }),
    },
  }
}

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E | undefined => (Exit.isFailure(exit) ? (exit.cause.reasons.find((r) => r._tag === "Fail") as { error: E } | undefined)?.error : undefined)

describe("pooledHtmlAnalyzer", () => {
  it("should sanitise many parts, each on its own, in a bounded number of pool jobs: the first small ones here, the rest together", async () => {
    const c = countingPool()
    const analyzer = pooledHtmlAnalyzer(c.pool)
    // 3 000 parts of about 1 KiB (3 MiB): one job a part would be 3 000 round trips
    const parts = Array.from({ length: 3000 }, (_, i) => (i % 3 === 0 ? `<p>${i} <!-- open ${"x".repeat(1000)}` : i % 3 === 1 ? `<p>${i} <script>${"y".repeat(1000)}` : `<p>${i} <b>${"z".repeat(1000)}`))
    const answers = await Effect.runPromise(analyzer.sanitizeEach(parts, "acc_a"))
    expect(answers).toStrictEqual(parts.map((part) => Effect.runSync(Effect.map(analyzeArticleHtml(part), (a) => a.html))))
    const total = parts.reduce((n, part) => n + part.length, 0)
    const jobs = c.named.filter((name) => name === "sanitizeEach").length
    expect(jobs).toBeGreaterThan(0)
    expect(jobs).toBeLessThanOrEqual(Math.floor(total / PARTS_JOB_CHARS) + 1)
    expect(c.sent).toHaveLength(0)
    // a refused part (over a body's size) is null, the others sanitised all the same
    const refused = await Effect.runPromise(analyzer.sanitizeEach(["<p>a", "x".repeat(PARTS_JOB_CHARS + 1), "<p>b"], "acc_a"))
    expect(refused).toStrictEqual(["<p>a</p>", null, "<p>b</p>"])
  })

  it("should sanitise a small body where it is asked and send a big one to the pool (counted)", async () => {
    const c = countingPool()
    const analyzer = pooledHtmlAnalyzer(c.pool)
    const smallBody = `<p>${"a".repeat(SMALL_BODY.chars - 20)}</p>`
    expect(smallBody.length).toBeLessThanOrEqual(SMALL_BODY.chars)
    expect(Exit.isSuccess(await Effect.runPromiseExit(analyzer.analyze(smallBody, "acc_a")))).toBe(true)
    expect(c.sent).toHaveLength(0)
    // One character past the bound: the pool.
    const bigBody = `<p>${"a".repeat(SMALL_BODY.chars - 6)}</p>`
    expect(bigBody.length).toBe(SMALL_BODY.chars + 1)
    const big = await Effect.runPromiseExit(analyzer.analyze(bigBody, "acc_a"))
    expect(c.sent).toEqual([bigBody])
    expect(big).toStrictEqual(Effect.runSyncExit(analyzeArticleHtml(bigBody)))
    // Short, but it builds more than the small parse budget (formatting reopened in every paragraph): the pool.
    const reopening = `<p>${"<b><i><u><s><em><strong><small><big><tt><font><nobr><code>".repeat(3)}${"<p>x".repeat(400)}`
    expect(reopening.length).toBeLessThan(SMALL_BODY.chars)
    const dense = await Effect.runPromiseExit(analyzer.analyze(reopening, "acc_a"))
    expect(c.sent).toHaveLength(2)
    expect(dense).toStrictEqual(Effect.runSyncExit(analyzeArticleHtml(reopening)))
  })

  it("should refuse an account past its cap with RateLimited, and take another account's body", async () => {
    const c = countingPool()
    const analyzer = pooledHtmlAnalyzer(c.pool, { perAccount: 2 })
    c.holdAll()
    const big = `<p>${"a".repeat(SMALL_BODY.chars)}</p>`
    const first = [Effect.runPromiseExit(analyzer.analyze(big, "acc_a")), Effect.runPromiseExit(analyzer.analyze(big, "acc_a"))]
    const third = await Effect.runPromiseExit(analyzer.analyze(big, "acc_a"))
    expect(failureOf(third)).toBeInstanceOf(RateLimited)
    expect((failureOf(third) as RateLimited).retryAfterSeconds).toBe(1)
    // Asked before a body is read: refused for that account and a body that would wait, not for a small one or another account.
    expect(failureOf(await Effect.runPromiseExit(analyzer.admits("acc_a")))).toBeInstanceOf(RateLimited)
    expect(failureOf(await Effect.runPromiseExit(analyzer.admits("acc_a", SMALL_BODY.chars + 1)))).toBeInstanceOf(RateLimited)
    expect(Exit.isSuccess(await Effect.runPromiseExit(analyzer.admits("acc_a", SMALL_BODY.chars)))).toBe(true)
    expect(Exit.isSuccess(await Effect.runPromiseExit(analyzer.admits("acc_b")))).toBe(true)
    // A small body of the same account is still done: it takes no place in the pool.
    expect(Exit.isSuccess(await Effect.runPromiseExit(analyzer.analyze("<p>small</p>", "acc_a")))).toBe(true)
    const bigB = `<p>${"b".repeat(SMALL_BODY.chars)}</p>`
    const other = Effect.runPromiseExit(analyzer.analyze(bigB, "acc_b"))
    for (let i = 0; i < 5; i++) await Promise.resolve()
    // Only one thread: acc_a's first body runs, acc_b's waits its turn, ahead of acc_a's second.
    expect(c.sent).toHaveLength(1)
    c.release()
    for (let i = 0; i < 10; i++) await Promise.resolve()
    expect(c.sent).toEqual([big, bigB])
    c.release()
    for (let i = 0; i < 10; i++) await Promise.resolve()
    c.release()
    expect(Exit.isSuccess(await other)).toBe(true)
    for (const exit of await Promise.all(first)) expect(Exit.isSuccess(exit)).toBe(true)
    expect(c.sent).toEqual([big, bigB, big])
  })

  it("should promise a place to each body it admits, so that bodies admitted at once count against the cap before any reaches the pool", async () => {
    const c = countingPool()
    let clock = 1_000_000
    const analyzer = pooledHtmlAnalyzer(c.pool, { perAccount: 4, now: () => clock })
    c.holdAll()
    const large = SMALL_BODY.chars + 1
    const admit = async (owner: string, length?: number) => Exit.isSuccess(await Effect.runPromiseExit(analyzer.admits(owner, length)))
    // Twenty large bodies of one account at once, none of them read yet: four admitted, sixteen refused.
    const answers: Array<boolean> = []
    for (let i = 0; i < 20; i++) answers.push(await admit("acc_a", large))
    expect(answers.filter((ok) => ok)).toHaveLength(4)
    expect(answers.slice(0, 4)).toEqual([true, true, true, true])
    expect(c.sent).toHaveLength(0)
    // Another account, and a small body of the same one, are not refused.
    expect(await admit("acc_b", large)).toBe(true)
    expect(await admit("acc_a", SMALL_BODY.chars)).toBe(true)
    // An admitted body that reaches the pool takes its place: still four, no fifth.
    const big = `<p>${"a".repeat(SMALL_BODY.chars)}</p>`
    const taken = Effect.runPromiseExit(analyzer.analyze(big, "acc_a"))
    for (let i = 0; i < 5; i++) await Promise.resolve()
    expect(c.sent).toHaveLength(1)
    expect(await admit("acc_a", large)).toBe(false)
    // Places never taken (their requests refused on the way) lapse after ADMITTED_HOLD_MS: one
    // body running, three places given back.
    clock += ADMITTED_HOLD_MS
    expect(await admit("acc_a", large)).toBe(true)
    expect(await admit("acc_a", large)).toBe(true)
    expect(await admit("acc_a", large)).toBe(true)
    expect(await admit("acc_a", large)).toBe(false)
    c.release()
    expect(Exit.isSuccess(await taken)).toBe(true)
  })

  it("should give a promised place back at once when its request ends without reaching the pool", async () => {
    const c = countingPool()
    const analyzer = pooledHtmlAnalyzer(c.pool, { perAccount: 2 })
    const large = SMALL_BODY.chars + 1
    const releases = [await Effect.runPromise(analyzer.admits("acc_a", large)), await Effect.runPromise(analyzer.admits("acc_a"))]
    expect(failureOf(await Effect.runPromiseExit(analyzer.admits("acc_a", large)))).toBeInstanceOf(RateLimited)
    // The first request was refused on the way (a 413, a 404): its place is free again, once.
    releases[0]!()
    releases[0]!()
    const third = await Effect.runPromise(analyzer.admits("acc_a", large))
    expect(failureOf(await Effect.runPromiseExit(analyzer.admits("acc_a", large)))).toBeInstanceOf(RateLimited)
    // A place taken by a job in the pool is not given back twice: releasing after the job is harmless.
    const big = `<p>${"a".repeat(SMALL_BODY.chars)}</p>`
    expect(Exit.isSuccess(await Effect.runPromiseExit(analyzer.analyze(big, "acc_a")))).toBe(true)
    releases[1]!()
    third()
    expect(c.sent).toHaveLength(1)
    const again = [await Effect.runPromiseExit(analyzer.admits("acc_a", large)), await Effect.runPromiseExit(analyzer.admits("acc_a", large))]
    expect(again.every(Exit.isSuccess)).toBe(true)
    expect(failureOf(await Effect.runPromiseExit(analyzer.admits("acc_a", large)))).toBeInstanceOf(RateLimited)
  })

  it("should answer Unavailable to everyone once the pool's queue is full", async () => {
    const c = countingPool()
    const analyzer = pooledHtmlAnalyzer(c.pool, { perAccount: 4, maxQueue: 1 })
    c.holdAll()
    const big = `<p>${"a".repeat(SMALL_BODY.chars)}</p>`
    void Effect.runPromiseExit(analyzer.analyze(big, "acc_a"))
    void Effect.runPromiseExit(analyzer.analyze(big, "acc_b"))
    for (let i = 0; i < 5; i++) await Promise.resolve()
    expect(failureOf(await Effect.runPromiseExit(analyzer.analyze(big, "acc_c")))).toBeInstanceOf(Unavailable)
    c.release()
  })
})

describe("pooledHtmlAnalyzer: stored bodies", () => {
  it("should read a stored body of at most STORED_INLINE characters here, and a longer one in the pool (counted)", async () => {
    const c = countingPool()
    const analyzer = pooledHtmlAnalyzer(c.pool)
    const fits = `<p>${"a".repeat(STORED_INLINE - 7)}</p>`
    expect(fits.length).toBe(STORED_INLINE)
    // Many reads of small articles at once: none waits for the account's share, none is refused.
    const reads = await Promise.all(Array.from({ length: 30 }, () => Effect.runPromiseExit(analyzer.readStored(fits, "acc_a"))))
    expect(reads.every(Exit.isSuccess)).toBe(true)
    expect(c.named).toEqual([])
    expect(Exit.isSuccess(await Effect.runPromiseExit(analyzer.readStored(`${fits} `, "acc_a")))).toBe(true)
    expect(c.named).toEqual(["readStored"])
  })

  it("should make the prose of a stored body of at most STORED_INLINE characters here, and of a longer one in the pool (counted)", async () => {
    const c = countingPool()
    const analyzer = pooledHtmlAnalyzer(c.pool)
    const fits = `<pre>${" ".repeat(STORED_INLINE - 11)}</pre>`
    expect(fits.length).toBe(STORED_INLINE)
    const here = await Effect.runPromise(analyzer.prose(fits, "acc_a"))
    expect(here).toBe(proseOfHtml(fits))
    expect(c.named).toEqual([])
    // one character more: the pool, with the same answer
    const longer = `${fits} `
    expect(await Effect.runPromise(analyzer.prose(longer, "acc_a"))).toBe(proseOfHtml(longer))
    expect(c.named).toEqual(["prose"])
  })
})
