import { spawn } from "node:child_process"
import { describe, expect, it } from "vitest"
import { createDatabase, scratchDir } from "./helpers.ts"

describe("REST-only host", () => {
  it("should serve the REST API and its reference but not the MCP endpoint, and stop on SIGTERM", async () => {
    const db = await createDatabase()
    try {
      const child = spawn(process.execPath, ["apps/rest-host/main.ts"], {
        cwd: new URL("../../", import.meta.url).pathname,
        env: { ...process.env, PORT: "0", HOST: "127.0.0.1", DATABASE_URL: db.url, DATA_DIR: scratchDir() },
        stdio: ["ignore", "pipe", "pipe"],
      })
      let out = ""
      const started = new Promise<{ base: string; key: string }>((resolve, reject) => {
        child.stdout.on("data", (d) => {
          out += d.toString()
          const base = /listening on (http:\/\/\S+)\/api\/v1/.exec(out)?.[1]
          const key = /Demo API key \(shown once\): (cs_\w+)/.exec(out)?.[1]
          if (base !== undefined && key !== undefined) resolve({ base, key })
        })
        child.on("exit", (code) => reject(new Error(`exited ${code}: ${out}`)))
      })
      const { base, key } = await started
      const sites = await fetch(`${base}/api/v1/sites`, { headers: { authorization: `Bearer ${key}` } })
      expect(sites.status).toBe(200)
      expect((await sites.json()).data.length).toBeGreaterThan(0)
      expect((await fetch(`${base}/api/v1/openapi.json`)).status).toBe(200)
      expect((await fetch(`${base}/mcp`, { method: "POST" })).status).toBe(404)
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
      child.kill("SIGTERM")
      expect(await exited).toBe(0)
    } finally {
      await db.drop()
    }
  })
})
