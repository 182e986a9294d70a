import { Ids } from "@content-site/core"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { randomBase62, randomIds } from "../src/web.ts"

describe("random ids", () => {
  it("should make prefixed ids of 16 base62 characters, all distinct", () => {
    const ids = Effect.runSync(
      Effect.provide(Effect.forEach(Array.from({ length: 20_000 }), () => Ids.use((i) => i.make("act"))), randomIds),
    )
    for (const id of ids) expect(id).toMatch(/^act_[0-9A-Za-z]{16}$/)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("should draw every base62 character about equally often across many pool refills", () => {
    const counts = new Map<string, number>()
    const text = Array.from({ length: 2_000 }, () => randomBase62(62)).join("")
    for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1)
    expect(counts.size).toBe(62)
    const expected = text.length / 62
    // chi-square with 61 degrees of freedom: far beyond 140 happens with probability < 1e-7
    const chi = [...counts.values()].reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0)
    expect(chi).toBeLessThan(140)
  })
})
