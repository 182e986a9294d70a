/** The hosts as processes: the addresses they announce, and how they stop on a signal. */
import { type IncomingMessage, request } from "node:http"
import { createServer } from "node:net"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { createTempDir } from "../../../test/support/databases.ts"
import { spawnNode, waitForLine } from "../../../test/support/processes.ts"

/** A port free on 127.0.0.1 now (PUBLIC_URL must name the port before the host starts). */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })

/** One request to 127.0.0.1:`port` (whatever `Host` it names); resolves with the answer's status and headers. */
const send = (port: number, method: string, path: string, headers: Record<string, string | number>, body?: Buffer) =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path, headers, agent: false }, (res) => {
      let text = ""
      res.on("data", (d: Buffer) => (text += d.toString()))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }))
    })
    req.on("error", reject)
    req.end(body)
  })

// Each starts a Node process with the embedded database: on a loaded machine that has taken 20 s. A wait, not a speed check.
describe("the hosts as processes", { timeout: 120_000 }, () => {
  const temp = createTempDir("cs-hosts-")
  afterAll(() => temp.remove())

  it("should announce the MCP-only host's endpoint under PUBLIC_URL, where it answers (not the listening address, whose Host it refuses)", async () => {
    const port = await freePort()
    const child = spawnNode("apps/mcp-host/main.ts", [], {
      PORT: String(port),
      HOST: "127.0.0.1",
      PUBLIC_URL: `http://localhost:${port}`,
      DATA_DIR: join(temp.dir, "mcp"),
      DATABASE_URL: "",
      LOG_FORMAT: "json",
    })
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
    try {
      const line = await waitForLine(child, /MCP connector is listening on /)
      const announced = new URL(/listening on (http:\/\/\S+\/mcp)/.exec((JSON.parse(line) as { msg: string }).msg)?.[1] ?? "http://unannounced/")
      // (sent to the listening socket, with the announced address's Host, as a client resolving it does)
      const answer = await send(port, "POST", announced.pathname, { Host: announced.host, "Content-Type": "application/json", Accept: "application/json, text/event-stream" }, Buffer.from("{}"))
      expect(answer.status).toBe(401)
      expect(answer.headers["www-authenticate"]).toContain(`resource_metadata="http://localhost:${port}/.well-known/oauth-protected-resource/mcp"`)
    } finally {
      child.kill("SIGTERM")
      await exited
    }
  })

  it("should finish a write whose body is still arriving at SIGTERM, answer it with Connection: close, and exit 0", async () => {
    const port = await freePort()
    const child = spawnNode("apps/rest-host/main.ts", [], { PORT: String(port), HOST: "127.0.0.1", DATA_DIR: join(temp.dir, "rest"), DATABASE_URL: "", LOG_FORMAT: "json" })
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
    try {
      const key = /(cs_\w+)/.exec(await waitForLine(child, /Demo API key/))?.[1] ?? ""
      const title = "Saved while the host drains"
      // (JSON may end in spaces: a body large enough to be sent in two parts)
      const body = Buffer.from(JSON.stringify({ title, reason: "drain" }) + " ".repeat(200_000))
      let answered: (res: IncomingMessage) => void = () => {}
      const response = new Promise<IncomingMessage>((resolve) => (answered = resolve))
      const put = request(
        {
          host: "127.0.0.1",
          port,
          method: "PUT",
          path: "/api/v1/articles/art_demo_02",
          // (100 Continue: the host has the request in hand before the signal)
          headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", "Content-Length": body.length, Expect: "100-continue" },
        },
        answered,
      )
      const failed = new Promise<never>((_, reject) => put.on("error", reject))
      await Promise.race([new Promise((resolve) => put.once("continue", resolve)), failed])
      put.write(body.subarray(0, 100_000))
      const draining = waitForLine(child, /SIGTERM: draining/)
      child.kill("SIGTERM")
      await draining
      put.end(body.subarray(100_000))
      const res = await Promise.race([response, failed])
      let text = ""
      for await (const chunk of res) text += String(chunk)
      expect(res.statusCode).toBe(200)
      expect((JSON.parse(text) as { article: { title: string } }).article.title).toBe(title)
      // (the host is stopping: the client is told not to send another request on this connection)
      expect(res.headers.connection).toBe("close")
      expect(await exited).toBe(0)
    } finally {
      child.kill("SIGTERM")
      await exited
    }
  })

  it("should end at once on a second signal while it drains (Ctrl-C twice), not wait out the grace for a request in flight", async () => {
    const port = await freePort()
    // (a grace longer than the test may wait: only the second signal can end it in time)
    const child = spawnNode("apps/rest-host/main.ts", [], { PORT: String(port), HOST: "127.0.0.1", DATA_DIR: join(temp.dir, "twice"), DATABASE_URL: "", LOG_FORMAT: "json", SHUTDOWN_GRACE_MS: "600000" })
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
    try {
      const key = /(cs_\w+)/.exec(await waitForLine(child, /Demo API key/))?.[1] ?? ""
      // a request whose body never ends: in flight for the whole drain
      const put = request({
        host: "127.0.0.1",
        port,
        method: "PUT",
        path: "/api/v1/articles/art_demo_02",
        headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", "Content-Length": 1000, Expect: "100-continue" },
      })
      put.on("error", () => undefined)
      await new Promise((resolve) => put.once("continue", resolve))
      put.write('{"title":')
      const draining = waitForLine(child, /SIGINT: draining/)
      child.kill("SIGINT")
      await draining
      const again = waitForLine(child, /SIGINT again: stopping now/)
      child.kill("SIGINT")
      expect(JSON.parse(await again)).toMatchObject({ level: "warn", signal: "SIGINT" })
      expect(await exited).toBe(1)
    } finally {
      child.kill("SIGKILL")
      await exited
    }
  })

  it("should, on SIGTERM while it starts (migrating a new database), finish starting, then stop as from any signal and exit 0", async () => {
    const dataDir = join(temp.dir, "starting")
    const child = spawnNode("apps/server/main.ts", [], { PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, DATABASE_URL: "", LOG_FORMAT: "json" })
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve))
    try {
      // (the migrations are logged as they are applied, before the demo account is seeded)
      await waitForLine(child, /"migrations":/)
      const draining = waitForLine(child, /SIGTERM: draining/)
      child.kill("SIGTERM")
      await draining
      expect(await exited).toBe(0)
    } finally {
      child.kill("SIGTERM")
      await exited
    }
  })
})
