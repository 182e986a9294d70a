/**
 * Builds the article page's visual editor (`adapters/web/editor/main.ts` and the ProseMirror
 * packages it imports) into one browser file, `adapters/web/dist/editor.js`, that the server
 * serves itself under its CSP (no CDN, no eval). Run by `npm install` (postinstall), `npm start`
 * (prestart) and the tests' global setup.
 */
import { build } from "esbuild"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const web = join(root, "adapters", "web")
/** The bundle's path. */
export const EDITOR_BUNDLE = join(web, "dist", "editor.js")

/** Builds the editor bundle (about a tenth of a second); returns its path. */
export const buildEditor = async (): Promise<string> => {
  await build({
    entryPoints: [join(web, "editor", "main.ts")],
    outfile: EDITOR_BUNDLE,
    bundle: true,
    format: "iife",
    target: "es2022",
    minify: true,
    sourcemap: false,
    legalComments: "eof",
    logLevel: "warning",
  })
  return EDITOR_BUNDLE
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildEditor()
}
