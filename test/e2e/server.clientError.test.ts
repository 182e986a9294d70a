import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "./helpers.ts"

// Requests Node's own HTTP parser refuses never reach the app: they are answered all the same as
// problems with an X-Request-Id, as the docs promise of every response.
let t: TestServer
beforeAll(async () => {
  t = await startTestServer({}, { storage: "memory", seed: false })
})
afterAll(async () => {
  await t?.close()
})

/** Sends raw bytes and reads the whole answer until the server closes the connection. */
const raw = (bytes: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const { port, hostname } = new URL(t.url)
    const socket = connect(Number(port), hostname, () => socket.write(bytes))
    let out = ""
    socket.setEncoding("latin1")
    socket.on("data", (chunk: string) => (out += chunk))
    socket.on("end", () => resolve(out))
    socket.on("error", reject)
  })

const parse = (answer: string) => {
  const [head, body] = answer.split("\r\n\r\n", 2) as [string, string]
  const [statusLine, ...lines] = head.split("\r\n")
  const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]))
  return { status: Number(statusLine!.split(" ")[1]), headers, problem: JSON.parse(body) as Record<string, unknown> }
}

describe("requests the HTTP parser refuses", () => {
  it("should answer a control character in a header value with a 400 problem and its X-Request-Id", async () => {
    const answer = parse(await raw(`GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Bad: a\u0001b\r\n\r\n`))
    expect(answer.status).toBe(400)
    expect(answer.headers.get("content-type")).toBe("application/problem+json; charset=utf-8")
    expect(answer.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/)
    expect(answer.problem).toMatchObject({ status: 400, code: "invalid_request", request_id: answer.headers.get("x-request-id") })
  })

  it("should answer a malformed request line the same way", async () => {
    const answer = parse(await raw("GET\u0000 / HTTP/1.1\r\n\r\n"))
    expect(answer.status).toBe(400)
    expect(answer.problem["request_id"]).toBe(answer.headers.get("x-request-id"))
  })

  it("should answer an HTTP/1.1 request without Host (RFC 9112: a 400) with a problem and its X-Request-Id, not Node's bare status line", async () => {
    for (const path of ["/api/v1/sites", "/healthz", "/mcp"]) {
      const answer = parse(await raw(`GET ${path} HTTP/1.1\r\nConnection: close\r\n\r\n`))
      expect(answer.status, path).toBe(400)
      expect(answer.headers.get("content-type")).toBe("application/problem+json; charset=utf-8")
      expect(answer.headers.get("x-content-type-options")).toBe("nosniff")
      expect(answer.problem).toMatchObject({ status: 400, code: "invalid_request", request_id: answer.headers.get("x-request-id") })
      expect(String(answer.problem["detail"])).toMatch(/Host/)
    }
    // HTTP/1.0 has no Host requirement: such a request is served
    expect((await raw("GET /healthz HTTP/1.0\r\n\r\n")).split("\r\n")[0]).toBe("HTTP/1.1 200 OK")
  })

  it("should answer an expectation other than 100-continue with a 417 problem, not Node's bare status line", async () => {
    const answer = parse(await raw(`GET /api/v1/sites HTTP/1.1\r\nHost: localhost\r\nExpect: teapot\r\nConnection: close\r\n\r\n`))
    expect(answer.status).toBe(417)
    expect(answer.headers.get("content-type")).toBe("application/problem+json; charset=utf-8")
    expect(answer.problem).toMatchObject({ status: 417, code: "expectation_failed", request_id: answer.headers.get("x-request-id") })
  })

  it("should answer other methods on /healthz and /readyz with a 405 problem and Allow: GET, HEAD (OPTIONS: 204)", async () => {
    for (const path of ["/healthz", "/readyz"]) {
      const answer = parse(await raw(`POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`))
      expect(answer.status, path).toBe(405)
      expect(answer.headers.get("allow")).toBe("GET, HEAD")
      expect(answer.problem).toMatchObject({ status: 405, code: "method_not_allowed", request_id: answer.headers.get("x-request-id") })
      const options = await raw(`OPTIONS ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`)
      expect(options, path).toMatch(/^HTTP\/1\.1 204 /)
      expect(options).toMatch(/\r\nAllow: GET, HEAD\r\n/i)
    }
  })

  it("should answer other methods on a static file with a 405 problem and Allow: GET, HEAD (OPTIONS: 204); an unknown one stays a 404", async () => {
    for (const method of ["POST", "PUT", "DELETE"]) {
      const answer = parse(await raw(`${method} /static/app.css HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`))
      expect(answer.status, method).toBe(405)
      expect(answer.headers.get("allow")).toBe("GET, HEAD")
      expect(answer.problem).toMatchObject({ status: 405, code: "method_not_allowed", request_id: answer.headers.get("x-request-id") })
    }
    const options = await raw("OPTIONS /static/app.css HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    expect(options).toMatch(/^HTTP\/1\.1 204 /)
    expect(options).toMatch(/\r\nAllow: GET, HEAD\r\n/i)
    const unknown = parse(await raw("POST /static/nope.css HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
    expect(unknown.status).toBe(404)
  })

  it("should answer CONNECT with a 405 problem instead of closing the connection without a word", async () => {
    const answer = parse(await raw("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"))
    expect(answer.status).toBe(405)
    expect(answer.problem).toMatchObject({ status: 405, code: "method_not_allowed", request_id: answer.headers.get("x-request-id") })
  })

  it("should answer headers over Node's limit with a 431 problem", async () => {
    const answer = parse(await raw(`GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`))
    expect(answer.status).toBe(431)
    expect(answer.problem).toMatchObject({ status: 431, code: "request_header_fields_too_large" })
  })
})
