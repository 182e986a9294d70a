import { rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { json, scratchDirs, startTestServer, type TestServer } from "./helpers.ts"

const dirs = scratchDirs()
const dataDir = dirs.make()
let t: TestServer
beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PER_MINUTE: "100000", DATA_DIR: dataDir })
})
afterAll(async () => {
  await t?.close()
  await dirs.removeAll()
})

describe("OpenAPI response headers", () => {
  it("should document the RateLimit-* headers a 503 of an authenticated call carries", async () => {
    const doc = await json(await fetch(`${t.url}/api/v1/openapi.json`))
    // The media store cannot write: the upload, past the gate, is refused 503 `unavailable`.
    await rm(join(dataDir, "media"), { recursive: true, force: true })
    await writeFile(join(dataDir, "media"), "not a folder")
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#f00" } }).png().toBuffer()
    const form = new FormData()
    form.set("image", new Blob([png], { type: "image/png" }), "x.png")
    const res = await t.api("/api/v1/articles/art_a1/featured-image", { method: "POST", body: form })
    expect(res.status).toBe(503)
    expect((await json(res)).code).toBe("unavailable")
    const documented = Object.keys(doc.paths["/articles/{id}/featured-image"].post.responses["503"].headers).map((h) => h.toLowerCase())
    for (const name of ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "retry-after", "x-request-id"]) {
      expect(res.headers.get(name), name).not.toBeNull()
      expect(documented, name).toContain(name)
    }
  })
})
