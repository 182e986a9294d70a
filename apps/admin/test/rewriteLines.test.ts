/** `rewrite apply` reading its file: lines as the file has them, in time linear in the file's size. */
import { Effect } from "effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it, vi } from "vitest"
import { createTempDir } from "../../../test/support/databases.ts"
import { rewriteApply, type RunEffect } from "../rewrite.ts"

// Every line here is refused before it reaches the database (not JSON): no service is used.
const run: RunEffect = (effect) => Effect.runPromise(effect as Effect.Effect<never>)

describe("rewrite apply reading a huge file", () => {
  it("should read a line of many megabytes in linear time, and number the lines around it", async () => {
    const tmp = createTempDir("cs-rw-lines-")
    const file = join(tmp.dir, "huge.jsonl")
    // one 96 MB line (not JSON) between two short ones, CR LF endings
    writeFileSync(file, Buffer.concat([Buffer.from("{bad\r\n"), Buffer.alloc(96 * 1024 * 1024, 0x61), Buffer.from("\r\n\r\n[\r\n")]))
    const printed: Array<string> = []
    const log = vi.spyOn(console, "log").mockImplementation((text: string) => void printed.push(text))
    const started = Date.now()
    try {
      expect(await rewriteApply(run, file, true)).toBe(1)
    } finally {
      log.mockRestore()
      tmp.remove()
    }
    // Joining the line's chunks again at every chunk (64 KiB) took minutes for this line.
    expect(Date.now() - started).toBeLessThan(15_000)
    expect(printed.map((l) => l.slice(0, 8))).toEqual(["line 1  ", "line 2  ", "line 4  ", "Dry run "])
    expect(printed.at(-1)).toContain("3 lines, 0 would apply, 0 already applied, 3 refused.")
  }, 120_000)
})
