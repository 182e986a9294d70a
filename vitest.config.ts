import { tmpdir } from "node:os"
import { join } from "node:path"
import { defineConfig } from "vitest/config"

// Node's compile cache (V8 code and stripped TypeScript, keyed by each file's contents) for the
// test workers and every process the tests start (servers, the admin command line): a child
// that loads the service's modules starts in about two thirds of the time. Set before any
// worker or child starts, so all of them inherit it; a cache that is missing is simply made.
process.env["NODE_COMPILE_CACHE"] ??= join(tmpdir(), "content-site-node-compile-cache")

export default defineConfig({
  // Read by core/test/runtime.test.ts to prove which runtime executes the core tests.
  define: { __CS_EXPECT_RUNTIME__: JSON.stringify(process.env["CS_EXPECT_RUNTIME"] ?? "node") },
  test: {
    exclude: ["**/node_modules/**"],
    projects: [
      // The core's and the adapters' own files share one module graph per worker (no isolation):
      // none keeps state across files that a test relies on (the Deno run already runs the
      // core's so, scripts/deno-core-tests.ts). Run alone on 2 cores, the core's files took 17 s
      // instead of 47 s and the adapters' 64 s instead of 88 s (re-importing effect, unified,
      // MikroORM for each file). The whole suite's time did not move with it (10 min 20 s both
      // ways on 2026-11-27: it is bound by the CPU of the browser, server and admin files).
      { extends: true, test: { name: "unit", include: ["core/test/**/*.test.ts", "adapters/*/test/**/*.test.ts"], isolate: false } },
      // The HTTP files (REST, MCP, the server's configuration) start servers in the worker and
      // close them: they too share one module graph per worker, instead of importing effect,
      // Koa, MikroORM and the MCP SDK again for each of their 40-odd files. (All the files below
      // run so took 546 s of CPU, user + system, against 679 s isolated; 2026-11-27, 2 cores.)
      { extends: true, test: { name: "http", include: ["apps/server/test/**/*.test.ts", "test/e2e/**/*.test.ts", "test/mcp/**/*.test.ts"], isolate: false } },
      // The embedded database's, the browser's and the admin command's files stay isolated: run
      // after many other files in one worker, PGlite's opens slowed about fourfold and one lock
      // case ran out of its time.
      {
        extends: true,
        test: {
          name: "service",
          include: ["apps/*/test/**/*.test.ts", "test/**/*.test.ts"],
          exclude: ["**/node_modules/**", "apps/server/test/**", "test/e2e/**", "test/mcp/**"],
        },
      },
    ],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest's default on a 2-core machine is one worker, which leaves both cores idle while a
    // test waits for PostgreSQL, a child process or Chromium: two files at once cut the suite
    // from about 460 s to 365 s here.
    maxWorkers: 2,
    // expect.poll waits for an observable effect (a browser repaint, a row landing); on a loaded
    // 2-core machine one second is not enough for that to happen. A wait, never a speed check.
    expect: { poll: { timeout: 10_000 } },
    globalSetup: ["test/support/globalSetup.ts"],
  },
})
