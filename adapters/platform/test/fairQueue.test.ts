import { describe, expect, it } from "vitest"
import { fairQueue } from "../src/fairQueue.ts"

/** A job that runs until `finish` is called; `order` notes when each one started. */
const gate = () => {
  const order: Array<string> = []
  const pending = new Map<string, () => void>()
  const job = (name: string) => () =>
    new Promise<string>((resolve) => {
      order.push(name)
      pending.set(name, () => resolve(name))
    })
  const finish = async (name: string) => {
    pending.get(name)!()
    pending.delete(name)
    // Let the queue hand the freed slot out.
    for (let i = 0; i < 5; i++) await Promise.resolve()
  }
  return { order, job, finish, running: () => [...pending.keys()] }
}

describe("fairQueue", () => {
  it("should take turns between accounts: another account's job runs after one job, not after the whole queue", async () => {
    const q = fairQueue({ slots: 1, perOwner: 10, maxWaiting: 64 })
    const g = gate()
    const a = [1, 2, 3, 4].map((i) => q.run("A", g.job(`a${i}`)))
    const b = q.run("B", g.job("b1"))
    expect(g.order).toEqual(["a1"])
    await g.finish("a1")
    // B's job was queued behind three more of A's, and runs next.
    expect(g.order).toEqual(["a1", "b1"])
    await g.finish("b1")
    for (const name of ["a2", "a3", "a4"]) await g.finish(name)
    expect(g.order).toEqual(["a1", "b1", "a2", "a3", "a4"])
    expect(await b).toEqual({ value: "b1" })
    expect(await Promise.all(a)).toEqual([1, 2, 3, 4].map((i) => ({ value: `a${i}` })))
    expect(q.load()).toEqual({ running: 0, waiting: 0 })
  })

  it("should rotate between three accounts one job each", async () => {
    const q = fairQueue({ slots: 1, perOwner: 10, maxWaiting: 64 })
    const g = gate()
    for (const i of [1, 2, 3]) void q.run("A", g.job(`a${i}`))
    for (const i of [1, 2]) void q.run("B", g.job(`b${i}`))
    void q.run("C", g.job("c1"))
    while (g.running().length > 0) await g.finish(g.running()[0]!)
    expect(g.order).toEqual(["a1", "b1", "c1", "a2", "b2", "a3"])
  })

  it("should refuse an account past its cap of running and waiting jobs, and that account alone", async () => {
    const q = fairQueue({ slots: 1, perOwner: 2, maxWaiting: 64 })
    const g = gate()
    void q.run("A", g.job("a1"))
    void q.run("A", g.job("a2"))
    expect(await q.run("A", g.job("a3"))).toEqual({ refused: "owner" })
    const b = q.run("B", g.job("b1"))
    expect(q.load("A")).toEqual({ running: 1, waiting: 1 })
    expect(q.load("B")).toEqual({ running: 0, waiting: 1 })
    await g.finish("a1")
    // A has room again once one of its jobs is done.
    void q.run("A", g.job("a3"))
    expect(q.load("A")).toEqual({ running: 0, waiting: 2 })
    await g.finish("b1")
    await g.finish("a2")
    await g.finish("a3")
    expect(await b).toEqual({ value: "b1" })
    expect(g.order).toEqual(["a1", "b1", "a2", "a3"])
  })

  it("should keep a slot free for others when an account may hold fewer than all of them", async () => {
    const q = fairQueue({ slots: 2, perOwner: 4, perOwnerRunning: 1, maxWaiting: 64 })
    const g = gate()
    for (const i of [1, 2, 3]) void q.run("A", g.job(`a${i}`))
    // A's second job waits although a slot is free: that slot is for someone else.
    expect(g.running()).toEqual(["a1"])
    void q.run("B", g.job("b1"))
    expect(g.running()).toEqual(["a1", "b1"])
  })

  it("should refuse anyone once maxWaiting jobs wait, unless the job can start at once", async () => {
    const q = fairQueue({ slots: 1, perOwner: 10, maxWaiting: 2 })
    const g = gate()
    void q.run("A", g.job("a1"))
    void q.run("B", g.job("b1"))
    void q.run("C", g.job("c1"))
    expect(q.load()).toEqual({ running: 1, waiting: 2 })
    expect(await q.run("D", g.job("d1"))).toEqual({ refused: "full" })
    expect(g.order).toEqual(["a1"])
  })

  it("should pass a job's failure on and free its slot", async () => {
    const q = fairQueue({ slots: 1, perOwner: 2, maxWaiting: 4 })
    await expect(q.run("A", () => Promise.reject(new Error("boom")))).rejects.toThrow("boom")
    await expect(q.run("A", () => { throw new Error("sync") })).rejects.toThrow("sync")
    expect(await q.run("A", () => Promise.resolve(1))).toEqual({ value: 1 })
    expect(q.load()).toEqual({ running: 0, waiting: 0 })
  })
})
