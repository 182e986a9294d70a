import { defineConfig } from "vitest/config"

export default defineConfig({
  // Read by core/test/runtime.test.ts to prove which runtime executes the core tests.
  define: { __CS_EXPECT_RUNTIME__: JSON.stringify(process.env["CS_EXPECT_RUNTIME"] ?? "node") },
  test: {
    include: ["core/test/**/*.test.ts", "adapters/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // expect.poll waits for an observable effect (a browser repaint, a row landing); on a loaded
    // 2-core machine one second is not enough for that to happen. A wait, never a speed check.
    expect: { poll: { timeout: 10_000 } },
    globalSetup: ["test/support/globalSetup.ts"],
  },
})
