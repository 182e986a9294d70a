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
