/**
 * Runs the core's test suite under Deno, proving the core runs unchanged outside Node.
 * core/test/runtime.test.ts fails unless the tests really execute in Deno.
 *
 * Deno comes from the npm package `@deno/linux-x64-glibc` (an optional dependency: the `deno`
 * wrapper package lists builds for other platforms that this project's registry does not serve,
 * which breaks `npm ci`). Elsewhere a `deno` on PATH is used.
 */
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const bundled = join(root, "node_modules", "@deno", "linux-x64-glibc", "deno")
const deno = existsSync(bundled) ? bundled : "deno"
// Beside the Node suite (`npm test`), a module cache of its own and no results cache.
const cache = process.env["CS_VITEST_CACHE"]
const cacheArgs = cache !== undefined ? ["--no-cache", "--fsModuleCachePath", cache] : []
const result = spawnSync(deno, ["run", "-A", join(root, "node_modules", "vitest", "vitest.mjs"), "run", "--no-isolate", ...cacheArgs, "core/test"], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, CS_EXPECT_RUNTIME: "deno" },
})
if (result.error) {
  console.error(`Could not run Deno (${result.error.message}): on this platform put deno 2.x on PATH.`)
  process.exit(1)
}
process.exit(result.status ?? 1)
