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
    globalSetup: ["test/support/globalSetup.ts"],
  },
})
