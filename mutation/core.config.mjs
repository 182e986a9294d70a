// @ts-check
/**
 * Stryker over the core's rules (`npm run mutation`): the HTML policy's limits and protected-link
 * check, paging, text edits, limits and the edit, PATCH and restore use cases, against the core's
 * own tests only (mutation/vitest.config.ts), so a run stays in minutes. Not part of `npm test`.
 * The latest scores, and why each survivor left is harmless, are in docs/testing.md.
 * @type {import("@stryker-mutator/api/core").PartialStrykerOptions}
 */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "mutation/vitest.config.ts", related: false },
  mutate: [
    "core/src/html/compareProtectedBlocks.ts",
    "core/src/html/protectedBlock.ts",
    "core/src/html/extractProtectedBlocks.ts",
    "core/src/html/sanitizeArticleHtml.ts",
    "core/src/html/parseHtmlFragment.ts",
    "core/src/policy/pagination.ts",
    "core/src/policy/textEdits.ts",
    "core/src/usecases/updateArticle.ts",
    "core/src/usecases/editArticle.ts",
    "core/src/usecases/restoreRevision.ts",
    "core/src/usecases/guards.ts",
    "core/src/usecases/editContext.ts",
    "core/src/usecases/checkRequestLimit.ts",
  ],
  coverageAnalysis: "perTest",
  concurrency: 2,
  reporters: ["clear-text", "progress-append-only", "json", "html"],
  jsonReporter: { fileName: "mutation/reports/core.json" },
  htmlReporter: { fileName: "mutation/reports/core.html" },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: true, reportScoreTable: true },
  tempDirName: ".stryker-tmp",
  ignorePatterns: ["data", "test-artifacts", "mutation/reports", "bench", "apps/admin/data"],
  cleanTempDir: true,
}
