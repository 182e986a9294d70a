/**
 * Agent-grade editing through the MCP SDK client, connected with OAuth, on PostgreSQL:
 * protected_links in get_article, edit_article, list_revisions / get_revision / diff_revisions,
 * restore_revision, idempotency_key on the write tools, annotations and descriptions, logging,
 * and another account's article as not_found everywhere.
 */
import { importData } from "@content-site/core"
import { startServer, type StartedServer } from "../../apps/server/server.ts"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import pg from "pg"
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createDatabase } from "../e2e/helpers.ts"
import { ALICE, connectOrFail, ScriptedOAuthProvider, seedFile } from "./support.ts"

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

type ToolResult = { isError?: boolean; structuredContent?: Record<string, any>; content: Array<{ type: string; text?: string }> }

let server: StartedServer
let database: Awaited<ReturnType<typeof createDatabase>>
let client: Client
const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }))
const validators = new Map<string, (data: unknown) => boolean>()

const PROTECTED = `<a href="https://partner.test/offer" data-service-protected="backlink" rel="sponsored">partner offer</a>`

const call = async (name: string, args: Record<string, unknown>): Promise<ToolResult> => (await client.callTool({ name, arguments: args })) as ToolResult

const ok = (name: string, result: ToolResult): Record<string, any> => {
  expect(result.isError ?? false, JSON.stringify(result.content)).toBe(false)
  const validate = validators.get(name)
  expect(validate?.(result.structuredContent), JSON.stringify(ajv.errors)).toBe(true)
  return result.structuredContent as Record<string, any>
}

const problemOf = (result: ToolResult): Record<string, any> => {
  expect(result.isError).toBe(true)
  expect(result.structuredContent).toBeUndefined()
  return JSON.parse(result.content[0]?.text ?? "") as Record<string, any>
}

const rest = async (path: string) =>
  (await (await fetch(`${server.url}/api/v1${path}`, { headers: { authorization: `Bearer ${ALICE.apiKey}` } })).json()) as Record<string, any>

beforeAll(async () => {
  database = await createDatabase()
  server = await startServer({
    env: { HOST: "127.0.0.1", PORT: "0", SEED_DEMO: "false", DATABASE_URL: database.url, AUTH_FAILURE_LIMIT_PER_MINUTE: "1000", RATE_LIMIT_PER_MINUTE: "100000" },
    quiet: true,
  })
  const seeded = await server.runtime.runPromiseExit(importData(seedFile()))
  if (seeded._tag !== "Success") throw new Error("seeding failed")
  const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" })
  client = await connectOrFail(`${server.url}/mcp`, provider)
  const { tools } = await client.listTools()
  for (const tool of tools) validators.set(tool.name, ajv.compile(tool.outputSchema as object) as (d: unknown) => boolean)
}, 120_000)

afterAll(async () => {
  await client?.close()
  await server?.close()
  await database?.drop()
})

