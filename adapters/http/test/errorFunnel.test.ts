import { InvalidRequest, NotFound, RateLimited } from "@content-site/core"
import Koa from "koa"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "vitest"
import { errorFunnel, requestId, securityHeaders } from "../src/index.ts"

const serve = async (thrown: () => unknown) => {
  const app = new Koa()
  const defects: Array<string> = []
  app.use(requestId())
  app.use(securityHeaders())
  app.use(errorFunnel({ publicUrl: "https://cs.test", logDefect: (_id, detail) => defects.push(detail) }))
  app.use(() => {
    throw thrown()
  })
  const server = createServer(app.callback())
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`)
  const body = (await res.json()) as Record<string, unknown>
  await new Promise((resolve) => server.close(resolve))
  return { res, body, defects }
}

const httpError = (status: number, message: string) => Object.assign(new Error(message), { status, expose: status < 500 })

describe("errorFunnel", () => {
  it("should answer a core error with its contract code as problem+json", async () => {
    const { res, body } = await serve(() => new NotFound({ resource: "article", id: "a" }))
    expect(res.status).toBe(404)
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/)
    expect(body).toMatchObject({ code: "not_found", status: 404, type: "https://cs.test/problems/not_found" })
    expect(body.request_id).toBe(res.headers.get("x-request-id"))
    expect(res.headers.get("x-content-type-options")).toBe("nosniff")
  })

  it("should add Retry-After to limit errors and keep the field errors of invalid requests", async () => {
    const limited = await serve(() => new RateLimited({ limit: 5, retryAfterSeconds: 17 }))
    expect(limited.res.headers.get("retry-after")).toBe("17")
    expect(limited.body.code).toBe("rate_limited")
    const invalid = await serve(() => new InvalidRequest({ detail: "bad", errors: [{ path: "page", message: "no" }] }))
    expect(invalid.body.errors).toEqual([{ path: "page", message: "no" }])
  })

  it("should map errors of body parsers (http-errors, multer) to the contract's codes", async () => {
    expect((await serve(() => httpError(413, "request entity too large"))).body.code).toBe("payload_too_large")
    expect((await serve(() => httpError(415, "unsupported charset"))).body.code).toBe("unsupported_media_type")
    expect((await serve(() => httpError(400, "invalid JSON"))).body.code).toBe("invalid_request")
    const multer = Object.assign(new Error("File too large"), { name: "MulterError", code: "LIMIT_FILE_SIZE", field: "image" })
    expect((await serve(() => multer)).body.code).toBe("payload_too_large")
    const count = Object.assign(new Error("Too many files"), { name: "MulterError", code: "LIMIT_FILE_COUNT" })
    expect((await serve(() => count)).body.code).toBe("invalid_request")
    const unnamed = Object.assign(new Error("Field name missing"), { name: "MulterError", code: "MISSING_FIELD_NAME" })
    expect((await serve(() => unnamed)).body.code).toBe("invalid_request")
  })

  it("should answer a defect with 500 internal, no stack and no message, and report it", async () => {
    const { res, body, defects } = await serve(() => new TypeError("secret internal detail"))
    expect(res.status).toBe(500)
    expect(body.code).toBe("internal")
    expect(JSON.stringify(body)).not.toContain("secret")
    expect(JSON.stringify(body)).not.toMatch(/\.ts:\d+/)
    expect(defects.join("\n")).toContain("secret internal detail")
    expect((await serve(() => httpError(502, "upstream"))).body.code).toBe("internal")
  })
})

describe("errorFunnel with a client that goes away", () => {
  it("should not report a defect when the client closes the connection while its body is read", async () => {
    const app = new Koa()
    const defects: Array<string> = []
    let failed: ((value: unknown) => void) | undefined
    const failure = new Promise((resolve) => (failed = resolve))
    app.use(requestId())
    app.use(async (ctx, next) => {
      try {
        await next()
      } finally {
        failed?.(ctx.status)
      }
    })
    app.use(errorFunnel({ publicUrl: "https://cs.test", logDefect: (_id, detail) => defects.push(detail) }))
    let reading: (() => void) | undefined
    const bodyArriving = new Promise<void>((resolve) => (reading = resolve))
    app.use(async (ctx) => {
      // Read the body the way the adapters do: it never completes, the client hangs up.
      await new Promise((resolve, reject) => {
        ctx.req.on("data", () => reading?.())
        ctx.req.on("end", resolve)
        ctx.req.on("error", reject)
        ctx.req.on("aborted", () => reject(Object.assign(new Error("aborted"), { code: "ECONNRESET" })))
      })
    })
    const server = createServer(app.callback())
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { connect } = await import("node:net")
    const socket = connect((server.address() as AddressInfo).port, "127.0.0.1")
    await new Promise((resolve) => socket.once("connect", resolve))
    socket.write("POST /x HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":")
    // hang up once the handler is reading the body
    await bodyArriving
    socket.destroy()
    // noted as 499 (client closed request): nothing answered, no refusal
    expect(await failure).toBe(499)
    await new Promise((resolve) => server.close(resolve))
    expect(defects).toEqual([])
  })
})
