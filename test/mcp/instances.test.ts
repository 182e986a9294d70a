import { importData } from "@content-site/core"
import { revokeConnectedClient } from "@content-site/mcp"
import { request } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type StartedServer, startServer } from "../../apps/server/server.ts"
import { createTestDatabase } from "../support/databases.ts"
import { eventually } from "../support/eventually.ts"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import { ALICE, connect, ScriptedOAuthProvider, seedFile } from "./support.ts"

let first: StartedServer
let second: StartedServer
let database: { url: string; drop: () => Promise<void> }

/** A POST sent to one instance as a load balancer would: the public Host, the instance's socket. */
const postAt = (instance: StartedServer, publicUrl: string, path: string, headers: Record<string, string>, body: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const target = new URL(instance.url)
    const req = request({ host: target.hostname, port: target.port, path, method: "POST", headers: { host: new URL(publicUrl).host, ...headers } }, (res) => {
      let text = ""
      res.on("data", (chunk: Buffer) => (text += chunk.toString()))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }))
    })
    req.on("error", reject)
    req.end(body)
  })

/** A tools/call (get_article) sent to one instance. */
const toolCallAt = (instance: StartedServer, publicUrl: string, token: string) =>
  postAt(
    instance,
    publicUrl,
    "/mcp",
    { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_article", arguments: { article_id: "art_a1_1" } } }),
  )

/** A form posted to one instance's token endpoint. */
const tokenRequestAt = (instance: StartedServer, publicUrl: string, form: Record<string, string>) =>
  postAt(instance, publicUrl, "/oauth/token", { "content-type": "application/x-www-form-urlencoded" }, new URLSearchParams(form).toString())

/**
 * The same token request at both instances at once: one is answered, the other refused
 * `invalid_grant`, and the grant revoked whichever came second (the provider's own check of a
 * used one, or the store's consume of one used at the same moment): the winner's token is refused.
 */
const expectRedeemedOnce = async (form: Record<string, string>) => {
  const answers = await Promise.all([tokenRequestAt(first, first.url, form), tokenRequestAt(second, first.url, form)])
  expect(answers.map((a) => a.status).sort()).toEqual([200, 400])
  expect(JSON.parse(answers.find((a) => a.status === 400)!.body).error).toBe("invalid_grant")
  const token = (JSON.parse(answers.find((a) => a.status === 200)!.body) as { access_token: string }).access_token
  for (const instance of [first, second]) {
    expect((await eventually(() => toolCallAt(instance, first.url, token), (answer) => answer.status === 401)).status).toBe(401)
  }
}

beforeAll(async () => {
  database = await createTestDatabase()
  const env = { HOST: "127.0.0.1", PORT: "0", SEED_DEMO: "false", DATABASE_URL: database.url }
  first = await startServer({ quiet: true, env })
  const exit = await first.runtime.runPromiseExit(importData(seedFile()))
  if (exit._tag !== "Success") throw new Error("seeding failed")
  // The second instance serves the same public URL from the same database.
  second = await startServer({ quiet: true, env: { ...env, PUBLIC_URL: first.url } })
}, 120_000)

afterAll(async () => {
  await second?.close()
  await first?.close()
  await database?.drop()
})

describe("two instances on one PostgreSQL database", () => {
  it("should accept at one instance a token issued by the other and honour a revocation made at either", async () => {
    const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Two Instance Agent")
    const client = await connect(`${first.url}/mcp`, provider)
    await client?.close()
    const token = provider.savedTokens?.access_token ?? ""
    const served = await toolCallAt(second, first.url, token)
    expect(served.status).toBe(200)
    expect(JSON.parse(served.body).result.structuredContent.id).toBe("art_a1_1")
    const deps = { runtime: second.runtime, publicUrl: first.url, env: {} }
    expect(await revokeConnectedClient(deps, "acc_alice", provider.client?.client_id ?? "")).toBe(true)
    // refused at the other instance once the revocation's notification reaches it (docs/mcp.md:
    // normally within milliseconds; on a loaded machine a call sent at once can arrive first)
    expect((await eventually(() => toolCallAt(first, first.url, token), (answer) => answer.status === 401)).status).toBe(401)
  }, 60_000)

  it("should find an edit answered at one instance by its new words at the other at once", async () => {
    const headers = { authorization: `Bearer ${ALICE.apiKey}`, "content-type": "application/json" }
    const put = await fetch(`${first.url}/api/v1/articles/art_a1_4`, { method: "PUT", headers, body: JSON.stringify({ title: "Quinoa harvest notes" }) })
    expect(put.status).toBe(200)
    const found = (await (await fetch(`${second.url}/api/v1/search?q=quinoa`, { headers })).json()) as { data: Array<{ id: string }> }
    expect(found.data.map((a) => a.id)).toEqual(["art_a1_4"])
  })

  it("should merge an update_article written against an older revision with another agent's edit made since", async () => {
    const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Merging Agent")
    const atFirst = await connect(`${first.url}/mcp`, provider)
    const atSecond = await connect(`${first.url}/mcp`, new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Other Agent"))
    type Result = { isError?: boolean; structuredContent?: any; content: Array<{ type: string; text: string }> }
    const call = async (client: typeof atFirst, name: string, args: Record<string, unknown>) => (await client!.callTool({ name, arguments: args })) as Result
    const read = await call(atFirst, "get_article", { article_id: "art_a1_2" })
    const base = read.structuredContent.revision as number
    const original = read.structuredContent.body as string
    const theirs = await call(atSecond, "update_article", { article_id: "art_a1_2", body: `${original}<p>Added by the other agent.</p>` })
    expect(theirs.isError).toBeFalsy()
    const mine = await call(atFirst, "update_article", { article_id: "art_a1_2", title: "Retitled", base_revision: base })
    expect(mine.isError).toBeFalsy()
    expect(mine.structuredContent.merge).toEqual({ base, theirs: base + 1, merged_units: 1 })
    expect(mine.structuredContent.article.title).toBe("Retitled")
    expect(mine.structuredContent.article.body).toContain("Added by the other agent.")
    expect(mine.content[0]!.text).toContain(`Merged: your edit was written against revision ${base}`)
    const conflict = await call(atFirst, "update_article", { article_id: "art_a1_2", title: "Mine again", base_revision: base })
    expect(conflict.isError).toBe(true)
    const problem = JSON.parse(conflict.content[0]!.text)
    expect(problem.code).toBe("edit_conflict")
    expect(problem.conflicts).toEqual([{ unit: "title", base: read.structuredContent.title, theirs: "Retitled", mine: "Mine again" }])
    const both = await call(atFirst, "update_article", { article_id: "art_a1_2", title: "x", base_revision: base, if_revision: base })
    expect(JSON.parse(both.content[0]!.text).errors).toEqual([{ path: "base_revision", message: "Not together with If-Match or if_revision" }])
    await atFirst?.close()
    await atSecond?.close()
  }, 60_000)

  it("should honour a refresh token once when it is presented at both instances at the same moment", async () => {
    const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Double Refresh Agent")
    const client = await connect(`${first.url}/mcp`, provider)
    await client?.close()
    const form = {
      grant_type: "refresh_token",
      refresh_token: provider.savedTokens?.refresh_token ?? "",
      client_id: provider.client?.client_id ?? "",
      resource: `${first.url}/mcp`,
    }
    await expectRedeemedOnce(form)
  }, 60_000)

  it("should redeem an authorization code once when it is presented at both instances at the same moment", async () => {
    const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Double Code Agent")
    const probe = new Client({ name: "content-site-tests", version: "1.0.0" })
    await expect(probe.connect(new StreamableHTTPClientTransport(new URL(`${first.url}/mcp`), { authProvider: provider }))).rejects.toBeInstanceOf(UnauthorizedError)
    expect(provider.authorizationCode).toBeTypeOf("string")
    const form = {
      grant_type: "authorization_code",
      code: provider.authorizationCode ?? "",
      code_verifier: provider.verifier,
      redirect_uri: provider.redirectUrl,
      client_id: provider.client?.client_id ?? "",
      resource: `${first.url}/mcp`,
    }
    await expectRedeemedOnce(form)
  }, 60_000)
})
