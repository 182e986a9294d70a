/**
 * `npm run mutation`: Stryker over the core's rules, group by group (mutation/core.config.mjs:
 * html, policy, usecases, each against its own core tests); `npm run mutation -- usecases` runs one
 * group, `npm run mutation -- adapters` the short run over the adapters' rule-bearing files
 * (mutation/adapters.config.mjs). Other arguments go to Stryker (`-- usecases --concurrency 1`).
 * Ends with a score per file as a Markdown table, the form docs/testing.md keeps. Not part of `npm test`.
 */
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync, rmSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const coreGroups = ["html", "policy", "usecases"]
const args = process.argv.slice(2)
const named: Array<string> = []
while (args[0] !== undefined && (coreGroups.includes(args[0]) || args[0] === "adapters" || args[0] === "core")) named.push(args.shift()!)
const runs = (named.length === 0 ? ["core"] : named).flatMap((n) => (n === "core" ? coreGroups : [n]))
const stryker = join(root, "node_modules", "@stryker-mutator", "core", "bin", "stryker.js")

const reports: Array<string> = []
for (const run of runs) {
  const adapters = run === "adapters"
  const report = join(root, "mutation", "reports", adapters ? "adapters.json" : `core-${run}.json`)
  rmSync(report, { force: true })
  console.log(`\n== mutation run: ${run}\n`)
  const config = join("mutation", adapters ? "adapters.config.mjs" : "core.config.mjs")
  const result = spawnSync(process.execPath, [stryker, "run", config, ...args], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, ...(adapters ? {} : { MUTATION_GROUP: run }) },
  })
  if (result.status !== 0 || !existsSync(report)) process.exit(result.status ?? 1)
  reports.push(report)
}

interface Mutant {
  readonly status: string
}
const detected = new Set(["Killed", "Timeout"])
const counted = new Set(["Killed", "Timeout", "Survived", "NoCoverage"])
const percent = (part: number, whole: number) => (whole === 0 ? "n/a" : ((100 * part) / whole).toFixed(1))
const rows: Array<string> = []
const all = { detected: 0, valid: 0, covered: 0 }
for (const report of reports) {
  const files = (JSON.parse(readFileSync(report, "utf8")) as { files: Record<string, { mutants: ReadonlyArray<Mutant> }> }).files
  for (const [name, { mutants }] of Object.entries(files).sort(([a], [b]) => a.localeCompare(b))) {
    const valid = mutants.filter((m) => counted.has(m.status)).length
    const covered = mutants.filter((m) => counted.has(m.status) && m.status !== "NoCoverage").length
    const found = mutants.filter((m) => detected.has(m.status)).length
    const survived = mutants.filter((m) => m.status === "Survived").length
    all.detected += found
    all.valid += valid
    all.covered += covered
    rows.push(`| ${name} | ${percent(found, valid)} (${percent(found, covered)}) | ${found} | ${survived} | ${valid - covered} |`)
  }
}
console.log("\nMutation score per file: detected (killed or timed out) of all valid mutants (of those covered)\n")
console.log("| file | score % | detected | survived | no coverage |\n|---|---|---|---|---|")
for (const row of rows) console.log(row)
console.log(`| all | ${percent(all.detected, all.valid)} (${percent(all.detected, all.covered)}) | ${all.detected} | | |`)
