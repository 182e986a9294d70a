import { type ChildProcess, spawn } from "node:child_process"
import { request } from "node:http"
import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Browser } from "../mcp/support.ts"
import { createTestDatabase } from "../support/databases.ts"
import { eventually } from "../support/eventually.ts"
import { startPostgresProxy } from "../support/tcpProxy.ts"
import { createDatabase, fixture, KEYS, scratchDir, startTestServer, type TestServer } from "./helpers.ts"

let t: TestServer
const METRICS_TOKEN = "lifecycle-metrics-token"
beforeAll(async () => {
  t = await startTestServer({ HEADERS_TIMEOUT_MS: "400", REQUEST_TIMEOUT_MS: "800", RATE_LIMIT_PER_MINUTE: "1000", METRICS_TOKEN: METRICS_TOKEN })
})
afterAll(async () => {
  await t?.close()
})

const rawExchange = (port: number, chunks: ReadonlyArray<string>) =>
  new Promise<string>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    let data = ""
    socket.on("data", (d) => (data += d.toString()))
    socket.on("close", () => resolve(data))
    socket.on("error", () => {})
    for (const c of chunks) socket.write(c)
  })

/** A started server process's address, once its start-up line says it listens, and all it has written to stdout so far. */
const listeningOn = (child: ChildProcess) =>
  new Promise<{ base: string; output: () => string }>((resolve, reject) => {
    let out = ""
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString()
      // up to the space after it: a chunk of the pipe may end inside the address
      const m = /listening on (http:\/\/\S+) /.exec(out)
      if (m?.[1] !== undefined) resolve({ base: m[1], output: () => out })
    })
    child.on("exit", (code) => reject(new Error(`exited ${code}: ${out}`)))
  })

describe("slow clients (OWASP API4)", () => {
  it("should cut off a client that never finishes its headers", async () => {
    const port = Number(new URL(t.url).port)
    const answer = await rawExchange(port, ["GET /api/v1/sites HTTP/1.1\r\nHost: x\r\nX-Slow: "])
    expect(answer).toMatch(/^HTTP\/1\.1 408/)
  })

  it("should cut off a client that never finishes its body", async () => {
    const port = Number(new URL(t.url).port)
    const answer = await rawExchange(port, [
      `PUT /api/v1/articles/art_a13 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEYS.a}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"title":`,
    ])
    expect(answer).toMatch(/^HTTP\/1\.1 408/)
    // one request, one account of it: the PUT its route names, answered 408 with the request's own id (not a 499 beside an unmatched 408)
    const requestId = /X-Request-Id: (req_\w+)/i.exec(answer)?.[1]
    expect(answer).toContain(`"request_id":"${requestId}"`)
    // (the request's own line is noted as its handler gives up reading: just after the answer)
    const putLines = async () =>
      (await (await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text())
        .split("\n")
        .filter((l) => l.startsWith("http_server_request_duration_seconds_count{") && l.includes('method="PUT"'))
    const puts = await eventually(putLines, (lines) => lines.length > 0, 10_000)
    expect(puts).toEqual([expect.stringMatching(/route="\/api\/v1\/articles\/\{id\}",status="408"\} 1$/)])
  })

  it("should count the article page's image upload that never finishes its body as the 408 it was answered, as the API's", async () => {
    const browser = new Browser()
    const csrfOf = async (path: string) => /name="_csrf" value="([^"]+)"/.exec(await (await browser.request(`${t.url}${path}`)).text())?.[1] ?? ""
    const signedIn = await browser.request(`${t.url}/`, { form: { _csrf: await csrfOf("/"), email: "owner-a@example.com", password: "password-a-123", next: "/sites" } })
    expect(signedIn.status).toBe(303)
    const csrf = await csrfOf("/articles/art_a13")
    const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ")
    const b = "lifecycleBoundary"
    const answer = await rawExchange(Number(new URL(t.url).port), [
      `POST /articles/art_a13/image HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\nContent-Type: multipart/form-data; boundary=${b}\r\nContent-Length: 100000\r\n\r\n` +
        `--${b}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${csrf}\r\n--${b}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n\u0089PNG`,
    ])
    expect(answer).toMatch(/^HTTP\/1\.1 408/)
    const uploadLines = async () =>
      (await (await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text())
        .split("\n")
        .filter((l) => l.startsWith("http_server_request_duration_seconds_count{") && l.includes('route="/articles/{id}/image"'))
    const uploads = await eventually(uploadLines, (lines) => lines.length > 0, 10_000)
    expect(uploads).toEqual([expect.stringMatching(/status="408"\} 1$/)])
  })
})

