import { existsSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { createTempDir } from "../../../test/support/databases.ts"
import { runNode } from "../../../test/support/processes.ts"

const ADMIN = "apps/admin/main.ts"

// Each case starts a Node process: on a shared, loaded 2-core machine that has taken seconds.
describe("admin command line, usage errors", { timeout: 120_000 }, () => {
  const temp = createTempDir("cs-admin-repeated-")
  afterAll(() => temp.remove())

  it("should refuse an option given twice (exit code 1, the option named, the usage) before anything is opened, rather than keep the last value", async () => {
    const dataDir = join(temp.dir, "data")
    const cases = [
      ["account", "create", "--email", "first@example.test", "--password", "long-enough", "--email", "second@example.test"],
      ["key", "create", "--account", "first@example.test", "--name", "ci", "--name", "deploy"],
      ["activity", "prune", "--older-than", "90", "--older-than", "1"],
    ]
    for (const args of cases) {
      const out = await runNode(ADMIN, args, { DATA_DIR: dataDir, DATABASE_URL: "" })
      expect(out.code, args.join(" ")).toBe(1)
      expect(out.stdout, args.join(" ")).toBe("")
      expect(out.stderr, args.join(" ")).toMatch(/^Error: --(email|name|older-than) is given twice: give it once\.\n/)
      expect(out.stderr, args.join(" ")).toContain("Usage: npm run admin")
    }
    // (no embedded database made: the command line was refused before the database was opened)
    expect(existsSync(dataDir)).toBe(false)
  })

  it("should answer no command at all as a usage error: exit code 1, the usage on stderr, nothing on stdout; help on stdout with exit code 0", async () => {
    const none = await runNode(ADMIN, [], { DATA_DIR: join(temp.dir, "none"), DATABASE_URL: "" })
    expect(none.code).toBe(1)
    expect(none.stdout).toBe("")
    expect(none.stderr).toMatch(/^Error: No command given\.\n\nUsage: npm run admin/)
    for (const args of [["help"], ["--help"]]) {
      const help = await runNode(ADMIN, args, { DATA_DIR: join(temp.dir, "none"), DATABASE_URL: "" })
      expect(help.code, args[0]).toBe(0)
      expect(help.stdout, args[0]).toMatch(/^Usage: npm run admin/)
      expect(help.stderr, args[0]).toBe("")
    }
  })

  it("should name in its help every variable it reads, REDIS_URL included, and say a bad setting stops the command as it does", async () => {
    const help = await runNode(ADMIN, ["help"], { DATA_DIR: join(temp.dir, "none"), DATABASE_URL: "" })
    const environment = help.stdout.slice(help.stdout.indexOf("Environment:"))
    for (const name of ["DATABASE_URL", "DATA_DIR", "REDIS_URL"]) expect(environment, name).toContain(name)
    expect(environment).toMatch(/bad setting/)
    const bad = await runNode(ADMIN, ["migrate"], { DATA_DIR: join(temp.dir, "none"), DATABASE_URL: "", REDIS_URL: "http://cache:6379" })
    expect(bad.code).toBe(1)
    expect(bad.stderr).toMatch(/^Error: Configuration error: REDIS_URL must be/)
  })
})