describe("the agent tools", () => {
  it("should list them with descriptions for a model, output schemas and truthful annotations", async () => {
    const { tools } = await client.listTools()
    const byName = new Map(tools.map((t) => [t.name, t]))
    for (const name of ["edit_article", "list_revisions", "get_revision", "diff_revisions", "restore_revision"]) expect(byName.has(name)).toBe(true)
    for (const read of ["list_revisions", "get_revision", "diff_revisions"]) {
      expect(byName.get(read)?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false })
    }
    for (const write of ["edit_article", "restore_revision"]) {
      expect(byName.get(write)?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false })
    }
    for (const write of ["update_article", "replace_featured_image", "edit_article", "restore_revision"]) {
      expect(Object.keys((byName.get(write)?.inputSchema.properties ?? {}) as object)).toContain("idempotency_key")
      const response = (byName.get(write)?.inputSchema.properties as Record<string, { enum?: Array<string>; description?: string }>)["response"]
      expect(response?.enum).toEqual(["full", "minimal"])
      expect(response?.description).toMatch(/without its body/)
      expect(byName.get(write)?.description).toMatch(/response: "minimal" returns the article without its body/)
      // the result's article is described in both shapes, told apart by the body
      const article = (byName.get(write)?.outputSchema?.properties as Record<string, { anyOf?: Array<{ properties: Record<string, unknown>; required: Array<string> }> }>)["article"]
      expect(article?.anyOf?.map((shape) => shape.required.includes("body"))).toEqual([true, false])
      expect(article?.anyOf?.[1]?.properties["body"]).toMatchObject({ not: {} })
    }
    expect(byName.get("update_article")?.description).toContain("prefer edit_article")
    expect(byName.get("edit_article")?.description).toMatch(/protected_links/)
    expect(byName.get("edit_article")?.description).toMatch(/if_revision/)
    expect(byName.get("edit_article")?.description).toMatch(/restore_revision/)
    expect(client.getInstructions()).toMatch(/edit_article/)
    expect(client.getInstructions()).toMatch(/With edit_article pass response: "minimal"/)
    expect(client.getInstructions()).toMatch(/restore_revision/)
  })

  it("should tell a model to send a dry run without the change's idempotency_key, since that key then refuses the change", async () => {
    // what the server does: a dry run is a request of its own, and its key names it
    const key = crypto.randomUUID()
    const args = { article_id: "art_a1_5", edits: [{ find: "more text", replace: "more text, tried" }], idempotency_key: key }
    ok("edit_article", await call("edit_article", { ...args, dry_run: true }))
    expect(problemOf(await call("edit_article", args)).code).toBe("idempotency_key_reused")
    // so what a model reads before it tries a change says to send the dry run without the key
    const { tools } = await client.listTools()
    for (const name of ["update_article", "edit_article"]) {
      expect(tools.find((t) => t.name === name)?.description, name).toMatch(/dry run is a request of its own: send it without idempotency_key/)
    }
    expect(client.getInstructions()).toMatch(/a dry run is not the change: send it without one/)
    const refresh = await client.getPrompt({ name: "refresh_article", arguments: { article_id: "art_a1_5" } })
    const steps = (refresh.messages[0]!.content as { text: string }).text
    expect(steps).toMatch(/dry_run: true and no idempotency_key/)
  })
})

describe("every tool's answer against its output schema", () => {
  it("should answer reads, dry runs, empty pages and pages past the end with structuredContent its outputSchema accepts", async () => {
    const calls: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
      ["list_sites", {}],
      ["list_sites", { page: 99 }],
      ["list_articles", { site_id: "site_a1" }],
      ["list_articles", { site_id: "site_a1", q: "text", per_page: 1 }],
      ["list_articles", { site_id: "site_a1", status: "draft", from: "2000-01-01", to: "2000-01-02" }],
      ["list_articles", { site_id: "site_a1", page: 99 }],
      ["list_backlinks", { site_id: "site_a1" }],
      ["list_backlinks", { site_id: "site_a1", from: "2000-01-01", to: "2000-01-02" }],
      ["get_stats", { site_id: "site_a1" }],
      ["get_stats", { site_id: "site_a1", period: "2000-01" }],
      ["get_stats", { site_id: "site_a1", period: "last_30_days" }],
      ["get_article", { article_id: "art_a1_5" }],
      ["list_revisions", { article_id: "art_a1_5" }],
      ["list_revisions", { article_id: "art_a1_5", page: 99 }],
      ["get_revision", { article_id: "art_a1_5", number: 1 }],
      ["diff_revisions", { article_id: "art_a1_5", from: 1 }],
      ["search_articles", { q: "text" }],
      ["search_articles", { q: "zzzznothingzzzz" }],
      ["search", { query: "text" }],
      ["search", { query: "zzzznothingzzzz" }],
      ["fetch", { id: "art_a1_5" }],
      ["update_article", { article_id: "art_a1_5", title: "Dry title", dry_run: true }],
      ["edit_article", { article_id: "art_a1_5", title: "Dry title", dry_run: true, response: "minimal" }],
    ]
    for (const [name, args] of calls) {
      const result = await call(name, args)
      expect(result.isError ?? false, `${name} ${JSON.stringify(args)}: ${JSON.stringify(result.content).slice(0, 300)}`).toBe(false)
      const validate = validators.get(name)
      expect(validate?.(result.structuredContent), `${name} ${JSON.stringify(args)}: ${JSON.stringify(ajv.errors)}`).toBe(true)
      expect(result.content[0]?.type, name).toBe("text")
    }
  })
})

