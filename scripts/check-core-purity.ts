/**
 * Fails when the core imports anything but `effect`, unified/rehype/hast packages and its own
 * files: the core must run unchanged under Deno and in any web-standard runtime. (Node globals are
 * kept out by type-checking core/ with no Node types.) One package beyond those names: `parse5`,
 * the HTML parser that rehype-parse and hast-util-from-html run; the core calls it directly to
 * parse without source positions (see core/src/html/parseHtmlFragment.ts).
 *
 * Small pure-JS libraries that run under Deno, each with its reason:
 * - `diff` (jsdiff): the unified-diff writer (`formatPatch`) of revision diffs
 *   (core/src/html/diffBodies.ts); no dependencies, no Node APIs, ES modules. The alignment is
 *   the core's own (core/src/html/diffBudget.ts), so that its work is counted against a budget.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const allowed = [/^\.\.?\//, /^effect(\/|$)/, /^unified$/, /^rehype(-[a-z-]+)?$/, /^hast(-util-[a-z0-9-]+)?$/, /^hastscript$/, /^property-information$/, /^(hast|unist)$/, /^parse5$/, /^diff$/]
const walk = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? walk(path) : path.endsWith(".ts") ? [path] : []
  })
const offences: Array<string> = []
for (const file of walk(join(root, "core", "src"))) {
  const text = readFileSync(file, "utf8")
  for (const m of text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g)) {
    const spec = m[1]!
    if (!allowed.some((re) => re.test(spec))) offences.push(`${relative(root, file)}: imports '${spec}'`)
  }
}
const deps = Object.keys((JSON.parse(readFileSync(join(root, "core", "package.json"), "utf8")) as { dependencies?: Record<string, string> }).dependencies ?? {})
for (const dep of deps) {
  if (!allowed.some((re) => re.test(dep)) && !dep.startsWith("@types/")) offences.push(`core/package.json: depends on '${dep}'`)
}
if (offences.length > 0) {
  console.error(`The core must stay pure (effect, unified/rehype/hast, the listed pure-JS libraries and web-standard APIs only):\n${offences.join("\n")}`)
  process.exit(1)
}
console.log("core purity: ok (imports only effect, unified/rehype/hast, parse5, diff and its own files)")
