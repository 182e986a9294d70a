// @ts-check
/**
 * `npm run mutation -- adapters`: a short Stryker run over the adapters' rule-bearing files that
 * have fast tests of their own: the REST pipeline (the gate: key, address and account limits,
 * RateLimit-*; idempotency keys and replays; the activity entry of every call), request parsing
 * (preconditions, preferences, strict queries, the client's address), the limit counters (memory,
 * and the leases every instance shares), the memory idempotency store and the activity journal.
 * Their own tests and the memory storage contract run (the REST pipeline in one process on the
 * memory Layers), nothing that needs PostgreSQL or a started server. No goal yet; the score is in
 * docs/testing.md. `-- adapters --mutate <file>` runs one file.
 */
process.env["MUTATION_TESTS"] = JSON.stringify([
  "adapters/rest/test/{requestParts,gate}.test.ts",
  "adapters/http/test/*.test.ts",
  "adapters/memory/test/counters.test.ts",
  "adapters/orm/test/{leases,activityJournal}.test.ts",
  "test/contract/memory.test.ts",
])

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "mutation/vitest.config.ts", related: false },
  mutate: [
    "adapters/rest/src/rest/mountRest.ts",
    "adapters/rest/src/rest/requestParts.ts",
    "adapters/http/src/query.ts",
    "adapters/http/src/clientAddress.ts",
    "adapters/memory/src/MemoryInfrastructure.ts",
    "adapters/memory/src/MemoryIdempotencyStore.ts",
    "adapters/orm/src/leases.ts",
    "adapters/orm/src/activityJournal.ts",
  ],
  coverageAnalysis: "perTest",
  concurrency: 2,
  reporters: ["clear-text", "progress-append-only", "json"],
  jsonReporter: { fileName: "mutation/reports/adapters.json" },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: true, reportScoreTable: true },
  tempDirName: ".stryker-tmp",
  ignorePatterns: ["data", "test-artifacts", "mutation/reports", "bench", "apps/admin/data"],
  cleanTempDir: true,
}
