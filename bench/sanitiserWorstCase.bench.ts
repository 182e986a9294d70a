/**
 * The sanitiser's worst cases, in process and through the server: each adversarial 1 MiB body
 * next to the same-run baselines (a ~20 KB article, 1 MiB of such articles), then the worst one
 * sent to `PUT /articles/{id}?dry_run=true` while `/healthz` is polled, one request after the other.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { MAX_PARSED_NODES } from "../core/src/html/index.ts"
import { analyzeHtml, NOT_SMALL } from "../core/src/html/sanitizeArticleHtml.ts"
import { SMALL_BODY } from "../adapters/platform/src/workerHtmlAnalyzer.ts"
import { startServer } from "../apps/server/server.ts"
import { buildArticle } from "./editPolicy.bench.ts"

const MiB = 1024 * 1024
const fill = (unit: string, prefix = ""): string => prefix + unit.repeat(Math.floor((MiB - prefix.length) / unit.length))
const distinct = (n: number, tag: string): string => Array.from({ length: n }, (_, i) => `<${tag} id=f${i}>`).join("")

/** Every case, by name: the body and whether it is a baseline. */
const cases = (): Array<readonly [string, string]> => {
  const article = buildArticle()
  return [
    ["baseline: one ~20 KB article", article],
    ["baseline: 1 MiB of such articles", article.repeat(Math.floor(MiB / article.length))],
    ["<p><b><i><u> x 80 000 (the review's body, 1 MiB)", fill("<p><b><i><u>")],
    ["<p><b><i><u> just under the parse budget", "<p><b><i><u>".repeat(Math.floor(MAX_PARSED_NODES / 12) - 10)],
    ["200 distinct <b id> left open, then <p>x to 1 MiB", fill("<p>x", `<p>${distinct(200, "b")}`)],
    ["36 formatting tags left open, then <p>x to 1 MiB", fill("<p>x", "<p>" + "<b><i><u><s><em><strong><small><big><tt><font><nobr><code>".repeat(3))],
    ["<br> up to the parse budget", "<br>".repeat(MAX_PARSED_NODES - 100)],
    ["<div> x 200 000 (too deep)", fill("<div>")],
    ["<wbr> to 1 MiB (all dropped)", fill("<wbr>")],
  ]
}

const timeOnce = (body: string): number => {
  const started = performance.now()
  analyzeHtml(body)
  return performance.now() - started
}

const outcome = (body: string): string => {
  const r = analyzeHtml(body)
  return "_tag" in r ? `${r._tag}` : `ok, ${(r.html.length / 1024).toFixed(0)} KB stored`
}

/** In process: each case's best of `rounds`, the cases interleaved so machine load skews them alike. */
const inProcess = (rounds = 3): void => {
  const all = cases()
  const best = all.map(() => Number.POSITIVE_INFINITY)
  for (let round = 0; round < rounds; round++) all.forEach(([, body], i) => (best[i] = Math.min(best[i]!, timeOnce(body))))
  const base = best[1]!
  console.log(`sanitiser, in process (best of ${rounds}; parse budget ${MAX_PARSED_NODES} elements and attributes):`)
  all.forEach(([name, body], i) =>
    console.log(
      `  ${name.padEnd(52)} ${(body.length / 1024).toFixed(0).padStart(5)} KB ${best[i]!.toFixed(0).padStart(6)} ms  ${(best[i]! / base).toFixed(2)}× 1 MiB baseline  ${outcome(body)}`,
    ),
  )
}

const quantile = (values: ReadonlyArray<number>, q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
}

