/**
 * Bodies over a size limit get their 413 problem as a response the client reads, even while it
 * is still sending: Node's fetch (undici), a client that reads while it sends and asks
 * `Expect: 100-continue` as curl does, and a plain client that reads nothing until it has written
 * its whole request, as simple HTTP clients do.
 */
import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { KEYS, startTestServer, type TestServer } from "./helpers.ts"

let t: TestServer
beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PER_MINUTE: "100000" })
})
afterAll(async () => {
  await t?.close()
})

const MiB = 1024 * 1024
const BOUNDARY = "----cs-oversize-boundary"

/** A multipart form with one `image` file part of `size` bytes. */
const multipartOf = (size: number): Buffer =>
  Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="image"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`),
    Buffer.alloc(size, 0x42),
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ])

/** A JSON edit whose body is `size` characters long (over the PUT body limit). */
const jsonOf = (size: number): Buffer => Buffer.from(JSON.stringify({ body: `<p>${"x".repeat(size)}</p>` }))

interface RawAnswer {
  /** The error a write met (EPIPE, ECONNRESET), if any. */
  readonly writeError: string | null
  readonly status: number
  readonly head: string
  readonly body: string
}

/**
 * Sends a request over a plain TCP connection and reads nothing until every byte of it is
 * written; then reads the answer to the end of the connection (it asks for `Connection: close`,
 * as a one-request client does). `chunked` sends the body without
 * a declared length, so the server can only find it too large while reading.
 */
const rawRequest = (path: string, contentType: string, body: Buffer, options: { chunked: boolean; method?: string }) =>
  new Promise<RawAnswer>((resolve) => {
    const url = new URL(t.url)
    const socket = connect(Number(url.port), url.hostname)
    socket.pause()
    let writeError: string | null = null
    const received: Array<Buffer> = []
    socket.on("error", (e: NodeJS.ErrnoException) => {
      writeError ??= e.code ?? e.message
    })
    socket.on("close", () => {
      const text = Buffer.concat(received).toString("utf8")
      const split = text.indexOf("\r\n\r\n")
      const head = split < 0 ? text : text.slice(0, split)
      resolve({ writeError, status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body: split < 0 ? "" : text.slice(split + 4) })
    })
    const write = (part: Buffer | string) =>
      new Promise<boolean>((done) => {
        if (socket.destroyed) return done(false)
        socket.write(part, (err) => done(err === undefined || err === null))
      })
    socket.on("connect", async () => {
      const framing = options.chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${body.length}`
      let ok = await write(
        `${options.method ?? "POST"} ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${KEYS.a}\r\n` +
          `Content-Type: ${contentType}\r\n${framing}\r\nConnection: close\r\n\r\n`,
      )
      const step = 256 * 1024
      for (let at = 0; ok && at < body.length; at += step) {
        const part = body.subarray(at, at + step)
        ok = options.chunked ? await write(Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from("\r\n")])) : await write(part)
      }
      if (ok && options.chunked) await write("0\r\n\r\n")
      // Only now, with the whole request sent, does this client read the answer.
      socket.on("data", (d: Buffer) => received.push(d))
      socket.resume()
    })
  })

/** The answer was read in full, and no write failed on the way (the connection may close after it). */
const expectReadable413 = (answer: RawAnswer) => {
  expect(answer.writeError).toBeNull()
  expect(answer.status).toBe(413)
  expect(answer.head).toMatch(/\r\ncontent-type: application\/problem\+json/i)
  expect(JSON.parse(answer.body).code).toBe("payload_too_large")
}

const IMAGE = "/api/v1/articles/art_a10/featured-image"
const ARTICLE = "/api/v1/articles/art_a08"

describe("413 to a client that reads only after sending everything", () => {
  it("should answer an image over 10 MiB with a declared length", async () => {
    expectReadable413(await rawRequest(IMAGE, `multipart/form-data; boundary=${BOUNDARY}`, multipartOf(14 * MiB), { chunked: false }))
  })

  it("should answer an image over 10 MiB found while streaming (no declared length)", async () => {
    expectReadable413(await rawRequest(IMAGE, `multipart/form-data; boundary=${BOUNDARY}`, multipartOf(14 * MiB), { chunked: true }))
  })

  it("should answer a JSON body over its limit, declared and streamed", async () => {
    expectReadable413(await rawRequest(ARTICLE, "application/json", jsonOf(6 * MiB), { chunked: false, method: "PUT" }))
    expectReadable413(await rawRequest(ARTICLE, "application/json", jsonOf(6 * MiB), { chunked: true, method: "PUT" }))
  })

  it("should still serve the next request on a new connection and keep the article", async () => {
    const res = await t.api(ARTICLE)
    expect(res.status).toBe(200)
    expect((await res.json()).revision).toBe(1)
  })
})

describe("413 to Node's fetch", () => {
  const problemOf = async (res: Response) => {
    expect(res.status).toBe(413)
    return (await res.json()) as { code: string }
  }

  it("should answer a multipart image over 10 MiB", async () => {
    const form = new FormData()
    form.append("image", new Blob([new Uint8Array(14 * MiB)], { type: "image/png" }), "big.png")
    expect((await problemOf(await t.api(IMAGE, { method: "POST", body: form }))).code).toBe("payload_too_large")
  })

  it("should answer a JSON body over its limit", async () => {
    const res = await t.api(ARTICLE, { method: "PUT", headers: { "content-type": "application/json" }, body: jsonOf(6 * MiB).toString("utf8") })
    expect((await problemOf(res)).code).toBe("payload_too_large")
  })

  it("should answer an upload streamed without a declared length while it is still sending", async () => {
    const body = multipartOf(14 * MiB)
    let at = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= body.length) return controller.close()
        controller.enqueue(body.subarray(at, at + 64 * 1024))
        at += 64 * 1024
      },
    })
    const res = await t.api(IMAGE, {
      method: "POST",
      headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
      body: stream,
      duplex: "half",
    } as RequestInit)
    expect((await problemOf(res)).code).toBe("payload_too_large")
  })
})

