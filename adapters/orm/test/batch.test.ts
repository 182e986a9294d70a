import { describe, expect, it } from "vitest"
import { batchedLookup } from "../src/batch.ts"

interface Row {
  readonly id: string
  readonly n: number
}

const table: ReadonlyArray<Row> = [
  { id: "a", n: 1 },
  { id: "b", n: 2 },
  { id: "c", n: 3 },
]

/** A loader over `table` that records every statement it was asked to run. */
const recording = (fail: () => boolean = () => false) => {
  const calls: Array<ReadonlyArray<string>> = []
  const lookup = batchedLookup<Row>(
    async (keys) => {
      calls.push(keys)
      if (fail()) throw new Error("connection lost")
      return table.filter((r) => keys.includes(r.id))
    },
    (r) => r.id,
    4,
  )
  return { calls, lookup }
}

describe("batched lookups", () => {
  it("should answer lookups made in one turn with one statement, each caller with its own row or undefined", async () => {
    const { calls, lookup } = recording()
    const answers = await Promise.all([lookup("b"), lookup("zz"), lookup("a"), lookup("b")])
    expect(answers).toEqual([{ id: "b", n: 2 }, undefined, { id: "a", n: 1 }, { id: "b", n: 2 }])
    expect(calls).toEqual([["b", "zz", "a"]])
  })

  it("should run lookups of later turns as later statements", async () => {
    const { calls, lookup } = recording()
    expect(await lookup("a")).toEqual({ id: "a", n: 1 })
    expect(await lookup("c")).toEqual({ id: "c", n: 3 })
    expect(calls).toEqual([["a"], ["c"]])
  })

  it("should send a full batch at once and start the next one", async () => {
    const { calls, lookup } = recording()
    const answers = await Promise.all(["a", "b", "c", "a", "b", "c"].map(lookup))
    expect(answers.map((r) => r?.n)).toEqual([1, 2, 3, 1, 2, 3])
    expect(calls).toEqual([["a", "b", "c"], ["b", "c"]])
  })

  it("should fail every caller of a failed statement and serve the next batch", async () => {
    let failing = true
    const { lookup } = recording(() => failing)
    const outcomes = await Promise.allSettled([lookup("a"), lookup("b")])
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected"])
    failing = false
    expect(await lookup("b")).toEqual({ id: "b", n: 2 })
  })
})
