/**
 * Operating the service (issue 31), as an operator sees it: `npm start`'s entry point in a child
 * process on PostgreSQL and Redis, with METRICS_TOKEN and an OTLP endpoint (a receiver in this
 * process, decoding the protobuf it is sent). Its real stdout is read line by line; `/metrics` is
 * scraped and parsed with a Prometheus text parser; the spans it exports are put back into trees.
 * The tests run in order: the traffic of the first is what the later ones count and trace.
 */
import { importData } from "@content-site/core"
import type { ChildProcess } from "node:child_process"
import { connect as connectSocket } from "node:net"
import parsePrometheusTextFormat from "parse-prometheus-text-format"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer } from "../../apps/server/server.ts"
import { ALICE, connect, ScriptedOAuthProvider, seedFile } from "../mcp/support.ts"
import { createTempDir, createTestDatabase } from "../support/databases.ts"
import { eventually } from "../support/eventually.ts"
import { startOtlpReceiver, type ReceivedSpan } from "../support/otlpReceiver.ts"
import { spawnNode } from "../support/processes.ts"

const METRICS_TOKEN = "metrics-token-0123456789abcdef"
// What the first request carries besides its key: none of it may reach the log.
const COOKIE_SECRET = "cookie-secret-5f1c0a9e7d"
const BODY_SECRET = "body-secret-b7e29c4410"
// A W3C traceparent from a caller that traces: the server's spans continue its trace.
const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
const CALLER_SPAN = "00f067aa0ba902b7"

let database: Awaited<ReturnType<typeof createTestDatabase>>
let dataDir: ReturnType<typeof createTempDir>
let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>
let child: ChildProcess
let base = ""
let stdout = ""
let stderr = ""

beforeAll(async () => {
  receiver = await startOtlpReceiver()
  database = await createTestDatabase()
  dataDir = createTempDir("cs-ops-")
  // The seed goes in through an instance in this process, closed before the one under test starts.
  const seeding = await startServer({ quiet: true, env: { HOST: "127.0.0.1", PORT: "0", SEED_DEMO: "false", DATABASE_URL: database.url, DATA_DIR: dataDir.dir } })
  await seeding.runtime.runPromise(importData(seedFile()))
  await seeding.close()
  child = spawnNode("apps/server/main.ts", [], {
    HOST: "127.0.0.1",
    PORT: "0",
    SEED_DEMO: "false",
    DATABASE_URL: database.url,
    REDIS_URL: "redis://127.0.0.1:6379",
    DATA_DIR: dataDir.dir,
    RATE_LIMIT_PER_MINUTE: "100000",
    AUTH_FAILURE_LIMIT_PER_MINUTE: "1000",
    METRICS_TOKEN,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_BSP_SCHEDULE_DELAY: "100",
    LOG_LEVEL: "info",
    // a setting misspelt: warned about at start, and its default used
    MAX_PER_PAEG: "5",
  })
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()))
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()))
  const exited = new Promise<never>((_, reject) => child.once("exit", (code) => reject(new Error(`server exited (${code}): ${stderr}`))))
  // up to the space after it: a chunk of the pipe may end inside the address
  const listening = eventually(() => /listening on (http:\/\/\S+) /.exec(stdout)?.[1], (url) => url !== undefined, 60_000)
  base = (await Promise.race([listening, exited])) ?? ""
  expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
})

afterAll(async () => {
  if (child !== undefined && child.exitCode === null) {
    const gone = new Promise((resolve) => child.once("exit", resolve))
    child.kill("SIGTERM")
    await gone
  }
  await receiver?.close()
  await database?.drop()
  dataDir?.remove()
})

/** Every stdout line so far, each parsed as JSON (a line that is not JSON fails the test). */
const lines = (): Array<Record<string, unknown>> =>
  stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>
      } catch {
        throw new Error(`not a JSON line: ${line}`)
      }
    })

