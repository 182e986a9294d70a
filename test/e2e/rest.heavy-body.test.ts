/**
 * Bodies that cost the sanitiser the most: refused within its bounds, checked against the article
 * first, and sanitised off the event loop so that the server answers others meanwhile.
 */
import { request, ServerResponse } from "node:http"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { json, KEYS, startTestServer, type TestServer } from "./helpers.ts"

let t: TestServer
beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PER_MINUTE: "100000", DAILY_EDIT_LIMIT: "1000" }, { storage: "memory" })
})
afterAll(async () => {
  await t?.close()
})

/** 1 MiB of formatting tags the parser closes and reopens in every paragraph (7 times the input). */
const NESTED = "<p><b><i><u>".repeat(80_000)

const put = (path: string, body: unknown, key: string = KEYS.a) =>
  t.api(path, { method: "PUT", key, headers: { "content-type": "application/json" }, body: JSON.stringify(body) })

describe("a body that costs the sanitiser the most", () => {
  it("should answer 404 for an article that does not exist, before any HTML work", async () => {
    const res = await put("/api/v1/articles/art_nope?dry_run=true", { body: NESTED })
    expect(res.status).toBe(404)
    expect((await json(res)).code).toBe("not_found")
  })

  it("should answer 404 for another account's article", async () => {
    const res = await put("/api/v1/articles/art_b1?dry_run=true", { body: NESTED })
    expect(res.status).toBe(404)
  })

  it("should refuse with 413 payload_too_large a body whose sanitised form is over 1 MiB, and store nothing", async () => {
    const before = await json(await t.api("/api/v1/articles/art_a02"))
    for (const dryRun of [true, false]) {
      const res = await put(`/api/v1/articles/art_a02${dryRun ? "?dry_run=true" : ""}`, { body: NESTED })
      expect(res.status).toBe(413)
      expect((await json(res)).code).toBe("payload_too_large")
    }
    const after = await json(await t.api("/api/v1/articles/art_a02"))
    expect(after.revision).toBe(before.revision)
    expect(after.body).toBe(before.body)
  })

  it("should answer /healthz while such a body is being sanitised", async () => {
    const url = new URL(t.url)
    const payload = JSON.stringify({ body: NESTED })
    let settled = false
    let uploaded!: () => void
    const sent = new Promise<void>((resolve) => (uploaded = resolve))
    const edit = new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          method: "PUT",
          path: "/api/v1/articles/art_a02?dry_run=true",
          headers: { authorization: `Bearer ${KEYS.a}`, "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
        },
        (res) => {
          res.resume()
          res.on("end", () => {
            settled = true
            resolve(res.statusCode ?? 0)
          })
        },
      )
      req.on("error", reject)
      req.end(payload, () => uploaded())
    })
    await sent
    // Health checks one after the other, from the moment the whole body is sent until the edit is answered.
    let answeredMeanwhile = 0
    while (!settled) {
      const health = await fetch(`${t.url}/healthz`)
      await health.arrayBuffer()
      expect(health.status).toBe(200)
      if (!settled) answeredMeanwhile++
    }
    expect(await edit).toBe(413)
    // The server answered health checks while it handled the body. How many depends on the
    // machine's speed, so no count is asserted beyond one; that the sanitising itself leaves the
    // event loop free is proved by an order of events in adapters/platform/test/workerHtmlAnalyzer.test.ts.
    expect(answeredMeanwhile).toBeGreaterThanOrEqual(1)
  })

  it("should answer each of twenty 1 MiB bodies sent at once by one account, the refused ones 429 before being read, to fetch and to Node's http alike", async () => {
    const url = new URL(t.url)
    const payload = JSON.stringify({ body: "<p>A paragraph of the same article, again.</p>".repeat(22_000) })
    const path = "/api/v1/articles/art_a03?dry_run=true"
    const headers = { authorization: `Bearer ${KEYS.a}`, "content-type": "application/json", prefer: "return=minimal" }
    const viaFetch = async () => {
      try {
        const res = await fetch(`${t.url}${path}`, { method: "PUT", headers, body: payload })
        await res.arrayBuffer()
        return `${res.status} ${res.status === 429 ? `${res.headers.get("retry-after")} ${res.headers.get("connection")}` : ""}`.trim()
      } catch (e) {
        return `error ${String((e as { cause?: { code?: string } }).cause?.code ?? e)}`
      }
    }
    const viaHttp = () =>
      new Promise<string>((resolve) => {
        const req = request({ host: url.hostname, port: url.port, method: "PUT", path, headers: { ...headers, "content-length": Buffer.byteLength(payload) } }, (res) => {
          res.resume()
          res.on("end", () => resolve(`${res.statusCode} ${res.statusCode === 429 ? `${res.headers["retry-after"]} ${res.headers.connection}` : ""}`.trim()))
        })
        req.on("error", (e: NodeJS.ErrnoException) => resolve(`error ${e.code}`))
        req.end(payload)
      })
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? viaFetch() : viaHttp())))
    // Every client reads an answer (no reset): the bodies its share took, and a 429 for the rest.
    expect(answers.filter((a) => a !== "200" && a !== "429 1 close")).toEqual([])
    expect(answers.filter((a) => a === "429 1 close").length).toBeGreaterThanOrEqual(10)
  })
})

describe("a large answer", () => {
  it("should be handed to Node as its UTF-8 bytes (no joined copy of head and text on the heap), a small one as text", async () => {
    // 200 KB of text: an article's JSON well past the 64 Ki characters from which answers leave as bytes
    const body = Array.from({ length: 2_000 }, (_, i) => `<p>Paragraph ${i} of a long article, with words enough to make it long.</p>`).join("")
    expect((await put("/api/v1/articles/art_a02", { body })).status).toBe(200)
    const ends = vi.spyOn(ServerResponse.prototype, "end")
    try {
      const large = await t.api("/api/v1/articles/art_a02")
      const small = await t.api("/healthz")
      expect(large.status).toBe(200)
      expect((await json(large)).body).toBe(body)
      expect(await small.json()).toEqual({ status: "ok" })
      const given = ends.mock.calls.map(([chunk]) => (typeof chunk === "string" ? `text ${chunk.length}` : Buffer.isBuffer(chunk) ? `bytes ${chunk.byteLength}` : typeof chunk))
      expect(given).toEqual([`bytes ${Number(large.headers.get("content-length"))}`, `text ${'{"status":"ok"}'.length}`])
    } finally {
      ends.mockRestore()
    }
  })
})
