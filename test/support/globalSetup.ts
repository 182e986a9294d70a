/**
 * Runs once before the test files: unpacks the npm-installed Chromium, so that browser test files
 * started side by side never unpack it at the same moment, and builds the article editor's bundle
 * from its current sources.
 */
import { buildEditor } from "../../scripts/build-editor.ts"
import { chromiumPath } from "./browser.ts"

export default async function setup(): Promise<void> {
  await Promise.all([chromiumPath(), buildEditor()])
}