const accessLine = (requestId: string) => eventually(() => lines().find((l) => l["request_id"] === requestId), (l) => l !== undefined, 10_000)

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${ALICE.apiKey}`, ...(init.headers as Record<string, string> | undefined) } })

const scrape = async (token = METRICS_TOKEN) => fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } })

/** The sign-in page's CSRF token and the cookie that goes with it. */
const signInForm = async () => {
  const page = await fetch(`${base}/`)
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? ""
  return { csrf, cookie: page.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ") }
}

/** Posts the sign-in form (not following its redirect). */
const signIn = (form: { csrf: string; cookie: string }, email: string, password: string) =>
  fetch(`${base}/`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: form.cookie },
    body: new URLSearchParams({ _csrf: form.csrf, email, password, next: "/sites" }).toString(),
  })

let firstRequestId = ""
let mcpTokens: Array<string> = []

describe("logs", () => {
  it("should label a known API path asked with a method it does not take by its template, with its code", async () => {
    for (const [method, status, code] of [["DELETE", 405, "method_not_allowed"], ["OPTIONS", 204, undefined]] as const) {
      const res = await api("/api/v1/articles/art_a1_1", { method })
      expect([method, res.status]).toEqual([method, status])
      const line = await accessLine(res.headers.get("x-request-id") ?? "")
      expect([method, line?.["route"], line?.["code"]]).toEqual([method, "/api/v1/articles/{id}", code])
    }
  })

  it("should label the API reference's page and assets by their templates, not as unmatched", async () => {
    for (const [path, route] of [["/api/docs", "/api/docs"], ["/api/docs/", "/api/docs"], ["/api/docs/init.js", "/api/docs/{file}"]] as const) {
      const res = await fetch(`${base}${path}`)
      expect([path, res.status]).toEqual([path, 200])
      expect([path, (await accessLine(res.headers.get("x-request-id") ?? ""))?.["route"]]).toEqual([path, route])
    }
  })

  it("should write one JSON access line per request with its X-Request-Id, route template, account and trace, and no secret it carried", async () => {
    const res = await api("/api/v1/articles/art_a1_1", {
      method: "PUT",
      headers: {
        "content-type": "application/json",
        cookie: `cs_session=${COOKIE_SECRET}`,
        traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
      },
      body: JSON.stringify({ title: `Retitled ${BODY_SECRET}`, reason: `password=${ALICE.password}` }),
    })
    expect(res.status).toBe(200)
    firstRequestId = res.headers.get("x-request-id") ?? ""
    expect(firstRequestId).toMatch(/^req_/)
    const line = await accessLine(firstRequestId)
    expect(line).toMatchObject({
      level: "info",
      method: "PUT",
      route: "/api/v1/articles/{id}",
      status: 200,
      account_id: "acc_alice",
      channel: "api",
      trace_id: CALLER_TRACE,
    })
    expect(typeof line?.["duration_ms"]).toBe("number")
    expect(Date.parse(String(line?.["time"]))).toBeGreaterThan(0)
    expect(String(line?.["msg"])).toBe("PUT /api/v1/articles/{id} 200")

    // An agent connects (OAuth: registration, sign-in with a password, consent, tokens) and calls a tool.
    const provider = new ScriptedOAuthProvider({ email: ALICE.email, password: ALICE.password, decision: "allow" }, "Ops Agent")
    const client = await connect(`${base}/mcp`, provider)
    expect(client).toBeDefined()
    const result = await client!.callTool({ name: "get_article", arguments: { article_id: "art_a1_2" } })
    expect(result.isError).not.toBe(true)
    await client!.close()
    mcpTokens = [provider.savedTokens?.access_token ?? "", provider.savedTokens?.refresh_token ?? "", provider.authorizationCode ?? "", provider.verifier].filter((t) => t.length >= 8)
    expect(mcpTokens.length).toBeGreaterThanOrEqual(2)
    const toolLine = await eventually(() => lines().find((l) => l["tool"] === "get_article"), (l) => l !== undefined, 10_000)
    expect(toolLine).toMatchObject({ method: "POST", route: "/mcp", status: 200, channel: "mcp", account_id: "acc_alice" })
    expect(lines().some((l) => l["route"] === "/oauth/token" && l["channel"] === "oauth")).toBe(true)
    const interactions = lines().filter((l) => l["route"] === "/oauth/interaction/{uid}")
    expect(interactions.length).toBeGreaterThan(0)
    // the consent page and the sign-in and consent forms name the account they act for
    expect(interactions.some((l) => l["method"] === "GET" && l["status"] === 200 && l["account_id"] === "acc_alice")).toBe(true)
    const posts = interactions.filter((l) => l["method"] === "POST")
    expect(posts.length).toBeGreaterThanOrEqual(2)
    expect(posts.every((l) => l["account_id"] === "acc_alice")).toBe(true)

    const everything = stdout + stderr
    for (const secret of [ALICE.apiKey, ALICE.password, COOKIE_SECRET, BODY_SECRET, ...mcpTokens]) expect(everything).not.toContain(secret)
    // Every line, the service's own events included, is JSON with the contract's three fields.
    for (const l of lines()) expect(Object.keys(l)).toEqual(expect.arrayContaining(["time", "level", "msg"]))
  })
})

describe("settings", () => {
  it("should warn at start of a variable that looks like a misspelt setting, naming the setting", async () => {
    const line = await eventually(() => lines().find((l) => l["variable"] === "MAX_PER_PAEG"), (l) => l !== undefined, 10_000)
    expect(line).toMatchObject({ setting: "MAX_PER_PAGE", msg: expect.stringContaining("MAX_PER_PAEG is not a setting of this service (is it MAX_PER_PAGE, misspelt?)") })
    expect([40, "warn"]).toContain(line!["level"])
  })
})

describe("metrics", () => {
  it("should refuse a scrape with a wrong token as a 401 problem", async () => {
    const res = await scrape("not-the-metrics-token-at-all")
    expect(res.status).toBe(401)
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/)
    expect(((await res.json()) as { code: string }).code).toBe("unauthenticated")
    expect((await fetch(`${base}/metrics`)).status).toBe(401)
  })

  it("should count /mcp's own refusals (no token, a bad token) as refusals of the mcp channel, by code", async () => {
    const refusalsOf = async (code: string) => {
      const text = await (await scrape()).text()
      const line = text.split("\n").find((l) => l.startsWith("content_site_refusals_total{") && l.includes(`code="${code}"`) && l.includes('channel="mcp"'))
      return line === undefined ? 0 : Number(line.split(" ").at(-1))
    }
    const before = await refusalsOf("unauthenticated")
    for (const authorization of [undefined, "Bearer not-a-token"]) {
      const res = await fetch(`${base}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...(authorization === undefined ? {} : { authorization }) },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      })
      expect(res.status).toBe(401)
      expect((await accessLine(res.headers.get("x-request-id") ?? ""))?.["code"]).toBe("unauthenticated")
    }
    expect(await refusalsOf("unauthenticated")).toBe(before + 2)
  })

  it("should note an OAuth endpoint's refusal by its OAuth error code, in its access line and the refusals of the oauth channel", async () => {
    const refusalsOf = async (code: string) => {
      const text = await (await scrape()).text()
      const line = text.split("\n").find((l) => l.startsWith("content_site_refusals_total{") && l.includes(`code="${code}"`) && l.includes('channel="oauth"'))
      return line === undefined ? 0 : Number(line.split(" ").at(-1))
    }
    const res = await fetch(`${base}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams({ grant_type: "authorization_code", code: "not-a-code", client_id: "no-such-client", redirect_uri: "http://127.0.0.1/cb" }).toString(),
    })
    expect(res.status).toBeGreaterThanOrEqual(400)
    const error = String(((await res.json()) as { error?: string }).error)
    expect(error).toMatch(/^invalid_/)
    expect(await accessLine(res.headers.get("x-request-id") ?? "")).toMatchObject({ route: "/oauth/token", channel: "oauth", status: res.status, code: error })
    expect(await refusalsOf(error)).toBeGreaterThanOrEqual(1)
  })

  it("should log an OAuth endpoint's own failure (500 server_error) as an error event with its cause and request id", async () => {
    // the OAuth store's table gone for a moment: the provider fails the registration itself
    const sql = new pg.Client({ connectionString: database.url })
    await sql.connect()
    let res: Response
    try {
      await sql.query("alter table oauth_payloads rename to oauth_payloads_away")
      res = await fetch(`${base}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ client_name: "ops", redirect_uris: ["https://client.test/cb"] }) })
    } finally {
      await sql.query("alter table if exists oauth_payloads_away rename to oauth_payloads")
      await sql.end()
    }
    expect(res.status).toBe(500)
    const requestId = res.headers.get("x-request-id") ?? ""
    const access = await eventually(() => lines().find((l) => l["request_id"] === requestId && l["route"] !== undefined), (l) => l !== undefined, 10_000)
    expect(access).toMatchObject({ route: "/oauth/register", code: "internal" })
    const event = await eventually(() => lines().find((l) => l["level"] === "error" && l["request_id"] === requestId), (l) => l !== undefined, 10_000)
    expect(event).toMatchObject({ msg: "internal error" })
    expect(String(event?.["detail"])).toContain("oauth_payloads")
  })

  it("should note the code of a refused web sign-in in its access line", async () => {
    const form = await signInForm()
    const res = await signIn(form, "nobody@example.test", "wrong-password-1")
    expect(res.status).toBe(401)
    expect(await accessLine(res.headers.get("x-request-id") ?? "")).toMatchObject({ route: "/", code: "unauthenticated" })
    // and a sign-in that succeeds names the account it signed in
    const ok = await signIn(form, ALICE.email, ALICE.password)
    expect(ok.status).toBe(303)
    expect(await accessLine(ok.headers.get("x-request-id") ?? "")).toMatchObject({ route: "/", status: 303, account_id: "acc_alice" })
  })

  it("should log a request Node's parser refused, with the X-Request-Id its answer carries", async () => {
    const url = new URL(base)
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connectSocket(Number(url.port), url.hostname, () => socket.write("GET /api/v1/sites HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n"))
      let text = ""
      socket.on("data", (chunk) => (text += chunk.toString("latin1")))
      socket.on("end", () => resolve(text))
      socket.on("error", reject)
    })
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    const requestId = /X-Request-Id: (req_\w+)/.exec(answer)?.[1] ?? ""
    expect(await accessLine(requestId)).toMatchObject({ method: "UNKNOWN", route: "unmatched", status: 400, code: "invalid_request", channel: "unknown" })
  })

  it("should write one line for an OAuth request answered before its body was read, none more when its client then leaves", async () => {
    const url = new URL(base)
    const unknown = () => lines().filter((l) => l["method"] === "UNKNOWN").length
    const before = unknown()
    const socket = connectSocket(Number(url.port), url.hostname)
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
    let answer = ""
    socket.on("data", (chunk) => (answer += chunk.toString("latin1")))
    socket.on("error", () => undefined)
    // a form far over the provider's body limit: it answers from what came first
    socket.write(`POST /oauth/token HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 3000000\r\n\r\n`)
    socket.write("grant_type=refresh_token&refresh_token=" + "a".repeat(200 * 1024))
    const requestId = (await eventually(() => /X-Request-Id: (req_\w+)/.exec(answer)?.[1], (id) => id !== undefined, 10_000)) ?? ""
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()))
    socket.end()
    expect(await accessLine(requestId)).toMatchObject({ route: "/oauth/token", channel: "oauth", status: 400 })
    // The server closes the socket once it has handled its end (and logged it, had it been a
    // line); a request after that is a marker: once its line is out, a line of the left client
    // would be out before it.
    await closed
    const marker = (await fetch(`${base}/api/v1/sites`)).headers.get("X-Request-Id") ?? ""
    await accessLine(marker)
    expect(unknown()).toBe(before)
  })

  it("should log a request whose client left while sending its body as 499 (client closed), not as a refusal", async () => {
    const url = new URL(base)
    const leave = async (contentType: string, length: number, part: string, target = `/api/v1/articles/art_a1_3/featured-image`, credentials = `Authorization: Bearer ${ALICE.apiKey}`) => {
      const socket = connectSocket(Number(url.port), url.hostname)
      await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
      // the server's 100 Continue says it took the request in: a connection closed before that leaves no request to log
      const taken = new Promise<void>((resolve) => socket.once("data", () => resolve()))
      socket.write(
        `POST ${target} HTTP/1.1\r\nHost: ${url.host}\r\n${credentials}\r\n` +
          `Content-Type: ${contentType}\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`,
      )
      await taken
      await new Promise<void>((resolve) => socket.write(part, () => resolve()))
      const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()))
      socket.destroy()
      await closed
    }
    // the access lines of this route (an id the client sends is not taken by default)
    const uploads = () => lines().filter((l) => l["route"] === "/api/v1/articles/{id}/featured-image")
    // nothing else is logged of these requests (a refusal of the half-sent request beside them, as Node's parser saw its end)
    const unmatched = () => lines().filter((l) => l["route"] === "unmatched").length
    const unmatchedBefore = unmatched()
    const boundary = "----cs-left"
    for (const [contentType, length, part] of [
      ["application/json", 2_000, '{"url": "https://images.example/a.png", "alt": "'],
      [`multipart/form-data; boundary=${boundary}`, 100_000, `--${boundary}\r\nContent-Disposition: form-data; name="alt"\r\n\r\nA cat\r\n--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n\u0089PNG`],
    ] as const) {
      const before = uploads().length
      await leave(contentType, length, part)
      // (this request's own line: the line of the one before must not answer for it)
      const line = (await eventually(uploads, (l) => l.length > before, 10_000))[before]
      expect([contentType, line?.["status"], line?.["code"]]).toEqual([contentType, 499, undefined])
    }
    // the article page's upload form, signed in
    const jar = new Map<string, string>()
    const page = async (path: string, init: RequestInit = {}) => {
      const res = await fetch(`${base}${path}`, { ...init, redirect: "manual", headers: { ...(init.headers as Record<string, string>), Cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") } })
      for (const c of res.headers.getSetCookie()) {
        const [name, value] = c.split(";")[0]!.split("=") as [string, string]
        jar.set(name, value)
      }
      return res
    }
    const csrfOf = async (path: string) => /name="_csrf" value="([^"]+)"/.exec(await (await page(path)).text())?.[1] ?? ""
    const signInCsrf = await csrfOf("/")
    await page("/", { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ _csrf: signInCsrf, email: ALICE.email, password: ALICE.password, next: "/sites" }).toString() })
    const csrf = await csrfOf("/articles/art_a1_3")
    const cookie = `Cookie: ${[...jar].map(([k, v]) => `${k}=${v}`).join("; ")}`
    const pageUploads = () => lines().filter((l) => l["route"] === "/articles/{id}/image")
    const before = pageUploads().length
    const form = `--${boundary}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${csrf}\r\n--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n\u0089PNG`
    await leave(`multipart/form-data; boundary=${boundary}`, 100_000, form, "/articles/art_a1_3/image", cookie)
    const line = (await eventually(pageUploads, (l) => l.length > before, 10_000))[before]
    expect([line?.["status"], line?.["code"]]).toEqual([499, undefined])
    // a form page's form (the sign-in's), left half-sent: no defect of the page (no error line, no 500 internal)
    const signIns = () => lines().filter((l) => l["route"] === "/" && l["method"] === "POST")
    const signInsBefore = signIns().length
    await leave("application/x-www-form-urlencoded", 1_000, `email=${encodeURIComponent(ALICE.email)}&password=`, "/", "Accept: text/html")
    const signInLine = (await eventually(signIns, (l) => l.length > signInsBefore, 10_000))[signInsBefore]
    expect([signInLine?.["status"], signInLine?.["code"]]).toEqual([499, undefined])
    expect(lines().filter((l) => l["msg"] === "web page error")).toEqual([])
    expect(unmatched()).toBe(unmatchedBefore)
  })

  it("should note the code of a /media problem in its access line", async () => {
    const res = await fetch(`${base}/media/nonexistent.png`)
    expect(res.status).toBe(404)
    expect(await accessLine(res.headers.get("x-request-id") ?? "")).toMatchObject({ route: "/media/{file}", code: "not_found" })
  })

  it("should count the traffic it served by route template, status, refusal code, tool and origin, without ids", async () => {
    for (let i = 0; i < 3; i++) expect((await api("/api/v1/sites/site_a1/articles?per_page=2")).status).toBe(200)
    // Refused: a title that is empty after trimming.
    expect((await api("/api/v1/articles/art_a1_3", { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ title: " " }) })).status).toBe(400)
    expect((await api("/api/v1/articles/art_a1_3/no-such-thing")).status).toBe(404)

    const res = await scrape()
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/)
    const text = await res.text()
    const families = parsePrometheusTextFormat(text)
    // The parser folds a histogram's labelled series into one sample (its flattening keeps no
    // labels), so the histograms' `_count` series are read from a parse without their TYPE lines.
    // (a series of an untyped parse comes back as one family per run of lines: gathered by name)
    const series = parsePrometheusTextFormat(text.replace(/^# TYPE \S+ histogram$/gm, ""))
    const samples = (name: string) => series.filter((f) => f.name === name).flatMap((f) => f.metrics)
    const family = (name: string) => {
      const found = families.find((f) => f.name === name)
      if (found === undefined) throw new Error(`no metric family ${name}`)
      return found
    }
    const sample = (name: string, labels: Record<string, string>) =>
      samples(name).find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v) && Object.keys(m.labels ?? {}).length === Object.keys(labels).length)

    const requests = family("http_server_request_duration_seconds")
    expect(requests.type).toBe("HISTOGRAM")
    expect(sample("http_server_request_duration_seconds_count", { method: "GET", route: "/api/v1/sites/{id}/articles", status: "200" })?.value).toBe("3")
    expect(sample("http_server_request_duration_seconds_count", { method: "PUT", route: "/api/v1/articles/{id}", status: "400" })?.value).toBe("1")
    expect(sample("http_server_request_duration_seconds_count", { method: "PUT", route: "/api/v1/articles/{id}", status: "200" })?.value).toBe("1")
    expect(sample("http_server_request_duration_seconds_count", { method: "GET", route: "unmatched", status: "404" })?.value).toBe("1")
    expect(sample("content_site_refusals_total", { code: "invalid_request", channel: "api" })?.value).toBe("1")
    expect(sample("content_site_refusals_total", { code: "not_found", channel: "api" })?.value).toBe("1")
    expect(sample("content_site_article_changes_total", { origin: "api" })?.value).toBe("1")
    expect(sample("content_site_mcp_tool_call_duration_seconds_count", { tool: "get_article", outcome: "ok" })?.value).toBe("1")
    expect(family("content_site_activity_journal_backlog").type).toBe("GAUGE")
    for (const pool of ["sanitiser", "images"]) {
      for (const state of ["running", "waiting"]) expect(sample("content_site_pool_jobs", { pool, state })?.value).toMatch(/^\d+$/)
    }
    // The runtime's own: event-loop lag, memory, GC.
    for (const name of ["nodejs_eventloop_lag_seconds", "process_resident_memory_bytes", "nodejs_heap_size_used_bytes", "nodejs_gc_duration_seconds"]) family(name)

    // No label anywhere names an account, a site, an article or a request: templates, codes and names only.
    for (const f of series) {
      for (const m of f.metrics) {
        for (const value of Object.values(m.labels ?? {})) expect(value).not.toMatch(/acc_|site_a|art_|req_|key_/)
      }
    }
    const routes = new Set(samples("http_server_request_duration_seconds_count").map((m) => m.labels?.["route"]))
    for (const route of routes) expect(route === "unmatched" || /^\/[\w./{}-]*$/.test(route ?? "")).toBe(true)
    // The scrapes themselves are neither counted nor logged, like the health checks.
    expect(routes.has("/metrics")).toBe(false)
  })

  it("should label the OAuth server's metadata documents by their own paths, not as unmatched", async () => {
    for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]) {
      const res = await fetch(`${base}${path}`)
      expect([path, res.status]).toEqual([path, 200])
      expect(await accessLine(res.headers.get("x-request-id") ?? "")).toMatchObject({ route: path, channel: "oauth", status: 200 })
    }
    const text = await (await scrape()).text()
    // (the agent's client of the first test read it too)
    expect(text).toMatch(/^http_server_request_duration_seconds_count\{method="GET",route="\/\.well-known\/oauth-authorization-server",status="200"\} [1-9]/m)
  })

  it("should note not_found in the access line of a page address nothing serves, and count it as a refusal of the web channel", async () => {
    const res = await fetch(`${base}/no-such-page`)
    expect(res.status).toBe(404)
    expect(await accessLine(res.headers.get("x-request-id") ?? "")).toMatchObject({ route: "unmatched", channel: "web", status: 404, code: "not_found" })
    const text = await (await scrape()).text()
    expect(text).toContain('content_site_refusals_total{code="not_found",channel="web"} 1')
  })

  it("should note an OAuth endpoint asked with a method it does not take (the provider's 404) as not_found, in its access line and the refusals of the oauth channel", async () => {
    for (const [method, path] of [["DELETE", "/oauth/register"], ["GET", "/oauth/token"]] as const) {
      const res = await fetch(`${base}${path}`, { method })
      expect([method, path, res.status]).toEqual([method, path, 404])
      expect([method, path, await accessLine(res.headers.get("x-request-id") ?? "")]).toMatchObject([method, path, { route: path, channel: "oauth", status: 404, code: "not_found" }])
    }
    const text = await (await scrape()).text()
    expect(text).toMatch(/^content_site_refusals_total\{code="not_found",channel="oauth"\} [2-9]/m)
  })

  it("should note a page's too-large form as payload_too_large, in its access line and the refusals of the web channel", async () => {
    const form = await signInForm()
    const res = await fetch(`${base}/`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: form.cookie },
      body: new URLSearchParams({ _csrf: form.csrf, email: "x@example.test", password: "p".repeat(70 * 1024) }).toString(),
    })
    expect(res.status).toBe(413)
    expect(await accessLine(res.headers.get("x-request-id") ?? "")).toMatchObject({ route: "/", channel: "web", status: 413, code: "payload_too_large" })
    const text = await (await scrape()).text()
    expect(text).toMatch(/^content_site_refusals_total\{code="payload_too_large",channel="web"\} [1-9]/m)
  })

  it("should label a page address asked with a method it does not take by the page's template, not as unmatched", async () => {
    for (const [method, path, route] of [["DELETE", "/sites", "/sites"], ["DELETE", "/articles/art_a1_1", "/articles/{id}"], ["PUT", "/signout", "/signout"]] as const) {
      const res = await fetch(`${base}${path}`, { method, redirect: "manual" })
      expect([method, path, res.status]).toEqual([method, path, 405])
      expect([method, path, await accessLine(res.headers.get("x-request-id") ?? "")]).toMatchObject([method, path, { route, channel: "web", code: "method_not_allowed" }])
    }
  })
})

