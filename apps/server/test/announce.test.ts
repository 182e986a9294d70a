/** What `npm start` prints for the person who started it: the addresses, and the demo sign-in once. */
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { createTempDir } from "../../../test/support/databases.ts"
import { spawnNode, waitForLine } from "../../../test/support/processes.ts"

// Starts a Node process with the embedded database: on a loaded machine that has taken 20 s. A wait, not a speed check.
describe("npm start's announcement", { timeout: 120_000 }, () => {
  const temp = createTempDir("cs-announce-")
  afterAll(() => temp.remove())

  it("should print its links under PUBLIC_URL as the configuration reads it (trimmed, without its trailing slash)", async () => {
    const child = spawnNode("apps/server/main.ts", [], {
      PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: join(temp.dir, "data"),
      DATABASE_URL: "",
      LOG_FORMAT: "json",
      LOG_LEVEL: "info",
      PUBLIC_URL: " https://content.example.test/ ",
    })
    let out = ""
    child.stdout!.on("data", (d: Buffer) => (out += d.toString()))
    const exited = new Promise((resolve) => child.on("exit", resolve))
    try {
      await waitForLine(child, /try: /)
    } finally {
      child.kill("SIGTERM")
      await exited
    }
    const said = out.split("\n").filter((l) => l.startsWith("{")).map((l) => (JSON.parse(l) as { msg: string }).msg)
    expect(said).toContain("  API reference: https://content.example.test/api/docs    OpenAPI: https://content.example.test/api/v1/openapi.json")
    expect(said.find((m) => m.includes("sign in at"))).toMatch(/^ {2}sign in at https:\/\/content\.example\.test\/ {2}email: /)
    expect(said.find((m) => m.includes("try: "))).toMatch(/ https:\/\/content\.example\.test\/api\/v1\/sites$/)
  })
})
