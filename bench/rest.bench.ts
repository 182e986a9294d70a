/**
 * REST overhead under concurrent keep-alive load (autocannon as a library, in a worker thread of
 * its own), each case next to a same-run baseline:
 * - `GET /api/v1/articles/{id}` and a `per_page=100` list against a bare `node:http` server that
 *   sends the same bytes (same body, same content type);
 * - a dry-run `PUT` of a ~20 KB body against the GET.
 * The server runs on PostgreSQL (a throw-away database; `BENCH_PG_URL` or the local server) with the
 * demo data, or on the embedded database when PostgreSQL is not reachable. Goals: GET at least
 * 0.9x the contract's least work for it (below; the first goal, within 10 % of its floor, Koa +
 * read + journaled entry, lay beyond what the least work itself reaches and was restated so), the
 * list within 25 % of its own floor, a dry-run PUT's latency <= 4x a GET's under the same load;
 * aims: GET >= 0.35x bare, list >= 0.2x bare. Nothing here asserts a time.
 *
 * Floors on the way from the bare server to the service, each sending the same bytes: Koa and its
 * router alone; Koa with the article's read; Koa with the one write every call owes, its activity
 * entry (the service's journal: appended to a local file before answering, shipped to PostgreSQL in
 * background batches); Koa with the least an uncached GET does, the read and that entry; and for
 * the list, Koa with the list's read and the entry. Both reads are the service's own repository
 * calls on its runtime: the same statements, and article reads of requests handled side by side
 * share one statement as in the service (a floor reading with a statement per request is slower
 * than the service under load, so it is not a floor). Last, the contract's least work for the GET
 * (`contractFloor.ts`): the read and the entry plus only what the contract asks of every GET (the
 * key checked, the limit counted, the view encoded and serialised, the contract's headers),
 * without the service's pipeline; what it costs over the floor no implementation that makes each
 * answer when asked avoids.
 *
 * Then what operating the service costs the GET: logs + metrics, and tracing, beside off
 * (`operating.ts`).
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import Router from "@koa/router"
import Koa from "koa"
import { ArticleRepository } from "@content-site/core"
import { contractFloor } from "./contractFloor.ts"
import { operatingCosts } from "./operating.ts"
import { buildArticle } from "./editPolicy.bench.ts"
import { activityEntries, alternating, autocannon, type CannonResult, CONNECTIONS, floorJournal, fmt, ROUNDS, SECONDS, SEQUENTIAL, sequential, startBenchServer } from "./support.ts"


const bareServer = async (body: string, contentType: string): Promise<{ url: string; server: Server }> => {
  const bytes = Buffer.from(body)
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": contentType, "content-length": bytes.length })
    res.end(bytes)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }
}

/**
 * The framework's floor: Koa and @koa/router sending the same bytes, after `work` when given. With
 * nothing else, no API on Koa can beat it, so it shows how much of the gap to the bare server is
 * Koa's own; with the database work no GET can skip, it shows what that work costs.
 */