describe("prompts", () => {
  it("should take an optional argument sent blank, as prompt forms send a field left empty, as not given", async () => {
    const text = (result: Awaited<ReturnType<typeof client.getPrompt>>) => (result.messages[0]!.content as { text: string }).text
    for (const focus of ["", "  "]) {
      const refresh = text(await client.getPrompt({ name: "refresh_article", arguments: { article_id: "art_a1_5", focus } }))
      expect(refresh).toContain("Focus: make it current, accurate and clear")
    }
    expect(text(await client.getPrompt({ name: "refresh_article", arguments: { article_id: "art_a1_5", focus: "the intro" } }))).toContain("Focus: the intro\n")
    const report = await client.getPrompt({ name: "monthly_report", arguments: { site_id: "site_a1", period: "" } })
    expect(report.description).toMatch(/, this_month$/)
    expect(text(report)).toContain('period "this_month"')
    // a required one sent blank is still refused by name
    await expect(client.getPrompt({ name: "refresh_article", arguments: { article_id: "" } })).rejects.toThrow(/article_id/)
  })
})

describe("get_article", () => {
  it("should carry protected_links from the same extraction as the edit policy", async () => {
    const article = ok("get_article", await call("get_article", { article_id: "art_a1_1" }))
    expect(article.protected_links).toEqual([{ type: "backlink", href: "https://partner.test/offer", text: "partner offer" }])
  })
})

