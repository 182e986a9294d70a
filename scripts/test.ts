/**
 * `npm test`: the typecheck (with the purity and boundary checks), the Node suite and the core's
 * suite on Deno. The typecheck and the Deno run go beside the Node suite rather than before and
 * after it: the Node suite spends much of its time waiting on PostgreSQL, child servers and
 * Chromium, and the two others fill those waits (on 2 cores, the whole run is about a minute and
 * a half shorter than one after the other). The Node suite prints as it runs; the others' output
 * is held and printed after it, each under its name. Exits 1 when any of the three fails.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

interface Outcome {
  readonly name: string
  readonly code: number
  readonly output: string
}

/** Runs `command`; its output is held (returned) unless `shown`. */
const run = (name: string, command: string, args: ReadonlyArray<string>, shown: boolean, env: Record<string, string> = {}): Promise<Outcome> =>
  new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: shown ? "inherit" : ["ignore", "pipe", "pipe"] })
    const chunks: Array<Buffer> = []
    child.stdout?.on("data", (chunk: Buffer) => chunks.push(chunk))
    child.stderr?.on("data", (chunk: Buffer) => chunks.push(chunk))
    child.on("error", (err) => resolve({ name, code: 1, output: `${name} could not start: ${err.message}\n` }))
    child.on("close", (code) => resolve({ name, code: code ?? 1, output: Buffer.concat(chunks).toString("utf8") }))
  })

const node = process.execPath
// The Deno run transforms the same files as the Node suite: its module cache is its own, so the
// two never write one file at once.
const denoCache = mkdtempSync(join(tmpdir(), "cs-deno-vitest-"))
const beside = [
  run("typecheck", "npm", ["run", "--silent", "typecheck"], false),
  run("core on Deno", node, [join(root, "scripts", "deno-core-tests.ts")], false, { CS_VITEST_CACHE: denoCache }),
]
const suite = await run("Node suite", node, [join(root, "node_modules", "vitest", "vitest.mjs"), "run"], true)
const outcomes = [suite, ...(await Promise.all(beside))]
rmSync(denoCache, { recursive: true, force: true })
for (const o of outcomes.slice(1)) {
  console.log(`\n── ${o.name} ${"─".repeat(Math.max(0, 60 - o.name.length))}`)
  process.stdout.write(o.output)
}
console.log("")
for (const o of outcomes) console.log(`${o.name}: ${o.code === 0 ? "passed" : `FAILED (exit ${o.code})`}`)
process.exit(outcomes.every((o) => o.code === 0) ? 0 : 1)
