/**
 * The start-up window: the server listens before its database is open, so a request can arrive
 * while it migrates or loads keys. It must be answered at once (503 `unavailable`, `/healthz`
 * 200), never left without an answer.
 */
import { createServer, type AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer } from "../../apps/server/server.ts"
import { eventually } from "../support/eventually.ts"
import { startPostgresProxy, type TcpProxy } from "../support/tcpProxy.ts"
import { createDatabase, scratchDir } from "./helpers.ts"

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

let db: { url: string; drop: () => Promise<void> }
let proxy: TcpProxy
let proxiedUrl: string
beforeAll(async () => {
  db = await createDatabase()
  ;({ proxy, url: proxiedUrl } = await startPostgresProxy(db.url))
})
afterAll(async () => {
  await proxy?.close()
  await db?.drop()
})

describe("a request during start-up", () => {
  it("should be answered 503 unavailable while the database is not open yet, and the start that fails closes the port", async () => {
    // The database accepts connections and never answers: the start waits on it.
    await proxy.cut("blackhole")
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    let settled = false
    const starting = startServer({
      env: { PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: proxiedUrl, DATA_DIR: scratchDir(), SEED_DEMO: "false" },
      quiet: true,
    }).finally(() => {
      settled = true
    })
    const failure = starting.then(
      () => null,
      (err: unknown) => err,
    )

    const ready = await eventually(
      () => fetch(`${base}/readyz`).catch(() => null),
      (res) => res !== null,
      10_000,
    )
    expect(ready?.status).toBe(503)
    expect(await ready?.json()).toEqual({ status: "unavailable" })
    expect(ready?.headers.get("retry-after")).toBe("1")

    const api = await fetch(`${base}/api/v1/sites`, { headers: { authorization: "Bearer cs_x" } })
    expect(api.status).toBe(503)
    expect(api.headers.get("content-type")).toMatch(/^application\/problem\+json/)
    expect(await api.json()).toMatchObject({ status: 503, code: "unavailable", type: `${base}/problems/unavailable`, request_id: api.headers.get("x-request-id") })
    // the security headers of every API answer, before the app is there too
    expect(api.headers.get("x-content-type-options")).toBe("nosniff")
    expect(api.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")

    const put = await fetch(`${base}/api/v1/articles/art_1`, { method: "PUT", headers: { "content-type": "application/json" }, body: "{}" })
    expect(put.status).toBe(503)

    const health = await fetch(`${base}/healthz`)
    expect(health.status).toBe(200)
    // All of this was answered while the start was still waiting for the database.
    expect(settled).toBe(false)

    expect(await failure).toBeInstanceOf(Error)
    const after = await fetch(`${base}/readyz`).then(
      () => "answered",
      () => "refused",
    )
    expect(after).toBe("refused")
  })

  it("should answer every request once started", async () => {
    await proxy.restore()
    const port = await freePort()
    const server = await startServer({
      env: { PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: proxiedUrl, DATA_DIR: scratchDir(), SEED_DEMO: "false" },
      quiet: true,
    })
    try {
      const ready = await fetch(`${server.url}/readyz`)
      expect(ready.status).toBe(200)
      expect((await fetch(`${server.url}/api/v1/sites`)).status).toBe(401)
    } finally {
      await server.close()
    }
  })
})

describe("a database outage after start-up", () => {
  // With the counters in Redis, the OAuth server's own store is the first to find the database gone.
  it("should answer the OAuth endpoints 503 temporarily_unavailable with Retry-After, not 500 server_error, and serve them again after", async () => {
    await proxy.restore()
    const port = await freePort()
    const server = await startServer({
      env: { PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: proxiedUrl, REDIS_URL: "redis://127.0.0.1:6379", DATA_DIR: scratchDir(), SEED_DEMO: "false", PUBLIC_URL: `http://127.0.0.1:${port}` },
      quiet: true,
    })
    const register = () =>
      fetch(`${server.url}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ client_name: "Outage probe", redirect_uris: ["http://127.0.0.1:9/callback"], token_endpoint_auth_method: "none" }),
      })
    const token = () =>
      fetch(`${server.url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "authorization_code", code: "code-from-before", client_id: "client-from-before", redirect_uri: "http://127.0.0.1:9/callback", code_verifier: "v".repeat(43) }).toString(),
      })
    try {
      expect((await register()).status).toBe(201)
      await proxy.cut("refuse")
      for (const answer of [await register(), await token()]) {
        expect(answer.status).toBe(503)
        expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0)
        expect(await answer.json()).toMatchObject({ error: "temporarily_unavailable" })
      }
      await proxy.restore()
      expect(await eventually(async () => (await register()).status, (status) => status === 201, 10_000)).toBe(201)
    } finally {
      await proxy.restore()
      await server.close()
    }
  })
})
