import { createApiKey } from "@content-site/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type StartedServer } from "../../apps/server/server.ts"
import { A1_BODY, json, KEYS, scratchDirs, startTestServer, type TestServer } from "./helpers.ts"

// Two instances on one PostgreSQL database: a person's edit sent to one, written against a
// revision that an agent's edit at the other has moved past, is merged, never erased.
let t: TestServer
let second: StartedServer
const dirs = scratchDirs()
beforeAll(async () => {
  const env = { RATE_LIMIT_PER_MINUTE: "100000" }
  t = await startTestServer(env)
  second = await startServer({
    env: { PORT: "0", HOST: "127.0.0.1", SEED_DEMO: "false", DATABASE_URL: t.databaseUrl, DATA_DIR: dirs.make(), ...env },
    quiet: true,
  })
})
afterAll(async () => {
  await second?.close()
  await t?.close()
  dirs.removeAll()
})

const put = (base: string, id: string, payload: Record<string, unknown>, headers: Record<string, string> = {}, query = "") =>
  fetch(`${base}/api/v1/articles/${id}${query}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${KEYS.a}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(payload),
  })
const blocks = (...texts: ReadonlyArray<string>) => texts.map((x) => `<p>${x}</p>`).join("\n")

describe("PUT with base_revision across two instances", () => {
  it("should merge disjoint changes into one revision, saying what it merged", async () => {
    const first = await json(await t.api("/api/v1/articles/art_a1", { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ body: `${A1_BODY}\n${blocks("one", "two")}` }) }))
    const base = first.article.revision
    // The agent changes the last paragraph at the first instance.
    const agent = await t.api("/api/v1/articles/art_a1", {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ body: `${A1_BODY}\n${blocks("one", "TWO by agent")}` }),
    })
    expect(agent.status).toBe(200)
    // The person, still on `base`, changes the first paragraph at the second instance.
    const res = await put(second.url, "art_a1", { body: `${A1_BODY}\n${blocks("ONE by person", "two")}`, base_revision: base, reason: "intro" })
    expect(res.status).toBe(200)
    const out = await json(res)
    expect(out.merge).toEqual({ base, theirs: base + 1, merged_units: 1 })
    expect(out.article.body).toBe(`${A1_BODY}\n${blocks("ONE by person", "TWO by agent")}`)
    expect(out.revision).toMatchObject({ number: base + 2, reason: `intro (merged with revision ${base + 1})` })
    expect(res.headers.get("etag")).toBe(`"art_a1-r${base + 2}"`)
  })

  it("should answer 409 edit_conflict with conflicts for the same paragraph changed differently, dry run too, and write nothing", async () => {
    const current = await json(await t.api("/api/v1/articles/art_a02"))
    const base = current.revision
    expect((await put(t.url, "art_a02", { body: "<p>Theirs.</p>" })).status).toBe(200)
    for (const query of ["?dry_run=true", ""]) {
      const res = await t.api(`/api/v1/articles/art_a02${query}`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ body: "<p>Mine.</p>", base_revision: base }),
      })
      expect(res.status).toBe(409)
      const problem = await json(res)
      expect(problem.code).toBe("edit_conflict")
      expect(problem.conflicts).toEqual([{ unit: "body/0", base: current.body, theirs: "<p>Theirs.</p>", mine: "<p>Mine.</p>" }])
    }
    const after = await json(await t.api("/api/v1/articles/art_a02"))
    expect(after).toMatchObject({ revision: base + 1, body: "<p>Theirs.</p>" })
  })

  it("should not merge an edit with itself when it is sent again: no revision, no conflict, the others' later changes kept", async () => {
    const agentKey = (await t.server.runtime.runPromise(createApiKey("acc_a", { name: "Another agent", scope: "write" }))).key
    const agent = (body: string) => t.api("/api/v1/articles/art_a03", { method: "PUT", key: agentKey, headers: { "content-type": "application/json" }, body: JSON.stringify({ body }) })
    expect((await agent(blocks("one", "two", "three"))).status).toBe(200)
    const base = (await json(await t.api("/api/v1/articles/art_a03"))).revision
    // The agent adds a paragraph right after the one the person then changes.
    expect((await agent(blocks("one", "two", "agent's new", "three"))).status).toBe(200)
    const mine = { title: "Person's title", body: blocks("one", "TWO by person", "three"), base_revision: base }
    const first = await put(second.url, "art_a03", mine)
    expect(first.status).toBe(200)
    const saved = await json(first)
    expect(saved.article.body).toBe(blocks("one", "TWO by person", "agent's new", "three"))
    // The same save again (a retried request, a form sent twice): it was made already.
    const again = await put(t.url, "art_a03", mine)
    expect(again.status).toBe(200)
    expect((await json(again)).revision).toBeNull()
    // The agent then undoes the person's change; the person's save arriving once more does not redo it.
    expect((await agent(blocks("one", "two", "agent's new", "three"))).status).toBe(200)
    const late = await put(second.url, "art_a03", mine)
    expect(late.status).toBe(200)
    expect((await json(late)).revision).toBeNull()
    const now = await json(await t.api("/api/v1/articles/art_a03"))
    expect(now.body).toBe(blocks("one", "two", "agent's new", "three"))
    expect(now.revision).toBe(saved.article.revision + 1)
  })

  it("should refuse base_revision with If-Match, and a base_revision that is not a revision number, as 400 naming it", async () => {
    const withIfMatch = await t.api("/api/v1/articles/art_a03", {
      method: "PUT",
      headers: { "content-type": "application/json", "if-match": "*" },
      body: JSON.stringify({ title: "x", base_revision: 1 }),
    })
    expect(withIfMatch.status).toBe(400)
    expect((await json(withIfMatch)).errors).toEqual([{ path: "base_revision", message: "Not together with If-Match" }])
    for (const bad of [0, 1.5, "1", 2 ** 31]) {
      const res = await t.api("/api/v1/articles/art_a03", { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ title: "x", base_revision: bad }) })
      expect(res.status).toBe(400)
      expect((await json(res)).errors[0].path).toBe("base_revision")
    }
    const ahead = await t.api("/api/v1/articles/art_a03", { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ title: "x", base_revision: 99 }) })
    expect(ahead.status).toBe(400)
    expect((await json(ahead)).errors[0].path).toBe("base_revision")
  })

  it("should publish base_revision, merge and conflicts in the OpenAPI document", async () => {
    const doc = await json(await fetch(`${t.url}/api/v1/openapi.json`))
    const text = JSON.stringify(doc)
    expect(text).toContain('"base_revision"')
    expect(text).toContain('"merged_units"')
    expect(text).toContain('"conflicts"')
  })
})