/**
 * Sends a request as curl does: reading the answer while it writes, asking `Expect: 100-continue`
 * first when told to (curl does for bodies over 1 MiB) and then waiting up to a second for a
 * `100 Continue` or a final answer before it sends the body anyway, and stopping its sending once
 * a final answer has come. It resolves with that answer, read to the end of the connection.
 */
const readingWhileSending = (path: string, contentType: string, body: Buffer, options: { expectContinue: boolean; chunked: boolean; method?: string }) =>
  new Promise<RawAnswer & { complete: boolean; sentAll: boolean }>((resolve) => {
    const url = new URL(t.url)
    const socket = connect(Number(url.port), url.hostname)
    let writeError: string | null = null
    const received: Array<Buffer> = []
    let finalAnswer = false
    let continued!: () => void
    const mayContinue = new Promise<void>((r) => (continued = r))
    let sentAll = false
    const textSoFar = () => Buffer.concat(received).toString("latin1")
    socket.on("data", (d: Buffer) => {
      received.push(d)
      // Interim 100 answers end at their blank line; anything else is the final answer.
      const text = textSoFar().replace(/^(HTTP\/1\.1 100[^\r]*\r\n\r\n)+/, "")
      if (textSoFar().startsWith("HTTP/1.1 100")) continued()
      if (/^HTTP\/1\.1 [2-5]\d\d/.test(text)) {
        finalAnswer = true
        continued()
      }
    })
    socket.on("error", (e: NodeJS.ErrnoException) => {
      writeError ??= e.code ?? e.message
    })
    socket.on("close", () => {
      const text = Buffer.concat(received).toString("utf8").replace(/^(HTTP\/1\.1 100[^\r]*\r\n\r\n)+/, "")
      const split = text.indexOf("\r\n\r\n")
      const head = split < 0 ? text : text.slice(0, split)
      const answerBody = split < 0 ? "" : text.slice(split + 4)
      const declared = /\r\ncontent-length: (\d+)/i.exec(head)?.[1]
      resolve({
        writeError,
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0),
        head,
        body: answerBody,
        complete: declared !== undefined && Buffer.byteLength(answerBody) === Number(declared),
        sentAll,
      })
    })
    const write = (part: Buffer | string) =>
      new Promise<boolean>((done) => {
        if (socket.destroyed || finalAnswer) return done(false)
        socket.write(part, (err) => done(err === undefined || err === null))
      })
    socket.on("connect", async () => {
      const framing = options.chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${body.length}`
      const expectLine = options.expectContinue ? "Expect: 100-continue\r\n" : ""
      let ok = await write(
        `${options.method ?? "POST"} ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${KEYS.a}\r\n` +
          `Content-Type: ${contentType}\r\n${framing}\r\n${expectLine}Connection: close\r\n\r\n`,
      )
      if (options.expectContinue) await Promise.race([mayContinue, new Promise((r) => setTimeout(r, 1_000))])
      const step = 64 * 1024
      for (let at = 0; ok && at < body.length; at += step) {
        const part = body.subarray(at, at + step)
        ok = options.chunked ? await write(Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from("\r\n")])) : await write(part)
      }
      if (ok && options.chunked) ok = await write("0\r\n\r\n")
      sentAll = ok
    })
  })

describe("413 to a client that reads while it sends (as curl does)", () => {
  const expect413 = (answer: RawAnswer & { complete: boolean; sentAll: boolean }) => {
    expect(answer.status).toBe(413)
    expect(answer.head).toMatch(/\r\ncontent-type: application\/problem\+json/i)
    expect(answer.complete).toBe(true)
    expect(JSON.parse(answer.body).code).toBe("payload_too_large")
  }

  it("should answer a multipart image over 10 MiB, with and without Expect: 100-continue", async () => {
    const form = multipartOf(14 * MiB)
    const asked = await readingWhileSending(IMAGE, `multipart/form-data; boundary=${BOUNDARY}`, form, { expectContinue: true, chunked: false })
    expect413(asked)
    // The declared length alone is over the limit: the answer comes before the body is sent.
    expect(asked.sentAll).toBe(false)
    expect413(await readingWhileSending(IMAGE, `multipart/form-data; boundary=${BOUNDARY}`, form, { expectContinue: false, chunked: false }))
  })

  it("should answer a JSON body over its limit, with a declared length and chunked", async () => {
    const json = jsonOf(6 * MiB)
    expect413(await readingWhileSending(ARTICLE, "application/json", json, { expectContinue: false, chunked: false, method: "PUT" }))
    expect413(await readingWhileSending(ARTICLE, "application/json", json, { expectContinue: false, chunked: true, method: "PUT" }))
    expect413(await readingWhileSending(ARTICLE, "application/json", json, { expectContinue: true, chunked: true, method: "PUT" }))
  })

  it("should keep the article after the refused bodies", async () => {
    const res = await t.api(ARTICLE)
    expect(res.status).toBe(200)
    expect((await res.json()).revision).toBe(1)
  })
})