/** Through the server: one edit (dry run) while `/healthz` is asked one request after the other. */
const throughServer = async (): Promise<void> => {
  const dataDir = await mkdtemp(join(tmpdir(), "bench-worst-"))
  const app = await startServer({
    env: { PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: "1000000", DAILY_EDIT_LIMIT: "1000000" },
    storage: "memory",
    quiet: true,
  })
  try {
    const key = app.demo!.apiKey
    const edit = async (body: string) => {
      const started = performance.now()
      const res = await fetch(`${app.url}/api/v1/articles/art_demo_01?dry_run=true`, {
        method: "PUT",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ body }),
      })
      await res.arrayBuffer()
      return { status: res.status, ms: performance.now() - started }
    }
    const health = async () => {
      const started = performance.now()
      await (await fetch(`${app.url}/healthz`)).arrayBuffer()
      return performance.now() - started
    }
    for (let i = 0; i < 20; i++) await health()
    const idle: Array<number> = []
    for (let i = 0; i < 50; i++) idle.push(await health())
    const all = cases()
    console.log(`through the server (memory storage; /healthz asked one after the other while each edit runs):`)
    console.log(`  /healthz alone: p50 ${quantile(idle, 0.5).toFixed(1)} ms, max ${Math.max(...idle).toFixed(1)} ms`)
    // The baselines keep the article's protected links, so that they are answered 200 like a real edit.
    const current = ((await (await fetch(`${app.url}/api/v1/articles/art_demo_01`, { headers: { authorization: `Bearer ${key}` } })).json()) as { body: string }).body
    const keep = (body: string) => current + body.replaceAll(' data-service-protected="backlink"', "")
    await edit(current) // the worker pool starts
    const picked = [
      [all[0]![0], keep(all[0]![1])],
      [all[1]![0], keep(all[1]![1])],
      all[2]!,
      all[3]!,
      all[4]!,
      [all[6]![0], keep(all[6]![1])],
    ] as const
    for (const [name, body] of picked) {
      const during: Array<number> = []
      let done = false
      const running = edit(body).finally(() => (done = true))
      while (!done) during.push(await health())
      const { status, ms } = await running
      console.log(
        `  ${name.padEnd(52)} ${status} in ${ms.toFixed(0).padStart(5)} ms; /healthz meanwhile: ${during.length} answered, p50 ${quantile(during, 0.5).toFixed(1)} ms, max ${Math.max(...during).toFixed(1)} ms`,
      )
    }
  } finally {
    await app.close()
    await rm(dataDir, { recursive: true, force: true })
  }
}

/**
 * Small bodies, sanitised in the calling thread when within `SMALL_BODY`: the worst markup per
 * character that fits those bounds, each case's best of `rounds` (what a call costs the event loop
 * at most, NOT_SMALL included: a body past the bounds costs that much before it goes to the pool).
 */
export const smallBodies = (rounds = 15): void => {
  const { chars, nodes } = SMALL_BODY
  const upTo = (unit: (i: number) => string, prefix = "", suffix = ""): string => {
    let html = prefix
    for (let i = 0; html.length + unit(i).length + suffix.length <= chars; i++) html += unit(i)
    return html + suffix
  }
  const formatting = "<b><i><u><s><em><strong><small><big><tt><font><nobr><code>"
  const all: Array<readonly [string, string]> = [
    ["baseline: a ~20 KB article, whole (at most the bound)", buildArticle().slice(0, chars)],
    ["text", upTo(() => "word ")],
    ["<br> to the character bound", upTo(() => "<br>")],
    ["<p>x to the character bound", upTo(() => "<p>x")],
    ["<p><b><i><u> to the character bound", upTo(() => "<p><b><i><u>")],
    ["36 formatting tags left open, then <p>x", upTo(() => "<p>x", `<p>${formatting.repeat(3)}`)],
    ["one long attribute reopened in each <p>", upTo(() => "<p>x", `<p><b title="${"t".repeat(Math.floor(chars / 2))}">`)],
    ["distinct attributes on one tag", upTo((i) => ` a${i}`, "<p", ">")],
    ["&amp; to the character bound", upTo(() => "&amp;")],
    ["<td> to the character bound", upTo(() => "<td>", "<table><tr>")],
  ]
  console.log(`small bodies, in the calling thread (at most ${chars} characters, later rounds twice that, ${nodes} elements and attributes a parse; best of ${rounds}):`)
  for (const [name, body] of all) {
    let best = Number.POSITIVE_INFINITY
    let answer = ""
    for (let round = 0; round < rounds; round++) {
      const started = performance.now()
      const r = analyzeHtml(body, { within: SMALL_BODY })
      best = Math.min(best, performance.now() - started)
      answer = r === NOT_SMALL ? "not small: to the pool" : "_tag" in r ? r._tag : "inline"
    }
    console.log(`  ${name.padEnd(52)} ${String(body.length).padStart(5)} chars ${best.toFixed(2).padStart(6)} ms  ${answer}`)
  }
}

/** Runs every part. */
export async function run(): Promise<void> {
  smallBodies()
  inProcess()
  await throughServer()
}

if ((import.meta as ImportMeta & { main?: boolean }).main) await run()
