/**
 * The repository documents itself: every relative link of its Markdown documents (the README,
 * the core's and the adapters' READMEs, docs/*.md) names a file inside the repository that
 * exists, and every `#anchor` a heading of that file, as GitHub makes heading anchors.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, normalize, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

const documents = (): Array<string> => [
  "README.md",
  "core/README.md",
  ...readdirSync(join(root, "adapters")).map((a) => `adapters/${a}/README.md`).filter((p) => existsSync(join(root, p))),
  ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`),
]

/** The text outside fenced code blocks, line by line. */
const proseLines = (text: string): Array<string> => {
  const lines: Array<string> = []
  let fenced = false
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced
    else if (!fenced) lines.push(line)
  }
  return lines
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as `-`, repeats numbered. */
const headingAnchors = (markdown: string): Set<string> => {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of proseLines(markdown)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (m === null) continue
    const text = m[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/<[^>]+>/g, "")
    const slug = text.trim().toLowerCase().replace(/[^\p{L}\p{N}\p{M}_\- ]/gu, "").replace(/ /g, "-")
    const n = seen.get(slug)
    anchors.add(n === undefined ? slug : `${slug}-${n + 1}`)
    seen.set(slug, n === undefined ? 0 : n + 1)
  }
  return anchors
}

/** Every `[text](target)` of the prose that is not a URL with a scheme. */
const relativeLinks = (markdown: string): Array<string> =>
  proseLines(markdown)
    .join("\n")
    .replace(/`[^`\n]*`/g, "")
    .match(/\]\([^)\s]+(?:\s+"[^"]*")?\)/g)
    ?.map((l) => l.slice(2, -1).split(/\s+/)[0]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target)) ?? []

describe("the repository's Markdown documents", () => {
  it("should compute GitHub's anchors, numbering repeated headings", () => {
    expect([...headingAnchors("# A `b` c!\n## 5. Retry safely: `Idempotency-Key`\n## Tests\n```\n# not a heading\n```\n## Tests\n")]).toEqual([
      "a-b-c",
      "5-retry-safely-idempotency-key",
      "tests",
      "tests-1",
    ])
  })

  it("should link only to files inside the repository that exist, and to headings they have", () => {
    const broken: Array<string> = []
    for (const doc of documents()) {
      for (const link of relativeLinks(readFileSync(join(root, doc), "utf8"))) {
        const [path, anchor] = link.split("#", 2) as [string, string | undefined]
        const target = path === "" ? doc : normalize(join(dirname(doc), decodeURIComponent(path)))
        if (target.startsWith("..") || relative(root, join(root, target)).startsWith("..")) {
          broken.push(`${doc}: ${link} leaves the repository`)
        } else if (!existsSync(join(root, target))) {
          broken.push(`${doc}: ${link} names no file`)
        } else if (anchor !== undefined && anchor !== "" && target.endsWith(".md") && !headingAnchors(readFileSync(join(root, target), "utf8")).has(anchor)) {
          broken.push(`${doc}: ${link} names no heading of ${target}`)
        }
      }
    }
    expect(broken).toEqual([])
  })
})
