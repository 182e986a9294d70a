import type { StartedServer } from "../../apps/server/server.ts"
import { execFile } from "node:child_process"
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startGateway } from "./gateway.ts"
import { ALICE, connect, ScriptedOAuthProvider, startSeeded } from "./support.ts"

/**
 * The official conformance scenarios that apply to this server. The others in the active suite
 * test the SDK's "everything" example server: they call its fixed test tools (test_simple_text,
 * test_image_content, test_sampling, ...), read its fixed resources (test://static-text,
 * test://static-binary, test://template/{id}/data), get its fixed prompts (test_simple_prompt,
 * test_prompt_with_arguments, ...), subscribe to test://watched-resource and set its logging
 * level: names this server does not have (its resources are the account's articles, its prompts
 * monthly_report and refresh_article; a stateless server has no subscriptions). resources-list,
 * prompts-list and completion-complete check the shape of any server's answers, so they run;
 * server-sse-multiple-streams has no checks for a stateless JSON-response server.
 */
const SCENARIOS = ["server-initialize", "ping", "tools-list", "dns-rebinding-protection", "resources-list", "prompts-list", "completion-complete"] as const

const cli = join(dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/conformance/package.json")), "dist/index.js")

let server: StartedServer
let gateway: { url: string; close: () => Promise<void> }
let output: string

beforeAll(async () => {
  server = await startSeeded()
  const provider = new ScriptedOAuthProvider({ ...ALICE, decision: "allow" }, "Conformance Runner")
  const client = await connect(`${server.url}/mcp`, provider)
  await client?.close()
  // The runner cannot do OAuth: a gateway adds the token this person allowed.
  gateway = await startGateway(server.url, provider.savedTokens?.access_token ?? "")
  output = await mkdtemp(join(tmpdir(), "mcp-conformance-"))
}, 60_000)

afterAll(async () => {
  await gateway?.close()
  await server?.close()
  if (output) await rm(output, { recursive: true, force: true })
})

describe("the official MCP conformance scenarios", () => {
  it("should pass every applicable server scenario", async () => {
    const run = promisify(execFile)
    // four runners at a time: seven at once load a shared 2-core machine enough to disturb other files' timing
    for (const batch of [SCENARIOS.slice(0, 4), SCENARIOS.slice(4)]) {
      await Promise.all(
        batch.map((scenario) =>
          run(process.execPath, [cli, "server", "--url", `${gateway.url}/mcp`, "--scenario", scenario, "-o", output], { encoding: "utf8" }).catch(
            (error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }),
          ),
        ),
      )
    }
    const results = new Map<string, Array<{ id: string; status: string; errorMessage?: string }>>()
    for (const dir of await readdir(output)) {
      const scenario = SCENARIOS.find((s) => dir.startsWith(`server-${s}-`))
      if (scenario !== undefined) results.set(scenario, JSON.parse(await readFile(join(output, dir, "checks.json"), "utf8")))
    }
    for (const scenario of SCENARIOS) {
      const checks = results.get(scenario) ?? []
      expect(checks.length, scenario).toBeGreaterThan(0)
      expect(checks.filter((c) => c.status !== "SUCCESS"), scenario).toEqual([])
    }
  }, 120_000)
})
