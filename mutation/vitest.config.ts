import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

// The root of the tree this file sits in: the repository, or Stryker's sandbox copy of it.
const root = fileURLToPath(new URL("..", import.meta.url))
const workspace = (name: string, path: string) => ({ find: new RegExp(`^@content-site/${name}$`), replacement: `${root}${path}` })

/**
 * The core's own tests, for mutation runs (`npm run mutation`). The workspace packages resolve to
 * the files of this tree: without the aliases they resolve through node_modules to the
 * repository's copy, so the memory adapter would run the unmutated core beside the mutated one.
 */
export default defineConfig({
  root,
  define: { __CS_EXPECT_RUNTIME__: JSON.stringify("node") },
  resolve: {
    alias: [
      workspace("core", "core/src/index.ts"),
      workspace("memory", "adapters/memory/src/index.ts"),
      workspace("platform/web", "adapters/platform/src/web.ts"),
      workspace("platform", "adapters/platform/src/index.ts"),
      workspace("http", "adapters/http/src/index.ts"),
      workspace("rest", "adapters/rest/src/index.ts"),
      workspace("orm", "adapters/orm/src/index.ts"),
    ],
  },
  test: {
    // The tests of the group of files mutated (mutation/core.config.mjs sets them), else the core's.
    include: JSON.parse(process.env["MUTATION_TESTS"] ?? `["core/test/**/*.test.ts"]`) as Array<string>,
    exclude: ["**/node_modules/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
})