const koaFloor = async (path: string, body: string, contentType: string, work?: () => Promise<unknown>): Promise<{ url: string; server: Server }> => {
  const app = new Koa()
  const router = new Router()
  router.get(path, async (ctx) => {
    if (work !== undefined) await work()
    ctx.type = contentType
    ctx.body = body
  })
  app.use(router.routes())
  const server = createServer(app.callback())
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`, server }
}

const load = (url: string, extra: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
  autocannon({ url, connections: CONNECTIONS, duration: SECONDS, ...extra })

export async function run(): Promise<void> {
  const bench = await startBenchServer("cs_bench", process.env.BENCH_REDIS_URL !== undefined ? { REDIS_URL: process.env.BENCH_REDIS_URL } : {})
  const app = bench.app
  const bares: Array<Server> = []
  const closers: Array<() => Promise<void>> = []
  try {
    if (app.demo === null) throw new Error("the demo data was not seeded")
    const auth = { authorization: `Bearer ${app.demo.apiKey}` }
    const sites = (await (await fetch(`${app.url}/api/v1/sites`, { headers: auth })).json()) as { data: Array<{ id: string; article_count: number }> }
    const site = [...sites.data].sort((a, b) => b.article_count - a.article_count)[0]!
    const listPath = `/api/v1/sites/${site.id}/articles?per_page=100`
    const list = await fetch(`${app.url}${listPath}`, { headers: auth })
    const listBody = await list.text()
    const articleId = (JSON.parse(listBody) as { data: Array<{ id: string }> }).data[0]!.id
    const getPath = `/api/v1/articles/${articleId}`
    const got = await fetch(`${app.url}${getPath}`, { headers: auth })
    const getBody = await got.text()
    const article = JSON.parse(getBody) as { body: string }
    let body = article.body
    for (let i = 0; body.length < 20_000; i++) body += `<p>Paragraph ${i}: <strong>benchmarks</strong> keep the edit path honest, with <a href="https://example.com/p${i}">a link</a> and plain words.</p>`
    const putBody = JSON.stringify({ title: "Bench dry run", body })
    // the same size shaped like an article (long paragraphs, headings, a list, a table, 30 links;
    // editPolicy's fixture without its protected markers): 20 KB of markup this dense is usual,
    // one link and one <strong> every 120 bytes as above is not
    const articleShaped = JSON.stringify({ title: "Bench dry run", body: `${article.body}${buildArticle().replaceAll(' data-service-protected="backlink"', "")}` })

    console.log(`database: ${bench.database}${process.env.BENCH_REDIS_URL !== undefined ? " + Redis limits" : ""}; ${CONNECTIONS} keep-alive connections, ${SECONDS} s per case, median of ${ROUNDS} alternating rounds`)
    console.log(`GET article body ${getBody.length} B; list (per_page=100, ${(JSON.parse(listBody) as { data: unknown[] }).data.length} items) ${listBody.length} B; PUT body ${putBody.length} B`)

    const bareGet = await bareServer(getBody, "application/json; charset=utf-8")
    const bareList = await bareServer(listBody, "application/json; charset=utf-8")
    const floorGet = await koaFloor(getPath, getBody, "application/json; charset=utf-8")
    bares.push(bareGet.server, bareList.server, floorGet.server)
    // the database floors need PostgreSQL (the embedded database belongs to the service's process)
    const floorJournalled = await floorJournal(bench.databaseUrl)
    const floorDb = floorJournalled?.db
    const floorLog = floorJournalled?.journal
    const accountId = (await floorDb?.query<{ id: string }>("select account_id as id from sites where id = $1", [site.id]))?.rows[0]?.id
    const key = (await floorDb?.query<{ id: string; name: string }>("select id, name from api_keys where account_id = $1 and revoked_at is null order by created_at limit 1", [accountId]))?.rows[0]
    const caller = { accountId: accountId ?? null, actor: key !== undefined ? { type: "api_key" as const, id: key.id, name: key.name } : null }
    const articleEntry = { ...caller, action: "GET /api/v1/articles/{id}", siteId: site.id, articleId }
    const entry = floorLog !== undefined ? activityEntries(floorLog, articleEntry) : undefined
    const listEntry = floorLog !== undefined ? activityEntries(floorLog, { ...caller, action: "GET /api/v1/sites/{id}/articles", siteId: site.id, articleId: null }) : undefined
    // the reads are the service's own repository calls, run on its runtime: the article's (reads of
    // calls handled side by side share one statement) and the list's (a deferred join with the
    // total from the count tables, chosen to stay fast at scale)
    const readArticle = () => app.runtime.runPromise(ArticleRepository.use((articles) => articles.get(accountId!, articleId)))
    const readList = () =>
      app.runtime.runPromise(ArticleRepository.use((articles) => articles.list(accountId!, { siteId: site.id }, { limit: 100, offset: 0 })))
    const dbFloors =
      floorDb !== undefined && floorLog !== undefined && entry !== undefined
        ? {
            read: await koaFloor(getPath, getBody, "application/json; charset=utf-8", readArticle),
            log: await koaFloor(getPath, getBody, "application/json; charset=utf-8", activityEntries(floorLog, articleEntry)),
            readLog: await koaFloor(getPath, getBody, "application/json; charset=utf-8", async () => {
              await readArticle()
              await entry()
            }),
            listReadLog: await koaFloor(listPath.split("?")[0]!, listBody, "application/json; charset=utf-8", async () => {
              await readList()
              await listEntry!()
            }),
          }
        : undefined
    if (dbFloors !== undefined) bares.push(dbFloors.read.server, dbFloors.log.server, dbFloors.readLog.server, dbFloors.listReadLog.server)
    // the least the contract asks of this GET, without the service's pipeline (contractFloor.ts)
    const contract =
      floorLog !== undefined && accountId !== undefined && key !== undefined
        ? await contractFloor(app, floorLog, { accountId, key: { ...key, secret: app.demo.apiKey } }, articleId)
        : undefined
    if (contract !== undefined) {
      const same = await (await fetch(contract.getUrl, { headers: auth })).text()
      if (same !== getBody) throw new Error("the contract's floor does not answer the service's bytes")
    }
    closers.push(async () => {
      await contract?.close()
      await floorJournalled?.close()
    })

    const cases = {
      bareGet: () => load(bareGet.url),
      floorGet: () => load(floorGet.url),
      get: () => load(`${app.url}${getPath}`, { headers: auth }),
      bareList: () => load(bareList.url),
      list: () => load(`${app.url}${listPath}`, { headers: auth }),
      put: () =>
        load(`${app.url}${getPath}?dry_run=true`, {
          method: "PUT",
          headers: { ...auth, "content-type": "application/json" },
          body: putBody,
        }),
      putArticle: () =>
        load(`${app.url}${getPath}?dry_run=true`, {
          method: "PUT",
          headers: { ...auth, "content-type": "application/json" },
          body: articleShaped,
        }),
    }
    const floorCases: Record<string, () => Promise<CannonResult>> =
      dbFloors !== undefined
        ? {
            floorRead: () => load(dbFloors.read.url),
            floorLog: () => load(dbFloors.log.url),
            floorReadLog: () => load(dbFloors.readLog.url),
            floorListReadLog: () => load(`${dbFloors.listReadLog.url}?per_page=100`),
            ...(contract !== undefined ? { floorContract: () => load(contract.getUrl, { headers: auth }) } : {}),
          }
        : {}
    const results: Record<string, CannonResult | undefined> = await alternating({ ...cases, ...floorCases })
    const pick = (name: keyof typeof cases): CannonResult => results[name]!
    const [rBareGet, rFloorGet, rGet, rBareList, rList, rPut, rPutArticle] = [
      pick("bareGet"), pick("floorGet"), pick("get"), pick("bareList"), pick("list"), pick("put"), pick("putArticle"),
    ]

    // Both under the same load: GETs on all connections but one, dry-run PUTs on that one, at the
    // same time; each side's mean latency (the median round by their ratio). The mean, because
    // autocannon's percentiles are whole milliseconds and a GET's p50 is one or two of them.
    const mixedRounds: Array<{ get: CannonResult; put: CannonResult }> = []
    for (let round = 0; round < ROUNDS; round++) {
      const [get, put] = await Promise.all([
        autocannon({ url: `${app.url}${getPath}`, connections: Math.max(1, CONNECTIONS - 1), duration: SECONDS, headers: auth }),
        autocannon({
          url: `${app.url}${getPath}?dry_run=true`,
          connections: 1,
          duration: SECONDS,
          method: "PUT",
          headers: { ...auth, "content-type": "application/json" },
          body: putBody,
        }),
      ])
      mixedRounds.push({ get, put })
    }
    const mixedRatio = (r: { get: CannonResult; put: CannonResult }) => r.put.latency.average / r.get.latency.average
    const mixed = [...mixedRounds].sort((a, b) => mixedRatio(a) - mixedRatio(b))[Math.floor((mixedRounds.length - 1) / 2)]!

    const { get: seqGet, put: seqPut } = await sequential(SEQUENTIAL, {
      get: () => fetch(`${app.url}${getPath}`, { headers: auth }),
      put: () => fetch(`${app.url}${getPath}?dry_run=true`, { method: "PUT", headers: { ...auth, "content-type": "application/json" }, body: putBody }),
    })

    console.log(`bare GET article        ${fmt(rBareGet)}`)
    console.log(`Koa floor GET article   ${fmt(rFloorGet)}`)
    const ratio = (r: CannonResult) => `${(r.requests.average / rBareGet.requests.average).toFixed(2)}x bare`
    if (results.floorRead !== undefined) console.log(`Koa + article read      ${fmt(results.floorRead)}  ${ratio(results.floorRead)}`)
    if (results.floorLog !== undefined) console.log(`Koa + journaled entry   ${fmt(results.floorLog)}  ${ratio(results.floorLog)}`)
    if (results.floorReadLog !== undefined) console.log(`Koa + read + entry      ${fmt(results.floorReadLog)}  ${ratio(results.floorReadLog)}`)
    if (results.floorContract !== undefined) console.log(`contract's least work   ${fmt(results.floorContract)}  ${ratio(results.floorContract)}`)
    console.log(`REST GET article        ${fmt(rGet)}  ${ratio(rGet)}`)
    const listRatio = (r: CannonResult) => `${(r.requests.average / rBareList.requests.average).toFixed(2)}x bare`
    console.log(`bare list               ${fmt(rBareList)}`)
    if (results.floorListReadLog !== undefined) console.log(`Koa + list read + entry ${fmt(results.floorListReadLog)}  ${listRatio(results.floorListReadLog)}`)
    console.log(`REST list per_page=100  ${fmt(rList)}  ${listRatio(rList)}`)
    console.log(`REST PUT dry-run 20 KB  ${fmt(rPut)}  (dense: ${(body.match(/<a /g) ?? []).length} links)`)
    console.log(`  article-shaped 20 KB  ${fmt(rPutArticle)}  (${articleShaped.length} B, 30 links)`)
    console.log(`GET/bare throughput   ${(rGet.requests.average / rBareGet.requests.average).toFixed(2)}x (aim >= 0.35; Koa alone: ${(rFloorGet.requests.average / rBareGet.requests.average).toFixed(2)}x)`)
    if (results.floorReadLog !== undefined) {
      console.log(`GET/its floor         ${(rGet.requests.average / results.floorReadLog.requests.average).toFixed(2)}x (Koa + read + journaled entry)`)
      if (results.floorContract !== undefined) {
        const least = results.floorContract.requests.average
        console.log(
          `GET/its least work    ${(rGet.requests.average / least).toFixed(2)}x (goal >= 0.90 of the contract's least work, which reaches ${(least / results.floorReadLog.requests.average).toFixed(2)}x of the floor)`,
        )
        const [serviceCpu, leastCpu] = [rGet.mainCpuPerRequest, results.floorContract.mainCpuPerRequest]
        if (serviceCpu !== undefined && leastCpu !== undefined) {
          console.log(
            `  main-thread CPU a GET: the service ${serviceCpu.toFixed(1)} µs, its least work ${leastCpu.toFixed(1)} µs: ${(leastCpu / serviceCpu).toFixed(2)}x (the same ratio read without the machine's other load)`,
          )
        }
      }
    }
    console.log(`list/bare throughput  ${(rList.requests.average / rBareList.requests.average).toFixed(2)}x (aim >= 0.2)`)
    if (results.floorListReadLog !== undefined) {
      console.log(`list/its floor        ${(rList.requests.average / results.floorListReadLog.requests.average).toFixed(2)}x (must be >= 0.75: within 25 % of Koa + list read + journaled entry)`)
    }
    console.log(`mixed load: GET       ${fmt(mixed.get)}  (${Math.max(1, CONNECTIONS - 1)} connections)`)
    console.log(`            PUT       ${fmt(mixed.put)}  (1 connection, dense 20 KB body)`)
    console.log(
      `PUT/GET latency       under the same load (mixed): mean ${mixedRatio(mixed).toFixed(2)}x (goal <= 4), p50 ${(Math.max(mixed.put.latency.p50, 1) / Math.max(mixed.get.latency.p50, 1)).toFixed(2)}x`,
    )
    const meanRatio = (put: CannonResult) => `mean ${(put.latency.average / rGet.latency.average).toFixed(2)}x (p50 ${(Math.max(put.latency.p50, 1) / Math.max(rGet.latency.p50, 1)).toFixed(2)}x)`
    console.log(`                      each under its own ${CONNECTIONS} connections: ${meanRatio(rPut)}, article-shaped body ${meanRatio(rPutArticle)}`)
    console.log(
      `one at a time (${SEQUENTIAL} each, median of ${ROUNDS} alternating rounds): GET ${(1000 / seqGet).toFixed(2)} ms, dry-run PUT ${(1000 / seqPut).toFixed(2)} ms, PUT/GET ${(seqGet / seqPut).toFixed(2)}x`,
    )
    await operatingCosts(bench.databaseUrl, getPath, auth)
  } finally {
    for (const s of bares) await new Promise((resolve) => s.close(resolve))
    for (const close of closers) await close()
    await bench.close()
  }
}
