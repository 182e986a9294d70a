/**
 * `rewrite apply` reading its file: lines as the file has them, however they fall across the
 * 64 KiB chunks it is read in (a line of many chunks is joined once, at its end: joining it again
 * at every chunk took 100 s for a line of 96 MB, measured by hand; a test asserts no time).
 */
import { Effect } from "effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it, vi } from "vitest"
import { createTempDir } from "../../../test/support/databases.ts"
import { rewriteApply, type RunEffect } from "../rewrite.ts"

// Every line here is refused before it reaches the database (not JSON): no service is used.
const run: RunEffect = (effect) => Effect.runPromise(effect as Effect.Effect<never>)

describe("rewrite apply reading a large file", () => {
  it("should number the lines around a line of many chunks, and take a CR LF split between two chunks as one line end", async () => {
    const tmp = createTempDir("cs-rw-lines-")
    const file = join(tmp.dir, "large.jsonl")
    const chunk = 64 * 1024
    // line 1 ends with its CR the last byte of the first chunk and its LF the first of the second;
    // line 2 (not JSON) spans 16 chunks; line 3 is blank; line 4 is "["
    const first = Buffer.concat([Buffer.from("{bad"), Buffer.alloc(chunk - 5, 0x62), Buffer.from("\r\n")])
    expect(first.indexOf(0x0d)).toBe(chunk - 1)
    writeFileSync(file, Buffer.concat([first, Buffer.alloc(16 * chunk, 0x61), Buffer.from("\r\n\r\n[\r\n")]))
    const printed: Array<string> = []
    const log = vi.spyOn(console, "log").mockImplementation((text: string) => void printed.push(text))
    try {
      expect(await rewriteApply(run, file, true)).toBe(1)
    } finally {
      log.mockRestore()
      tmp.remove()
    }
    expect(printed.map((l) => l.slice(0, 8))).toEqual(["line 1  ", "line 2  ", "line 4  ", "Dry run "])
    expect(printed.at(-1)).toContain("3 lines, 0 would apply, 0 already applied, 3 refused.")
  })
})
