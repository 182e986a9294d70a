import sharp from "sharp"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { json, startTestServer, type TestServer } from "./helpers.ts"

// IMAGE_FETCH_ALLOW_PRIVATE=true (tests only) lets the fetcher reach this loopback image server.
let t: TestServer
let images: Server
let imageBase = ""
beforeAll(async () => {
  const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 10, g: 120, b: 200 } } }).jpeg().toBuffer()
  images = createServer((req, res) => {
    if (req.url === "/pic.jpg") {
      res.writeHead(200, { "content-type": "image/jpeg" }).end(jpeg)
    } else if (req.url === "/page.html") {
      res.writeHead(200, { "content-type": "text/html" }).end("<html>not an image</html>")
    } else {
      res.writeHead(404).end()
    }
  })
  await new Promise<void>((resolve) => images.listen(0, "127.0.0.1", resolve))
  imageBase = `http://127.0.0.1:${(images.address() as AddressInfo).port}`
  t = await startTestServer({ IMAGE_FETCH_ALLOW_PRIVATE: "true" })
})
afterAll(async () => {
  await t?.close()
  await new Promise((resolve) => images?.close(resolve))
})

const post = (body: unknown) =>
  t.api("/api/v1/articles/art_a15/featured-image", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })

describe("featured image from a URL", () => {
  it("should fetch, re-encode and store the image, keeping the alt text", async () => {
    const res = await post({ url: `${imageBase}/pic.jpg`, alt: "Blue" })
    expect(res.status).toBe(200)
    const body = await json(res)
    expect(body.article["featured image"]).toMatchObject({ alt: "Blue" })
    expect(body.article["featured image"].url.startsWith(`${t.url}/media/`)).toBe(true)
    expect(res.headers.get("etag")).toBe(`"art_a15-r${body.article.revision}"`)
    const media = await fetch(body.article["featured image"].url)
    expect(media.status).toBe(200)
    expect(media.headers.get("content-type")).toMatch(/^image\/(jpeg|webp|png|avif|gif)$/)
  })

  it("should answer a failed fetch with 422 image_fetch_failed and a non-image with 415", async () => {
    const missing = await post({ url: `${imageBase}/missing.jpg` })
    expect(missing.status).toBe(422)
    expect((await json(missing)).code).toBe("image_fetch_failed")
    const page = await post({ url: `${imageBase}/page.html` })
    expect(page.status).toBe(415)
    expect((await json(page)).code).toBe("unsupported_image")
  })
})