describe("traces", () => {
  const tree = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId)
  const childrenOf = (spans: ReadonlyArray<ReceivedSpan>, parent: ReceivedSpan) => spans.filter((s) => s.parentSpanId === parent.spanId)
  const descendantsOf = (spans: ReadonlyArray<ReceivedSpan>, parent: ReceivedSpan): Array<ReceivedSpan> =>
    childrenOf(spans, parent).flatMap((c) => [c, ...descendantsOf(spans, c)])

  it("should trace a REST call under the caller's traceparent: server span by route, the use case, its database calls", async () => {
    const res = await api("/api/v1/articles/art_a1_4", { headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` } })
    expect(res.status).toBe(200)
    const line = await accessLine(res.headers.get("x-request-id") ?? "")
    expect(line?.["trace_id"]).toBe(CALLER_TRACE)
    const spans = await eventually(
      () => tree(CALLER_TRACE),
      (s) => s.some((x) => x.name === "GET /api/v1/articles/{id}") && s.some((x) => x.name === "getArticle"),
      10_000,
    )
    const server = spans.find((s) => s.name === "GET /api/v1/articles/{id}")!
    expect(server.kind).toBe(2)
    expect(server.parentSpanId).toBe(CALLER_SPAN)
    expect(server.service).toBe("content-site")
    expect(server.attributes["http.route"]).toBe("/api/v1/articles/{id}")
    expect(server.attributes["http.request.method"]).toBe("GET")
    expect(server.attributes["http.response.status_code"]).toBe(200)
    // The use case's span is the server span's own child: nothing stands between them.
    const useCase = childrenOf(spans, server).find((s) => s.name === "getArticle")
    expect(useCase).toBeDefined()
    const queries = descendantsOf(spans, useCase!).filter((s) => s.attributes["db.system"] === "postgresql" || s.attributes["db.system.name"] === "postgresql")
    expect(queries.length).toBeGreaterThan(0)
    expect(queries.every((q) => q.kind === 3)).toBe(true)
    // The request counter is in Redis: its call is in the same request's tree.
    const redis = descendantsOf(spans, server).filter((s) => s.attributes["db.system"] === "redis" || s.attributes["db.system.name"] === "redis")
    expect(redis.length).toBeGreaterThan(0)
    // Exported in OTLP's default encoding, protobuf, which the receiver decoded from the official schema.
    expect(receiver.contentTypes.length).toBeGreaterThan(0)
    expect(receiver.contentTypes.every((t) => t === "application/x-protobuf")).toBe(true)
  })

  it("should trace an MCP tools/call: the POST /mcp server span, the tool's span, its database calls", async () => {
    const toolLine = lines().find((l) => l["tool"] === "get_article")
    const traceId = String(toolLine?.["trace_id"] ?? "")
    expect(traceId).toMatch(/^[0-9a-f]{32}$/)
    const spans = await eventually(() => tree(traceId), (s) => s.some((x) => x.name === "tool get_article") && s.some((x) => x.name === "POST /mcp"), 10_000)
    const server = spans.find((s) => s.name === "POST /mcp")!
    expect(server.kind).toBe(2)
    const tool = descendantsOf(spans, server).find((s) => s.name === "tool get_article")
    expect(tool).toBeDefined()
    expect(descendantsOf(spans, tool!).some((s) => s.attributes["db.system"] === "postgresql" || s.attributes["db.system.name"] === "postgresql")).toBe(true)
  })

  it("should mark an MCP tool's span as an error when its result is an error (the HTTP answer is a 200), and a good one not", async () => {
    const call = (id: number, articleId: string) =>
      fetch(`${base}/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${mcpTokens[0]}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
        body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "get_article", arguments: { article_id: articleId } } }),
      })
    const traced = async (res: Response) => {
      expect(res.status).toBe(200)
      const traceId = String((await accessLine(res.headers.get("x-request-id") ?? ""))?.["trace_id"] ?? "")
      const spans = await eventually(() => tree(traceId), (s) => s.some((x) => x.name === "tool get_article"), 10_000)
      return spans.find((x) => x.name === "tool get_article")!
    }
    const missing = await call(1, "art_missing_1")
    expect(((await missing.json()) as { result?: { isError?: boolean } }).result?.isError).toBe(true)
    expect((await traced(missing)).status).toBe(2)
    const found = await call(2, "art_a1_2")
    expect(((await found.json()) as { result?: { isError?: boolean } }).result?.isError).not.toBe(true)
    expect((await traced(found)).status).toBe(0)
  })

  it("should trace a web page: the server span by route, the page's span, its database calls", async () => {
    const signedIn = await signIn(await signInForm(), ALICE.email, ALICE.password)
    expect(signedIn.status).toBe(303)
    const cookie = signedIn.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ")
    const res = await fetch(`${base}/sites`, { headers: { cookie } })
    expect(res.status).toBe(200)
    const traceId = String((await accessLine(res.headers.get("x-request-id") ?? ""))?.["trace_id"] ?? "")
    expect(traceId).toMatch(/^[0-9a-f]{32}$/)
    const spans = await eventually(() => tree(traceId), (s) => s.some((x) => x.name === "GET /sites") && s.some((x) => x.name === "page GET /sites"), 10_000)
    const server = spans.find((s) => s.name === "GET /sites")!
    const pageSpan = childrenOf(spans, server).find((s) => s.name === "page GET /sites")
    expect(pageSpan).toBeDefined()
    expect(descendantsOf(spans, pageSpan!).some((s) => s.attributes["db.system"] === "postgresql" || s.attributes["db.system.name"] === "postgresql")).toBe(true)
    // the sign-in's check and session are a span of their own too
    const signInTrace = String((await accessLine(signedIn.headers.get("x-request-id") ?? ""))?.["trace_id"] ?? "")
    const signInSpans = await eventually(() => tree(signInTrace), (s) => s.some((x) => x.name === "page POST / (sign in)"), 10_000)
    expect(signInSpans.some((x) => x.name === "page POST / (sign in)")).toBe(true)
  })

  it("should keep no string literal of a statement in its span: the OAuth store's tokens are written into some statements' text", async () => {
    const texts = receiver.spans.map((s) => s.attributes["db.query.text"]).filter((t): t is string => typeof t === "string")
    expect(texts.length).toBeGreaterThan(0)
    // statements with values written in were traced (the connection's OAuth flow), each value as '?'
    expect(texts.some((t) => t.includes("'?'"))).toBe(true)
    for (const text of texts) expect(text.replaceAll("'?'", "")).not.toContain("'")
  })

  // Last in the file: it stops the server.
  it("should, on SIGTERM, export what it still holds and log the export worker's counts: every span sent, none lost", async () => {
    const gone = new Promise((resolve) => child.once("exit", resolve))
    child.kill("SIGTERM")
    await gone
    const shutdown = lines().find((l) => l["msg"] === "tracing shut down")
    expect(shutdown?.["spans"]).toEqual({ exported: receiver.spans.length, failed: 0, dropped: 0 })
    expect(receiver.spans.length).toBeGreaterThan(0)
  })

  // After the server has stopped: every span is exported by then, and the journal shipped.
  it("should trace the activity journal's shipping as no request's call: a request's trace holds its own statements only", async () => {
    // the reads above were journaled and shipped in batches (each moving its file's mark)...
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      const shipped = await client.query<{ n: string }>("select count(*) as n from activity where channel = 'api'")
      expect(Number(shipped.rows[0]!.n)).toBeGreaterThan(5)
    } finally {
      await client.end()
    }
    // ...by timers no request owns: none of the batches' statements is in a request's trace
    const journalStatements = receiver.spans.filter((s) => String(s.attributes["db.query.text"] ?? "").includes("activity_journal_marks"))
    expect(journalStatements.map((s) => tree(s.traceId).find((x) => x.kind === 2)?.name)).toEqual([])
  })
})
