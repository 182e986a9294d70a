/**
 * Agent-grade editing: a one-sentence change to a 20 KB article through `PATCH` (find and
 * replace) against the same change through `PUT` (the whole body), one request at a time, in
 * the same run on the same server, alternating rounds (goal: PATCH <= 1.2x PUT); then the bytes
 * an agent sends and receives for that change over MCP with `edit_article` against
 * `update_article` (goal: <= 10 %), with the full answer and with `response: "minimal"` (the
 * article without its body). The server runs on PostgreSQL when reachable.
 * Nothing here asserts a time.
 */
import { connect, ScriptedOAuthProvider } from "../test/mcp/support.ts"
import { ROUNDS, startBenchServer } from "./support.ts"

const PER_ROUND = Number(process.env.BENCH_EDITS ?? 100)

/** A body of about 20 KB: the article's own body (its protected links stay), prose, and one sentence that the edits change. */
const articleBody = (own: string, note: string): string => {
  const paragraphs = Array.from(
    { length: 100 },
    (_, i) =>
      `<p>Paragraph ${i + 1}: gardens need patience, good soil and water at the right time; this one explains how the beds are laid out and why the paths run the way they do, season after season.</p>`,
  )
  paragraphs.splice(50, 0, `<p>Revision note: ${note}.</p>`)
  return `${own}\n${paragraphs.join("\n")}`
}

const median = (values: Array<number>): number => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!