describe("shutdown", () => {
  it("should drain an in-flight request before closing", async () => {
    const other = await startTestServer({ RATE_LIMIT_PER_MINUTE: "1000" })
    const body = JSON.stringify({ title: "Finished during shutdown" })
    const url = new URL(other.url)
    let closing: Promise<void> | undefined
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          method: "PUT",
          path: "/api/v1/articles/art_a14",
          // The server answers 100 Continue once it has read the headers: the request is then in flight.
          headers: {
            authorization: `Bearer ${KEYS.a}`,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
            expect: "100-continue",
          },
        },
        (res) => {
          let text = ""
          res.on("data", (d) => (text += d.toString()))
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }))
        },
      )
      req.on("error", reject)
      req.on("continue", () => {
        // Shutdown starts while the body is still unsent; the body follows only after it began.
        closing = other.server.close()
        req.write(body.slice(0, 10), () => req.end(body.slice(10)))
      })
      req.flushHeaders()
    })
    const done = await response
    expect(closing).toBeDefined()
    expect(done.status).toBe(200)
    expect(JSON.parse(done.text).article.title).toBe("Finished during shutdown")
    await closing
    await expect(fetch(`${other.url}/healthz`)).rejects.toThrow()
    await other.close()
  })

  it("should start with npm start's entry point and exit cleanly on SIGTERM", async () => {
    const db = await createDatabase()
    try {
      const child = spawn(process.execPath, ["apps/server/main.ts"], {
        cwd: new URL("../../", import.meta.url).pathname,
        env: { ...process.env, PORT: "0", HOST: "127.0.0.1", DATABASE_URL: db.url, SEED_DEMO: "false", DATA_DIR: scratchDir() },
        stdio: ["ignore", "pipe", "pipe"],
      })
      const { base } = await listeningOn(child)
      expect((await fetch(`${base}/readyz`)).status).toBe(200)
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      child.kill("SIGTERM")
      expect(await exited).toBe(0)
    } finally {
      await db.drop()
    }
  })
})

describe("npm start", () => {
  it("should stop the server, drained, when the npm start process gets SIGTERM (as a process manager sends it)", async () => {
    const db = await createDatabase()
    try {
      // npm runs the script under `sh -c`, which (dash) kept the server running once it was
      // signalled itself: the script must `exec` the server, so the signal npm forwards reaches it.
      const child = spawn("npm", ["start", "--silent"], {
        cwd: new URL("../../", import.meta.url).pathname,
        env: { ...process.env, PORT: "0", HOST: "127.0.0.1", DATABASE_URL: db.url, SEED_DEMO: "false", DATA_DIR: scratchDir(), LOG_FORMAT: "json" },
        stdio: ["ignore", "pipe", "pipe"],
      })
      const { base, output } = await listeningOn(child)
      expect((await fetch(`${base}/readyz`)).status).toBe(200)
      const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
      child.kill("SIGTERM")
      await exited
      // the server itself drained and stopped: its port answers no more
      const gone = await eventually(
        () => fetch(`${base}/healthz`).then(() => false, () => true),
        (refused) => refused,
      )
      expect(gone).toBe(true)
      expect(output()).toContain("SIGTERM: draining in-flight requests")
    } finally {
      await db.drop()
    }
  })
})

