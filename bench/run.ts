/**
 * `npm run bench`: runs every `bench/*.bench.ts` in turn. Each prints its own figures next to the
 * same-run baseline it is compared against. Not a test: nothing here asserts a time. Benches named
 * `*.slow.bench.ts` (minutes of fixture building) run only when named: `npm run bench -- scale`.
 */
import { readdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const only = process.argv.slice(2)
const files = readdirSync(here)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => (only.length === 0 ? !f.endsWith(".slow.bench.ts") : only.some((o) => f.includes(o))))
  .sort()
for (const file of files) {
  console.log(`\n=== ${file}`)
  const mod = (await import(pathToFileURL(join(here, file)).href)) as { run?: () => Promise<void> }
  if (typeof mod.run !== "function") throw new Error(`${file} exports no run()`)
  await mod.run()
}
