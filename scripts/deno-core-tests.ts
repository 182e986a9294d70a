/**
 * Runs the core's test suite under Deno (the `deno` npm package), proving the core runs unchanged
 * outside Node. core/test/runtime.test.ts fails unless the tests really execute in Deno.
 */
import { spawnSync } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const deno = join(root, "node_modules", ".bin", "deno")
const result = spawnSync(deno, ["run", "-A", join(root, "node_modules", "vitest", "vitest.mjs"), "run", "core/test"], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, CS_EXPECT_RUNTIME: "deno" },
})
if (result.error) throw result.error
process.exit(result.status ?? 1)