describe("database unavailable", () => {
  it("should answer 503 unavailable with Retry-After and fail /readyz when the database is gone", async () => {
    const db = await createDatabase()
    const { startServer } = await import("../../apps/server/server.ts")
    const server = await startServer({
      env: { PORT: "0", HOST: "127.0.0.1", DATABASE_URL: db.url, SEED_DEMO: "false", DATA_DIR: scratchDir() },
      quiet: true,
    })
    try {
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
      await db.drop()
      const res = await fetch(`${server.url}/api/v1/sites`, { headers: { authorization: `Bearer ${KEYS.a}` } })
      expect(res.status).toBe(503)
      const body = await res.json()
      expect(body.code).toBe("unavailable")
      expect(res.headers.get("retry-after")).toMatch(/^\d+$/)
      expect((await fetch(`${server.url}/readyz`)).status).toBe(503)
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200)
    } finally {
      await server.close()
      await db.drop()
    }
  })

  it("should answer the pages an HTML error page, 503 with Retry-After, while the database is gone, and serve them again once it is back", async () => {
    const db = await createTestDatabase()
    const { proxy, url } = await startPostgresProxy(db.url)
    const { startServer } = await import("../../apps/server/server.ts")
    const { importData } = await import("@content-site/core")
    const server = await startServer({
      env: { PORT: "0", HOST: "127.0.0.1", DATABASE_URL: url, SEED_DEMO: "false", DATA_DIR: scratchDir() },
      quiet: true,
    })
    try {
      await server.runtime.runPromise(importData(fixture()))
      const browser = new Browser()
      const signInPage = await (await browser.request(`${server.url}/`)).text()
      const csrfOf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? ""
      const signedIn = await browser.request(`${server.url}/`, { form: { _csrf: csrfOf(signInPage), email: "owner-a@example.com", password: "password-a-123", next: "/sites" } })
      expect(signedIn.status).toBe(303)
      const articlePage = await browser.request(`${server.url}/articles/art_a1`)
      expect(articlePage.status).toBe(200)
      const csrf = csrfOf(await articlePage.text())
      await proxy.cut("refuse")
      const answers = [
        await browser.request(`${server.url}/articles/art_a1`),
        await browser.request(`${server.url}/articles/art_a1/edit`, { form: { _csrf: csrf, account: "acc_a", revision: "1", title: "During the outage", body: "<p>Written <b>during</b> the outage</p>", reason: "Typed & lost?" } }),
      ]
      const pages: Array<string> = []
      for (const res of answers) {
        expect(res.status).toBe(503)
        expect(res.headers.get("content-type")).toMatch(/^text\/html/)
        expect(res.headers.get("retry-after")).toMatch(/^\d+$/)
        pages.push(await res.text())
        expect(pages.at(-1)).toContain("The database cannot answer now")
      }
      // the edit's text, which cannot be kept as a draft now, is on the page to copy (escaped), the view's page has none
      expect(pages[1]).toContain('<h2 id="typed-title">Your text</h2>')
      // (not "not saved": a save whose connection dropped may have committed)
      expect(pages[1]).toContain("It may or may not have been saved")
      expect(pages[1]).not.toContain("Your text, not saved")
      expect(pages[1]).toContain("&lt;p&gt;Written &lt;b&gt;during&lt;/b&gt; the outage&lt;/p&gt;</textarea>")
      expect(pages[1]).toContain("During the outage</textarea>")
      expect(pages[1]).toContain("Typed &amp; lost?</textarea>")
      expect(pages[0]).not.toContain('id="typed-title"')
      await proxy.restore()
      await eventually(async () => (await browser.request(`${server.url}/articles/art_a1`)).status, (status) => status === 200, 15_000)
    } finally {
      await server.close()
      await proxy.close()
      await db.drop()
    }
  })
})
