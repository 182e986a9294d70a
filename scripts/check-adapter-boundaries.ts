/**
 * Fails when an adapter imports an adapter it must not lean on. The HTTP kit
 * (`@content-site/http`) is what the HTTP adapters share; no HTTP adapter is the base of another:
 * the MCP adapter and the web pages never import the REST adapter, and the kit imports no
 * adapter at all. The in-memory adapter holds in-memory state only, so nothing of the platform
 * (system clock, random ids) is borrowed from it.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
/** Per adapter, the workspace packages it must not import. */
const forbidden: Record<string, ReadonlyArray<string>> = {
  http: ["rest", "mcp", "web", "orm", "memory", "platform", "images", "media"],
  mcp: ["rest", "web"],
  web: ["rest"],
  platform: ["memory"],

}
const walk = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? walk(path) : path.endsWith(".ts") ? [path] : []
  })
const offences: Array<string> = []
for (const [adapter, banned] of Object.entries(forbidden)) {
  for (const file of walk(join(root, "adapters", adapter, "src"))) {
    for (const m of readFileSync(file, "utf8").matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g)) {
      const spec = m[1]!
      const target = /^@content-site\/([\w-]+)/.exec(spec)?.[1] ?? /^(?:\.\.\/){2,}([\w-]+)\//.exec(spec)?.[1]
      if (target !== undefined && banned.includes(target)) offences.push(`${relative(root, file)}: imports '${spec}'`)
    }
  }
}
if (offences.length > 0) {
  console.error(`Adapter boundaries broken (the HTTP kit is @content-site/http; see docs/architecture.md):\n${offences.join("\n")}`)
  process.exit(1)
}
console.log("adapter boundaries: ok (mcp and web use the HTTP kit, not the REST adapter; the platform borrows nothing from memory)")
