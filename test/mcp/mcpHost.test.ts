import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { createTestDatabase } from "../support/databases.ts"
import { spawnNode } from "../support/processes.ts"
import { connect, ScriptedOAuthProvider } from "./support.ts"

describe("MCP-only host", () => {
  it("should serve /mcp with its OAuth server and sign-in pages but not the REST API, and stop on SIGTERM", async () => {
    const db = await createTestDatabase()
    const dataDir = await mkdtemp(join(tmpdir(), "cs-mcp-host-"))
    const child = spawnNode("apps/mcp-host/main.ts", [], { PORT: "0", HOST: "127.0.0.1", DATABASE_URL: db.url, DATA_DIR: dataDir })
    try {
      let out = ""
      const started = new Promise<{ mcpUrl: string; email: string; password: string }>((resolve, reject) => {
        child.stdout?.on("data", (d: Buffer) => {
          out += d.toString()
          const mcpUrl = /listening on (http:\/\/\S+\/mcp)/.exec(out)?.[1]
          const demo = /Demo sign-in: (\S+) \/ (\S+)/.exec(out)
          if (mcpUrl !== undefined && demo !== null) resolve({ mcpUrl, email: demo[1] as string, password: demo[2] as string })
        })
        child.on("exit", (code) => reject(new Error(`exited ${code}: ${out}`)))
      })
      const { mcpUrl, email, password } = await started
      const base = mcpUrl.replace(/\/mcp$/, "")
      expect((await fetch(`${base}/api/v1/sites`)).status).toBe(404)
      // a 404 under /api/ does not send the reader to an OpenAPI document this host does not serve
      const noDocument = await fetch(`${base}/api/v1/openapi.json`)
      expect(noDocument.status).toBe(404)
      expect(((await noDocument.json()) as { detail: string }).detail).toBe("Nothing is served at '/api/v1/openapi.json'.")
      const client = await connect(mcpUrl, new ScriptedOAuthProvider({ email, password, decision: "allow" }, "Host Agent"))
      const { tools } = (await client?.listTools()) ?? { tools: [] }
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["list_sites", "get_article", "update_article", "edit_article", "restore_revision"]))
      await client?.close()
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      child.kill("SIGTERM")
      expect(await exited).toBe(0)
    } finally {
      // (a failed expectation before the SIGTERM leaves no host running on the dropped database)
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      await db.drop()
      await rm(dataDir, { recursive: true, force: true })
    }
  }, 90_000)
})
