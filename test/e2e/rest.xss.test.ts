import { isStorableText } from "@content-site/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import dompurify from "../../core/test/fixtures/corpora/dompurify-expect.json" with { type: "json" }
import owasp from "../../core/test/fixtures/corpora/owasp-xss-filter-evasion.json" with { type: "json" }
import { unsafeParts } from "../../core/test/html/helpers.ts"
import { json, startTestServer, type TestServer } from "./helpers.ts"

// The full corpora (about 2000 inputs) run against the sanitiser in the core tests; here every
// OWASP and DOMPurify payload (about 500) goes through PUT over HTTP and the stored body is checked.
let t: TestServer
beforeAll(async () => {
  t = await startTestServer({ RATE_LIMIT_PER_MINUTE: "100000", DAILY_EDIT_LIMIT: "100000" })
})
afterAll(async () => {
  await t?.close()
})

const payloads = [...owasp.map((e) => e.payload), ...dompurify.map((e) => e.payload)]
const articles = ["art_a16", "art_a17", "art_a18", "art_a19", "art_a20", "art_a21", "art_a22", "art_a23"]

describe("XSS corpora through PUT /articles/{id}", () => {
  it("should store every payload free of executable constructs", async () => {
    const failures: Array<string> = []
    let next = 0
    const worker = async (articleId: string) => {
      while (next < payloads.length) {
        const payload = payloads[next++] as string
        const res = await t.api(`/api/v1/articles/${articleId}`, {
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ body: `<p>x</p>${payload}` }),
        })
        // Text PostgreSQL cannot store (a NUL, as in `java\0script:`) is refused whole: nothing is stored.
        if (!isStorableText(payload)) {
          const refused = res.status === 400 ? ((await json(res)) as { code: string }).code : String(res.status)
          if (refused !== "invalid_request") failures.push(`${refused} (expected 400 invalid_request) ${JSON.stringify(payload)}`)
          continue
        }
        if (res.status !== 200) {
          failures.push(`${res.status} ${JSON.stringify(payload)}`)
          continue
        }
        const stored = (await json(res)).article.body as string
        const problems = unsafeParts(stored)
        if (problems.length > 0) failures.push(`${JSON.stringify(payload)}: ${problems.join(", ")}`)
      }
    }
    await Promise.all(articles.map(worker))
    expect(failures).toEqual([])
    for (const id of articles) {
      const stored = (await json(await t.api(`/api/v1/articles/${id}`))).body as string
      expect(unsafeParts(stored)).toEqual([])
    }
  }, 120_000)
})
