/** What the prompts tell a model to do gives what they say it gives, followed to the letter. */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EXPECTED_SUMMARY, PERIOD } from "../support/periodFixture.ts"
import { ALICE, connectOrFail, ScriptedOAuthProvider, type SeededServer, startSeeded } from "./support.ts"

let server: SeededServer
let client: Client

beforeAll(async () => {
  server = await startSeeded({ RATE_LIMIT_PER_MINUTE: "100000" })
  client = await connectOrFail(`${server.url}/mcp`, new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }))
}, 60_000)

afterAll(async () => {
  await client?.close()
  await server?.close()
})

describe("monthly_report", () => {
  it("should send a model that needs more than the summary to list_articles with the filters that give the summary's articles (published ones only, not a draft dated in the month)", async () => {
    const prompt = await client.getPrompt({ name: "monthly_report", arguments: { site_id: "site_a3", period: PERIOD.key } })
    const text = (prompt.messages[0]!.content as { text: string }).text
    const step = text.split("\n").find((line) => line.includes("list_articles")) ?? ""
    const status = /status "([a-z]+)"/.exec(step)?.[1]
    expect(status, step).toBeDefined()
    const listed = (await client.callTool({
      name: "list_articles",
      arguments: { site_id: "site_a3", from: PERIOD.from, to: PERIOD.to, ...(status !== undefined ? { status } : {}), per_page: 100 },
    })) as unknown as { structuredContent: { data: Array<{ id: string }> } }
    expect(listed.structuredContent.data.map((a) => a.id)).toEqual(EXPECTED_SUMMARY.articles.ids)
  })
})
