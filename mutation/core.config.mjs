// @ts-check
/**
 * Stryker over the core's rules (`npm run mutation`): the HTML policy's limits and protected-link
 * check, paging, text edits, limits and the edit, PATCH and restore use cases, each group of files
 * against the core's own tests of that group only (mutation/vitest.config.ts), so a run stays in
 * minutes. `scripts/mutation.ts` runs the groups one after another (MUTATION_GROUP names one).
 * Not part of `npm test`. The latest scores, and why each survivor left is harmless, are in
 * docs/testing.md.
 */

/** Each group: the files mutated and the core test files that hold their rules. */
export const groups = {
  html: {
    mutate: [
      "core/src/html/compareProtectedBlocks.ts",
      "core/src/html/protectedBlock.ts",
      "core/src/html/extractProtectedBlocks.ts",
      "core/src/html/sanitizeArticleHtml.ts",
      "core/src/html/parseHtmlFragment.ts",
    ],
    tests: ["core/test/html/{sanitizeArticleHtml,sanitizeReport,protectedBlocks,protectedBlock,limits,surface,analyzeSmallArticleHtml,auditRules}.test.ts"],
  },
  policy: {
    mutate: ["core/src/policy/pagination.ts", "core/src/policy/textEdits.ts"],
    tests: ["core/test/policy/{pagination,textEdits}.test.ts"],
  },
  usecases: {
    mutate: [
      "core/src/usecases/updateArticle.ts",
      "core/src/usecases/editArticle.ts",
      "core/src/usecases/restoreRevision.ts",
      "core/src/usecases/guards.ts",
      "core/src/usecases/editContext.ts",
      "core/src/usecases/checkRequestLimit.ts",
    ],
    tests: ["core/test/usecases/*.test.ts"],
  },
}

const name = process.env["MUTATION_GROUP"] ?? "html"
const group = groups[/** @type {keyof typeof groups} */ (name)]
if (group === undefined) throw new Error(`MUTATION_GROUP must be one of ${Object.keys(groups).join(", ")}`)
// Read by mutation/vitest.config.ts in Stryker's test runner processes, which inherit it.
process.env["MUTATION_TESTS"] = JSON.stringify(group.tests)

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  testRunner: "vitest",
  plugins: ["@stryker-mutator/vitest-runner"],
  vitest: { configFile: "mutation/vitest.config.ts", related: false },
  mutate: group.mutate,
  coverageAnalysis: "perTest",
  concurrency: 2,
  reporters: ["clear-text", "progress-append-only", "json"],
  jsonReporter: { fileName: `mutation/reports/core-${name}.json` },
  clearTextReporter: { allowColor: false, logTests: false, reportMutants: true, reportScoreTable: true },
  tempDirName: ".stryker-tmp",
  ignorePatterns: ["data", "test-artifacts", "mutation/reports", "bench", "apps/admin/data"],
  cleanTempDir: true,
}
