import { analyzeArticleHtml, applyTextEdits, compareBodies, HtmlAnalyzer, makeDiffBudget, readStoredBody } from "@content-site/core"
import { Effect, Exit, ManagedRuntime } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { workerHtmlAnalyzer } from "../src/index.ts"

const runtime = ManagedRuntime.make(workerHtmlAnalyzer({ maxThreads: 1 }))
afterAll(() => runtime.dispose())

const inWorker = (html: string) => runtime.runPromiseExit(HtmlAnalyzer.use((a) => a.analyze(html)))

describe("workerHtmlAnalyzer", () => {
  it("should answer what analyzeArticleHtml answers: result, InvalidRequest and PayloadTooLarge", async () => {
    const bodies = [
      '<p>Hi <a href="https://x.test" data-service-protected="backlink" onclick="y">x</a><script>1</script></p>',
      "",
      "<div>".repeat(300),
      "<p><b><i><u>".repeat(20_000),
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
    let ticks = 0
    let done = false
    const tick = (): void => {
      if (done) return
      ticks++
      setImmediate(tick)
    }
    const work = inWorker("<p><b><i><u>".repeat(80_000)).then((exit) => {
      done = true
      return exit
    })
    tick()
    const exit = await work
    expect(Exit.isFailure(exit)).toBe(true)
    // Sanitising in this thread would let no turn of the loop run until it is done.
    expect(ticks).toBeGreaterThan(10)
  })
})

describe("workerHtmlAnalyzer: diffs and stored bodies", () => {
  it("should answer what compareBodies and readStoredBody answer", async () => {
    const from = '<p>one two</p><p>See <a href="https://x.test/" data-service-protected="backlink">x</a></p>'
    const to = "<p>one three</p>"
    const compared = await runtime.runPromise(HtmlAnalyzer.use((a) => a.compare(from, to, { reading: true })))
    expect(compared).toStrictEqual(compareBodies(from, to, { reading: true }, makeDiffBudget()))
    expect(compared.diff.granularity).toBe("word")
    const stored = await runtime.runPromise(HtmlAnalyzer.use((a) => a.readStored(from)))
    expect(stored).toStrictEqual(readStoredBody(from))
  })

  it("should keep the event loop free while it compares", async () => {
    const words = (prefix: string) => Array.from({ length: 500 }, (_, i) => `<p>${`${prefix}${i}`.padEnd(1_000, prefix)}</p>`).join("")
    let ticks = 0
    let done = false
    const tick = (): void => {
      if (done) return
      ticks++
      setImmediate(tick)
    }
    const work = runtime.runPromise(HtmlAnalyzer.use((a) => a.compare(words("a"), words("b"), {}))).then((c) => {
      done = true
      return c
    })
    tick()
    const compared = await work
    expect(compared.diff.added_words).toBe(500)
    expect(ticks).toBeGreaterThan(10)
  })
})

describe("workerHtmlAnalyzer: find-and-replace edits", () => {
  it("should answer what applyTextEdits answers", async () => {
    const edits = [{ find: "b", replace: "x" }, { find: "a", replace: "y" }]
    const out = await runtime.runPromise(HtmlAnalyzer.use((a) => a.applyEdits("a b a", edits)))
    expect(out).toStrictEqual(applyTextEdits("a b a", edits))
  })
})
