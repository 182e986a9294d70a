/**
 * Every problem's `type` (`{base}/problems/<code>`) is a page a person can open (RFC 9457 3.1.1):
 * what the problem means and what to do, with the title and status the problem carries; unknown
 * codes are a 404 page.
 */
import { internalProblemKind, problemKinds } from "@content-site/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PROBLEM_DOCS } from "../../adapters/web/src/pages/problems.ts"
import { startTestServer, type TestServer } from "./helpers.ts"

let t: TestServer
beforeAll(async () => {
  t = await startTestServer({}, { storage: "memory" })
})
afterAll(async () => {
  await t?.close()
})

describe("the problem types' pages", () => {
  it("should explain every code the core answers, the defect's and the HTTP layer's own", () => {
    const codes = PROBLEM_DOCS.map((doc) => doc.code)
    for (const kind of [...Object.values(problemKinds), internalProblemKind, { code: "method_not_allowed" }, { code: "expectation_failed" }, { code: "request_timeout" }, { code: "request_header_fields_too_large" }]) {
      expect(codes).toContain(kind.code)
    }
    for (const doc of PROBLEM_DOCS) {
      expect(doc.meaning, doc.code).toMatch(/\S.{20,}/)
      expect(doc.next, doc.code).toMatch(/\S.{10,}/)
    }
  })

  it("should answer the type of a real problem with its page: its title, status and code", async () => {
    const refused = await t.api("/api/v1/articles/art_nope", { key: null })
    const problem = (await refused.json()) as { type: string; title: string; status: number; code: string }
    expect(problem.type).toBe(`${t.url}/problems/unauthenticated`)
    const page = await fetch(problem.type)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toMatch(/^text\/html/)
    expect(page.headers.get("set-cookie")).toBeNull()
    const html = await page.text()
    expect(html).toContain(`<h1 id="problem-title">${problem.title}</h1>`)
    expect(html).toContain(`HTTP ${problem.status} · <code>${problem.code}</code>`)
    expect(html).toContain("What to do")
  })

  it("should serve a page for every problem type, and list them all", async () => {
    const list = await (await fetch(`${t.url}/problems`)).text()
    for (const doc of PROBLEM_DOCS) {
      const res = await fetch(`${t.url}/problems/${doc.code}`)
      expect(res.status, doc.code).toBe(200)
      expect(await res.text()).toContain(`<h1 id="problem-title">${doc.title}</h1>`)
      expect(list).toContain(`<a href="/problems/${doc.code}"><code>${doc.code}</code></a>`)
    }
  })

  it("should let any cache keep the problem types' pages an hour, the same for everyone, and never the 404 page", async () => {
    for (const path of ["/problems", "/problems/not_found"]) {
      const res = await fetch(`${t.url}${path}`)
      expect(res.status, path).toBe(200)
      expect(res.headers.get("cache-control"), path).toBe("public, max-age=3600")
      expect(res.headers.get("set-cookie"), path).toBeNull()
      expect(res.headers.get("content-security-policy"), path).toContain("frame-ancestors 'none'")
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff")
    }
    const unknown = await fetch(`${t.url}/problems/no_such_problem`)
    expect(unknown.headers.get("cache-control")).toBe("no-store")
  })

  it("should answer an unknown problem type with the 404 page", async () => {
    const res = await fetch(`${t.url}/problems/no_such_problem`)
    expect(res.status).toBe(404)
    expect(res.headers.get("content-type")).toMatch(/^text\/html/)
    expect(res.headers.get("set-cookie")).toBeNull()
    expect(await res.text()).toContain("Not found")
  })
})
