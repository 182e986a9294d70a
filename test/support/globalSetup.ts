/**
 * Runs once before the test files: unpacks the npm-installed Chromium, so that browser test files
 * started side by side never unpack it at the same moment.
 */
import { chromiumPath } from "./browser.ts"

export default async function setup(): Promise<void> {
  await chromiumPath()
}
