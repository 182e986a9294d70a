/**
 * `npm run mutation`: Stryker over the core's rules (mutation/core.config.mjs), or with
 * `npm run mutation -- adapters` over the adapters' rule-bearing files (mutation/adapters.config.mjs).
 * Other arguments go to Stryker (`npm run mutation -- --mutate core/src/usecases/guards.ts`).
 * Ends with a score per file as a Markdown table, the form docs/testing.md keeps. Not part of `npm test`.
 */
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const args = process.argv.slice(2)
const which = args[0] === "adapters" || args[0] === "core" ? args.shift()! : "core"
const report = join(root, "mutation", "reports", `${which}.json`)
const stryker = join(root, "node_modules", "@stryker-mutator", "core", "bin", "stryker.js")
const run = spawnSync(process.execPath, [stryker, "run", join("mutation", `${which}.config.mjs`), ...args], { cwd: root, stdio: "inherit" })
if (run.status !== 0 || !existsSync(report)) process.exit(run.status ?? 1)

interface Mutant {
  readonly status: string
}
const files = (JSON.parse(readFileSync(report, "utf8")) as { files: Record<string, { mutants: ReadonlyArray<Mutant> }> }).files
const detected = new Set(["Killed", "Timeout"])
const counted = new Set(["Killed", "Timeout", "Survived", "NoCoverage"])
const percent = (part: number, whole: number) => (whole === 0 ? "n/a" : ((100 * part) / whole).toFixed(1))
const rows: Array<string> = []
let all = { detected: 0, valid: 0, covered: 0 }
for (const [name, { mutants }] of Object.entries(files).sort(([a], [b]) => a.localeCompare(b))) {
  const valid = mutants.filter((m) => counted.has(m.status)).length
  const covered = mutants.filter((m) => counted.has(m.status) && m.status !== "NoCoverage").length
  const found = mutants.filter((m) => detected.has(m.status)).length
  const survived = mutants.filter((m) => m.status === "Survived").length
  const uncovered = valid - covered
  all = { detected: all.detected + found, valid: all.valid + valid, covered: all.covered + covered }
  rows.push(`| ${name} | ${percent(found, valid)} (${percent(found, covered)}) | ${found} | ${survived} | ${uncovered} |`)
}
console.log(`\nMutation score per file (${which}): detected of all valid mutants (of covered ones)\n`)
console.log("| file | score % | killed | survived | no coverage |\n|---|---|---|---|---|")
for (const row of rows) console.log(row)
console.log(`| all | ${percent(all.detected, all.valid)} (${percent(all.detected, all.covered)}) | ${all.detected} | | |`)