export async function run(): Promise<void> {
  const bench = await startBenchServer("cs_bench_agent")
  const app = bench.app
  try {
    if (app.demo === null) throw new Error("the demo data was not seeded")
    const auth = { authorization: `Bearer ${app.demo.apiKey}`, "content-type": "application/json" }
    const sites = (await (await fetch(`${app.url}/api/v1/sites`, { headers: auth })).json()) as { data: Array<{ id: string }> }
    const list = (await (await fetch(`${app.url}/api/v1/sites/${sites.data[0]?.id}/articles?per_page=4`, { headers: auth })).json()) as {
      data: Array<{ id: string }>
    }
    const [patchId, putId, mcpId] = list.data.map((a) => a.id)
    if (patchId === undefined || putId === undefined || mcpId === undefined) throw new Error("the demo site has too few articles")
    const own = new Map<string, string>()
    for (const id of [patchId, putId, mcpId]) {
      own.set(id, ((await (await fetch(`${app.url}/api/v1/articles/${id}`, { headers: auth })).json()) as { body: string }).body)
      const res = await fetch(`${app.url}/api/v1/articles/${id}`, { method: "PUT", headers: auth, body: JSON.stringify({ body: articleBody(own.get(id)!, "v0") }) })
      if (res.status !== 200) throw new Error(`setting up ${id}: ${res.status}`)
    }
    const bodyBytes = Buffer.byteLength(articleBody(own.get(putId)!, "v0"))

    // Each request makes a real change: the note goes v0 -> v1 -> v2 ... on each article.
    let patchVersion = 0
    let putVersion = 0
    const patchOnce = async () => {
      const res = await fetch(`${app.url}/api/v1/articles/${patchId}`, {
        method: "PATCH",
        headers: auth,
        body: JSON.stringify({ edits: [{ find: `Revision note: v${patchVersion}.`, replace: `Revision note: v${patchVersion + 1}.` }] }),
      })
      await res.arrayBuffer()
      if (res.status !== 200) throw new Error(`PATCH: ${res.status}`)
      patchVersion++
    }
    const putOnce = async () => {
      const res = await fetch(`${app.url}/api/v1/articles/${putId}`, {
        method: "PUT",
        headers: auth,
        body: JSON.stringify({ body: articleBody(own.get(putId)!, `v${putVersion + 1}`) }),
      })
      await res.arrayBuffer()
      if (res.status !== 200) throw new Error(`PUT: ${res.status}`)
      putVersion++
    }
    const timeEach = async (once: () => Promise<void>, n: number) => {
      const started = performance.now()
      for (let i = 0; i < n; i++) await once()
      return (performance.now() - started) / n
    }
    for (let i = 0; i < 20; i++) {
      await patchOnce()
      await putOnce()
    }
    const patchMs: Array<number> = []
    const putMs: Array<number> = []
    for (let round = 0; round < ROUNDS; round++) {
      patchMs.push(await timeEach(patchOnce, PER_ROUND))
      putMs.push(await timeEach(putOnce, PER_ROUND))
    }
    const patch = median(patchMs)
    const put = median(putMs)
    console.log(`database: ${bench.database}; a one-sentence change to a ${(bodyBytes / 1024).toFixed(1)} KB article, one request at a time (${ROUNDS} rounds of ${PER_ROUND}, median round):`)
    console.log(`  PUT   (whole body, baseline) ${put.toFixed(2).padStart(7)} ms per change`)
    console.log(`  PATCH (find and replace)     ${patch.toFixed(2).padStart(7)} ms per change   = ${(patch / put).toFixed(2)}x PUT (goal <= 1.2x)`)

    // MCP: the bytes of one tools/call each way, as an agent's client sends and receives them.
    const provider = new ScriptedOAuthProvider({ email: app.demo.email, password: app.demo.password, decision: "allow" }, "Bench Agent")
    const client = await connect(`${app.url}/mcp`, provider)
    await client?.close()
    const token = provider.savedTokens?.access_token
    if (token === undefined) throw new Error("the OAuth flow did not complete")
    const mcpHeaders = { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" }
    const toolCall = async (name: string, args: Record<string, unknown>) => {
      const sent = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } })
      const res = await fetch(`${app.url}/mcp`, { method: "POST", headers: mcpHeaders, body: sent })
      const received = await res.text()
      if (res.status !== 200 || received.includes('"isError":true')) throw new Error(`${name}: ${res.status} ${received.slice(0, 200)}`)
      // The figures count only answers of the shape asked for: the full article, or it without its body.
      const article = (JSON.parse(received) as { result: { structuredContent: { article: { body?: unknown } } } }).result.structuredContent.article
      if ((typeof article.body === "string") !== (args["response"] !== "minimal")) throw new Error(`${name}: the answer's article is not of the shape asked for`)
      return { sent: Buffer.byteLength(sent), received: Buffer.byteLength(received) }
    }
    const update = await toolCall("update_article", { article_id: mcpId, body: articleBody(own.get(mcpId)!, "v1") })
    const edit = await toolCall("edit_article", { article_id: mcpId, edits: [{ find: "Revision note: v1.", replace: "Revision note: v2." }] })
    const minimal = await toolCall("edit_article", { article_id: mcpId, edits: [{ find: "Revision note: v2.", replace: "Revision note: v3." }], response: "minimal" })
    const total = (x: { sent: number; received: number }) => x.sent + x.received
    const percent = (x: { sent: number; received: number }) => (100 * total(x)) / total(update)
    const line = (name: string, x: { sent: number; received: number }, goal: string) =>
      `  ${name.padEnd(36)} sent ${String(x.sent).padStart(6)}  received ${String(x.received).padStart(6)}  total ${String(total(x)).padStart(6)}   = ${percent(x).toFixed(1).padStart(5)} %${goal}`
    console.log("the same one-sentence change over MCP, bytes of one tools/call (request + response):")
    console.log(`  ${"update_article (baseline)".padEnd(36)} sent ${String(update.sent).padStart(6)}  received ${String(update.received).padStart(6)}  total ${String(total(update)).padStart(6)}`)
    console.log(line("edit_article", edit, " (the full article comes back)"))
    console.log(line('edit_article, response: "minimal"', minimal, ` (goal <= 10 %: ${percent(minimal) <= 10 ? "met" : "not met"})`))
  } finally {
    await bench.close()
  }
}