describe("edit_article, diff_revisions, restore_revision", () => {
  it("should edit by find and replace, show the change as a diff, and restore it", async () => {
    const before = ok("get_article", await call("get_article", { article_id: "art_a1_2" }))
    const edited = ok(
      "edit_article",
      await call("edit_article", {
        article_id: "art_a1_2",
        edits: [{ find: "Some words about gardens", replace: "A few words about walled gardens" }],
        if_revision: before.revision,
        reason: "agent tweak",
      }),
    )
    expect(edited.revision).toMatchObject({ number: before.revision + 1, origin: "mcp", reason: "agent tweak" })
    expect(edited.article.body).toBe(before.body.replace("Some words about gardens", "A few words about walled gardens"))
    expect(edited.article.protected_links).toEqual(before.protected_links)

    const revisions = ok("list_revisions", await call("list_revisions", { article_id: "art_a1_2" }))
    expect(revisions.data.map((r: { number: number }) => r.number)).toEqual([before.revision + 1, before.revision])
    const old = ok("get_revision", await call("get_revision", { article_id: "art_a1_2", number: before.revision }))
    expect(old.body).toBe(before.body)

    const diff = ok("diff_revisions", await call("diff_revisions", { article_id: "art_a1_2", from: before.revision }))
    expect(diff).toMatchObject({ from: before.revision, to: before.revision + 1, title: null, body: { added_words: 3, removed_words: 1 } })
    expect(diff.body.unified).toContain("-<p>Some words about gardens")
    expect(diff.body.unified).toContain("+<p>A few words about walled gardens")
    // the way back, as its text says it: one word ("Some") added, three removed
    const back = await call("diff_revisions", { article_id: "art_a1_2", from: before.revision + 1, to: before.revision })
    expect(back.content[0]!.text).toMatch(new RegExp(`^From revision ${before.revision + 1} to revision ${before.revision}: 1 word added, 3 removed\\.`))

    const restored = ok("restore_revision", await call("restore_revision", { article_id: "art_a1_2", number: before.revision }))
    expect(restored.revision).toMatchObject({ origin: "mcp", restored_from: before.revision, number: before.revision + 2 })
    expect(restored.article.body).toBe(before.body)
    const again = ok("restore_revision", await call("restore_revision", { article_id: "art_a1_2", number: before.revision }))
    expect(again.revision).toBeNull()
    // The same through REST: the article is back.
    expect((await rest("/articles/art_a1_2")).body).toBe(before.body)
  })

  it("should refuse what cannot apply or would touch a protected link, with the REST codes", async () => {
    const missing = problemOf(await call("edit_article", { article_id: "art_a1_3", edits: [{ find: "nowhere", replace: "x" }] }))
    expect(missing).toMatchObject({ code: "edit_not_applicable", errors: [{ path: "edits/0/find", count: 0 }] })
    const removed = problemOf(await call("edit_article", { article_id: "art_a1_3", edits: [{ find: PROTECTED, replace: "partner offer" }] }))
    expect(removed).toMatchObject({ code: "protected_link_changed", blocks: [{ kind: "removed", href: "https://partner.test/offer" }] })
    const stale = problemOf(await call("edit_article", { article_id: "art_a1_3", title: "x", if_revision: 99 }))
    expect(stale.code).toBe("precondition_failed")
    const invalid = problemOf(await call("edit_article", { article_id: "art_a1_3", edits: [] }))
    expect(invalid.code).toBe("invalid_request")
    for (const replace of ["\ud800", "a\u0000b"]) {
      const unstorable = problemOf(await call("edit_article", { article_id: "art_a1_3", edits: [{ find: "more text", replace }] }))
      expect(unstorable).toMatchObject({ code: "invalid_request", errors: [{ path: "edits/0/replace" }] })
    }
    expect((await rest("/articles/art_a1_3")).revision).toBe(1)
  })

  it("should replay a retried write with the same idempotency_key and refuse the key for another change", async () => {
    const key = crypto.randomUUID()
    const args = { article_id: "art_a1_4", edits: [{ find: "more text", replace: "more text, and then some" }], idempotency_key: key }
    const first = await call("edit_article", args)
    ok("edit_article", first)
    const second = await call("edit_article", args)
    // the same answer, said to be a replay of the revision the first call made
    expect(second.structuredContent).toEqual(first.structuredContent)
    const savedAs = (first.structuredContent as { revision: { number: number } }).revision.number
    const [said, ...others] = second.content as Array<{ type: string; text: string }>
    const [firstSaid, ...firstRest] = first.content as Array<{ type: string; text: string }>
    expect(said!.text).toBe(`Replayed: the first call with this idempotency_key and these arguments saved revision ${savedAs}; nothing was written now. Its answer follows (get_article shows the article as it is now).\n${firstSaid!.text}`)
    expect(others).toEqual(firstRest)
    expect((await rest("/articles/art_a1_4/revisions")).data).toHaveLength(2)
    const reused = problemOf(await call("edit_article", { ...args, edits: [{ find: "and then some", replace: "x" }] }))
    expect(reused.code).toBe("idempotency_key_reused")
    const updateKey = crypto.randomUUID()
    const u1 = await call("update_article", { article_id: "art_a1_4", title: "Four", idempotency_key: updateKey })
    const u2 = await call("update_article", { article_id: "art_a1_4", title: "Four", idempotency_key: updateKey })
    expect(u2.structuredContent).toEqual(u1.structuredContent)
    expect((u2.content as Array<{ text: string }>)[0]!.text).toMatch(/^Replayed: .* saved revision \d+; nothing was written now\./)
    // `dry_run: false` says what leaving it out says: the same request, replayed (over REST, `?dry_run=false` is too)
    const u3 = await call("update_article", { article_id: "art_a1_4", title: "Four", dry_run: false, idempotency_key: updateKey })
    expect(u3.structuredContent).toEqual(u1.structuredContent)
    expect((u3.content as Array<{ text: string }>)[0]!.text).toMatch(/^Replayed: /)
    expect((await rest("/articles/art_a1_4/revisions")).data).toHaveLength(3)
    const log = await rest("/activity?channel=mcp&per_page=100")
    expect(log.data.filter((e: { action: string }) => e.action === "edit_article").length).toBeGreaterThanOrEqual(3)
  })

  it("should not make a change again whose answer was never kept (the key's completion failed after the change): a conflict naming its revision", async () => {
    const db = new pg.Client({ connectionString: database.url })
    await db.connect()
    try {
      // the key's answer cannot be kept (as if the service had stopped right after the change committed)
      await db.query(`create function refuse_completion() returns trigger language plpgsql as $$ begin raise exception 'no completion'; end $$`)
      await db.query(`create trigger refuse_completion before update on idempotency_keys for each row when (new.status is not null) execute function refuse_completion()`)
      const key = crypto.randomUUID()
      const args = { article_id: "art_a1_2", edits: [{ find: "more text", replace: "more text, once" }], idempotency_key: key }
      const first = ok("edit_article", await call("edit_article", args))
      const savedAs = (first as { revision: { number: number } }).revision.number
      await db.query("drop trigger refuse_completion on idempotency_keys")
      await db.query("drop function refuse_completion")
      // its lease ends (the request is gone)
      await db.query(`update idempotency_keys set lease_until = 'epoch' where key = $1`, [key])
      const retried = problemOf(await call("edit_article", args))
      expect(retried.code).toBe("edit_conflict")
      expect(retried.detail).toContain(`article 'art_a1_2', revision ${savedAs}`)
      expect((await rest("/articles/art_a1_2")).revision).toBe(savedAs)
    } finally {
      await db.query("drop trigger if exists refuse_completion on idempotency_keys")
      await db.query("drop function if exists refuse_completion")
      await db.end()
    }
  })

  it("should replay a refused write as the first tool result: one text content holding the same problem, under the retry's request id", async () => {
    const args = { article_id: "art_a1_3", edits: [{ find: "not in the body", replace: "x" }], idempotency_key: crypto.randomUUID() }
    const first = await call("edit_article", args)
    expect(problemOf(first).code).toBe("edit_not_applicable")
    const again = await call("edit_article", args)
    expect(again.content).toHaveLength(1)
    const [problem1, problem2] = [problemOf(first), problemOf(again)]
    expect(problem2).toEqual({ ...problem1, request_id: problem2["request_id"] })
    expect(problem2["request_id"]).not.toBe(problem1["request_id"])
    // the id the retry's entry is logged under (the contract: one id for the answer and the entry)
    const log = await rest("/activity?channel=mcp&per_page=100")
    const ids = log.data.filter((e: { action: string; article_id: string }) => e.action === "edit_article" && e.article_id === "art_a1_3").map((e: { request_id: string }) => e.request_id)
    expect(ids).toEqual(expect.arrayContaining([problem1["request_id"], problem2["request_id"]]))
  })

  it("should answer every write tool without the article's body when asked for response: minimal", async () => {
    const full = ok("get_article", await call("get_article", { article_id: "art_a1_5" }))
    const withoutBody = (a: Record<string, any>) => {
      const { body: _body, ...rest } = a
      return rest
    }
    const edited = ok("edit_article", await call("edit_article", { article_id: "art_a1_5", edits: [{ find: "more text", replace: "more words" }], response: "minimal" }))
    expect(edited.article).not.toHaveProperty("body")
    expect(edited.revision.number).toBe(full.revision + 1)
    expect(edited.article.protected_links).toEqual(full.protected_links)
    const now = ok("get_article", await call("get_article", { article_id: "art_a1_5" }))
    expect(now.body).toBe(full.body.replace("more text", "more words"))
    expect(edited.article).toEqual(withoutBody(now))

    const updated = ok("update_article", await call("update_article", { article_id: "art_a1_5", title: "Five, minimal", response: "minimal" }))
    expect(updated.article).not.toHaveProperty("body")
    expect(updated.article.title).toBe("Five, minimal")
    const restored = ok("restore_revision", await call("restore_revision", { article_id: "art_a1_5", number: 1, response: "minimal" }))
    expect(restored.article).not.toHaveProperty("body")
    expect(restored.revision.restored_from).toBe(1)
    const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
    const image = ok("replace_featured_image", await call("replace_featured_image", { article_id: "art_a1_5", image_base64: png, mime_type: "image/png", response: "minimal" }))
    expect(image.article).not.toHaveProperty("body")
    expect(image.article["featured image"].url).toMatch(/\/media\//)
    // The default is the full article.
    const fullAgain = ok("update_article", await call("update_article", { article_id: "art_a1_5", title: "Five, full" }))
    expect(typeof fullAgain.article.body).toBe("string")
    expect(problemOf(await call("update_article", { article_id: "art_a1_5", title: "x", response: "short" })).code).toBe("invalid_request")
  })

  it("should answer the REST JSON of the same call: with Prefer: return=minimal for response minimal, in full by default", async () => {
    const restWrite = async (method: string, path: string, body: unknown, prefer?: string) => {
      const res = await fetch(`${server.url}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${ALICE.apiKey}`, "content-type": "application/json", ...(prefer !== undefined ? { prefer } : {}) },
        body: JSON.stringify(body),
      })
      expect(res.status).toBe(200)
      return (await res.json()) as Record<string, any>
    }
    // Dry runs write nothing, so the two transports answer the very same article.
    const edits = [{ find: "more text", replace: "more words" }]
    const cases: Array<[string, Record<string, unknown>, string, string, Record<string, unknown>]> = [
      ["edit_article", { edits }, "PATCH", "/articles/art_a1_1?dry_run=true", { edits }],
      ["update_article", { title: "One, tried" }, "PUT", "/articles/art_a1_1?dry_run=true", { title: "One, tried" }],
    ]
    for (const [tool, args, method, path, body] of cases) {
      const minimal = ok(tool, await call(tool, { article_id: "art_a1_1", ...args, dry_run: true, response: "minimal" }))
      expect(minimal.article).not.toHaveProperty("body")
      expect(minimal).toEqual(await restWrite(method, path, body, "return=minimal"))
      for (const shape of [{}, { response: "full" }]) {
        const full = ok(tool, await call(tool, { article_id: "art_a1_1", ...args, dry_run: true, ...shape }))
        expect(typeof full.article.body).toBe("string")
        expect(full).toEqual(await restWrite(method, path, body))
      }
    }
  })

  it("should replay an idempotent write in the shape each retry asks for", async () => {
    const key = crypto.randomUUID()
    const args = { article_id: "art_a1_5", title: "Five, once", idempotency_key: key }
    const minimal = ok("update_article", await call("update_article", { ...args, response: "minimal" }))
    expect(minimal.article).not.toHaveProperty("body")
    const full = ok("update_article", await call("update_article", args))
    expect(full.revision).toEqual(minimal.revision)
    expect(typeof full.article.body).toBe("string")
    const again = ok("update_article", await call("update_article", { ...args, response: "minimal" }))
    expect(again).toEqual(minimal)
  })

  it("should answer not_found for another account's article on every new tool", async () => {
    const calls: Array<[string, Record<string, unknown>]> = [
      ["edit_article", { article_id: "art_b1_1", title: "x" }],
      ["list_revisions", { article_id: "art_b1_1" }],
      ["get_revision", { article_id: "art_b1_1", number: 1 }],
      ["diff_revisions", { article_id: "art_b1_1", from: 1 }],
      ["restore_revision", { article_id: "art_b1_1", number: 1 }],
    ]
    for (const [name, args] of calls) expect(problemOf(await call(name, args)).code, name).toBe("not_found")
    for (const [name, args] of calls) expect(problemOf(await call(name, { ...args, article_id: "art_nope" })).code, name).toBe("not_found")
  })
})

describe("diff_revisions and the featured image", () => {
  it("should show a featured image change, which a restore brings back too, in the diff and its text", async () => {
    const before = ok("get_article", await call("get_article", { article_id: "art_a1_1" }))
    const png = (await sharp({ create: { width: 4, height: 4, channels: 3, background: "red" } }).png().toBuffer()).toString("base64")
    const replaced = ok("replace_featured_image", await call("replace_featured_image", { article_id: "art_a1_1", image_base64: png, mime_type: "image/png", alt: "Red" }))
    const image = replaced.article["featured image"]
    const diff = await call("diff_revisions", { article_id: "art_a1_1", from: before.revision })
    expect(ok("diff_revisions", diff)).toMatchObject({ title: null, "featured image": { from: before["featured image"], to: image }, body: { unified: "" } })
    expect(diff.content[0]!.text).toContain(`Featured image: ${before["featured image"].url} (alt: "A garden") -> ${image.url} (alt: "Red").`)
    const same = ok("diff_revisions", await call("diff_revisions", { article_id: "art_a1_1", from: replaced.revision.number }))
    expect(same["featured image"]).toBeNull()
  })
})
