/** The server's configuration: defaults, and a bad value refused with a message naming its variable. */
import { spawn, spawnSync } from "node:child_process"
import { defaultLimits } from "@content-site/core"
import { describe, expect, it } from "vitest"
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { ConfigError, misspeltSettings, readConfig, SETTINGS } from "../config.ts"

const refusal = (env: Record<string, string>): string => {
  try {
    readConfig(env)
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError)
    return (e as Error).message
  }
  throw new Error(`accepted ${JSON.stringify(env)}`)
}

/** Every whole-number variable with its bounds. */
const INTEGERS: ReadonlyArray<readonly [string, number, number]> = [
  ["PORT", 0, 65535],
  ["RATE_LIMIT_PER_MINUTE", 1, 1_000_000_000],
  ["DAILY_EDIT_LIMIT", 1, 1_000_000_000],
  ["MAX_PER_PAGE", 1, 100],
  ["AUTH_FAILURE_LIMIT_PER_MINUTE", 1, 1_000_000_000],
  ["OAUTH_REGISTRATION_LIMIT_PER_HOUR", 1, 1_000_000_000],
  ["OAUTH_AUTHORIZATION_LIMIT_PER_HOUR", 1, 1_000_000_000],
  ["HEADERS_TIMEOUT_MS", 100, 600_000],
  ["REQUEST_TIMEOUT_MS", 100, 3_600_000],
  ["KEEP_ALIVE_TIMEOUT_MS", 100, 600_000],
  ["SHUTDOWN_GRACE_MS", 0, 600_000],
  ["EDIT_LOCK_TIMEOUT_MS", 50, 60_000],
  ["OAUTH_KEY_REFRESH_MS", 50, 3_600_000],
  ["OAUTH_KEY_ROTATE_DAYS", 0, 3_650],
]

describe("readConfig", () => {
  it("should give the documented defaults for an empty environment, blank values included", () => {
    expect(defaultLimits).toEqual({ requestsPerMinute: 60, dailyEdits: 200, maxPerPage: 100, authFailuresPerMinute: 30, clientRegistrationsPerHour: 20, authorizationRequestsPerHour: 60 })
    for (const env of [{}, { PORT: "", DATA_DIR: "  ", SEED_DEMO: "", MCP_ALLOWED_HOSTS: " , " }]) {
      expect(readConfig(env)).toEqual({
        host: "0.0.0.0",
        port: 3000,
        publicUrl: undefined,
        databaseUrl: undefined,
        dataDir: "./data",
        redisUrl: undefined,
        seedDemo: true,
        // The documented numbers as literals: comparing with defaultLimits would follow any change to it.
        limits: { requestsPerMinute: 60, dailyEdits: 200, maxPerPage: 100, authFailuresPerMinute: 30, clientRegistrationsPerHour: 20, authorizationRequestsPerHour: 60 },
        imageFetchAllowPrivate: false,
        trustProxy: false,
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 60_000,
        keepAliveTimeoutMs: 5_000,
        shutdownGraceMs: 10_000,
        editLockTimeoutMs: 5_000,
        oauthKeyRefreshMs: 60_000,
        oauthKeyRotateDays: 90,
        oauthClientMetadataDocuments: true,
        logLevel: "info",
        logFormat: "json",
        metricsToken: undefined,
        mcpAllowedHosts: [],
      })
    }
  })

  it("should take each whole number at its bounds and refuse what is outside them or not a whole number", () => {
    // (the headers' timeout may not pass the request's: each is tried beside the other's widest setting)
    const beside: Record<string, Record<string, string>> = { HEADERS_TIMEOUT_MS: { REQUEST_TIMEOUT_MS: "3600000" }, REQUEST_TIMEOUT_MS: { HEADERS_TIMEOUT_MS: "100" } }
    for (const [name, min, max] of INTEGERS) {
      expect(() => readConfig({ ...beside[name], [name]: String(min) })).not.toThrow()
      expect(() => readConfig({ ...beside[name], [name]: ` ${max} ` })).not.toThrow()
      for (const bad of [String(max + 1), "-1", "1.5", "1e3", "ten", "0x10"]) {
        expect(refusal({ [name]: bad })).toBe(`${name} must be an integer from ${min} to ${max}, not '${bad}'.`)
      }
      if (min > 0) expect(refusal({ [name]: String(min - 1) })).toContain(`${name} must be an integer from ${min}`)
    }
    expect(readConfig({ PORT: "8080", OAUTH_KEY_ROTATE_DAYS: "0" })).toMatchObject({ port: 8080, oauthKeyRotateDays: 0 })
  })

  it("should read true/false/1/0 in any case for switches and refuse anything else", () => {
    const keys = { SEED_DEMO: "seedDemo", IMAGE_FETCH_ALLOW_PRIVATE: "imageFetchAllowPrivate", TRUST_PROXY: "trustProxy", OAUTH_CLIENT_METADATA_DOCUMENTS: "oauthClientMetadataDocuments" } as const
    for (const [name, key] of Object.entries(keys)) {
      for (const [raw, value] of [["true", true], ["TRUE", true], ["1", true], ["false", false], ["False", false], ["0", false]] as const) {
        expect(readConfig({ [name]: raw })[key]).toBe(value)
      }
      expect(refusal({ [name]: "yes" })).toBe(`${name} must be true or false, not 'yes'.`)
    }
  })

  it("should take PUBLIC_URL as an origin without a trailing slash and refuse one with a path or another scheme", () => {
    expect(readConfig({ PUBLIC_URL: "https://content.example.com/" }).publicUrl).toBe("https://content.example.com")
    expect(readConfig({ PUBLIC_URL: "http://localhost:3000" }).publicUrl).toBe("http://localhost:3000")
    for (const bad of ["https://content.example.com/app", "ftp://content.example.com", "content.example.com"]) {
      expect(refusal({ PUBLIC_URL: bad })).toContain("PUBLIC_URL must be an origin")
    }
  })

  it("should refuse a PUBLIC_URL with a query, a fragment, credentials or a port that cannot be, rather than stop the start with a stack", () => {
    expect(readConfig({ PUBLIC_URL: "https://content.example.com:8443" }).publicUrl).toBe("https://content.example.com:8443")
    for (const bad of ["https://content.example.com:99999", "https://content.example.com?a=1", "https://content.example.com#top", "https://user:secret@content.example.com", "http://[::1"]) {
      expect(refusal({ PUBLIC_URL: bad })).toContain("PUBLIC_URL must be an origin")
    }
  })

  it("should take LOG_LEVEL and LOG_FORMAT in any case, default to readable lines on a terminal, and refuse anything else", () => {
    for (const level of ["fatal", "error", "warn", "info", "debug", "trace", "silent"]) expect(readConfig({ LOG_LEVEL: level.toUpperCase() }).logLevel).toBe(level)
    expect(refusal({ LOG_LEVEL: "verbose" })).toBe("LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, not 'verbose'.")
    expect(readConfig({}, true).logFormat).toBe("pretty")
    expect(readConfig({ LOG_FORMAT: "json" }, true).logFormat).toBe("json")
    expect(readConfig({ LOG_FORMAT: "Pretty" }).logFormat).toBe("pretty")
    expect(refusal({ LOG_FORMAT: "text" })).toBe("LOG_FORMAT must be one of json, pretty, not 'text'.")
  })

  it("should take a METRICS_TOKEN of 16 to 256 printable characters and refuse a short one or one with spaces", () => {
    expect(readConfig({ METRICS_TOKEN: " metrics-token-0123456789 " }).metricsToken).toBe("metrics-token-0123456789")
    for (const bad of ["short", "has spaces in the middle of it", "x".repeat(257)]) {
      expect(refusal({ METRICS_TOKEN: bad })).toBe("METRICS_TOKEN must be 16 to 256 printable characters without spaces.")
    }
  })

  it("should stop npm start's entry point with the message and exit code 1 on a bad value", () => {
    const run = spawnSync(process.execPath, ["apps/server/main.ts"], {
      cwd: new URL("../../../", import.meta.url).pathname,
      env: { ...process.env, PORT: "0", HOST: "127.0.0.1", RATE_LIMIT_PER_MINUTE: "many", DATA_DIR: "/nonexistent-never-opened" },
      encoding: "utf8",
      timeout: 20_000,
    })
    expect(run.status).toBe(1)
    expect(run.stderr.trim()).toBe("Configuration error: RATE_LIMIT_PER_MINUTE must be an integer from 1 to 1000000000, not 'many'.")
  })

  it("should take DATABASE_URL as a postgres:// URL naming its database and refuse anything else without repeating it (it may hold a password)", () => {
    expect(readConfig({ DATABASE_URL: " postgres://u:p@db:5432/content " }).databaseUrl).toBe("postgres://u:p@db:5432/content")
    expect(readConfig({ DATABASE_URL: "postgresql:///content?host=/var/run/postgresql" }).databaseUrl).toBe("postgresql:///content?host=/var/run/postgresql")
    for (const bad of ["postgres://u:secret@db:5432", "postgres://u:secret@db:5432/", "mysql://u:secret@db/content", "db.example:5432/content secret"]) {
      expect(refusal({ DATABASE_URL: bad })).toBe("DATABASE_URL must be a PostgreSQL URL naming its database, such as postgres://user:password@host:5432/content_site.")
    }
  })

  it("should take REDIS_URL as a redis:// or rediss:// URL with at most a database number and refuse anything else without repeating it (it may hold a password)", () => {
    for (const good of ["redis://127.0.0.1:6379", "redis://:secret@cache:6379/1", "rediss://u:secret@cache.example/", " redis://cache "]) {
      expect(readConfig({ REDIS_URL: good }).redisUrl).toBe(good.trim())
    }
    // ioredis takes https:// as plain redis:// (no TLS), a bare host:port as something else, and a
    // database that is no number as a SELECT whose error is thrown past the start, with a stack
    for (const bad of ["https://u:secret@cache:6379", "cache:6379", "127.0.0.1:6379", "redis://u:secret@cache:6379/abc", "redis:///0", "redis://cache/1/2"]) {
      expect(refusal({ REDIS_URL: bad })).toBe("REDIS_URL must be a redis:// or rediss:// URL with a host and at most a database number, such as redis://:password@host:6379/0.")
    }
  })

  /**
   * Starts npm start's entry point and answers its exit code and what it wrote to stderr. A start
   * that has not exited after 45 s writes Node's diagnostic report (its JavaScript stack and the
   * handles keeping it alive) before it is killed, and the case fails with that report's gist.
   */
  const start = (env: Record<string, string>) =>
    new Promise<{ status: number | null; stderr: string }>((resolve, reject) => {
      const reports = mkdtempSync(join(tmpdir(), "cs-start-report-"))
      const child = spawn(process.execPath, ["--report-on-signal", "--report-signal=SIGUSR2", `--report-directory=${reports}`, "apps/server/main.ts"], {
        cwd: new URL("../../../", import.meta.url).pathname,
        env: { ...process.env, HOST: "127.0.0.1", LOG_LEVEL: "silent", ...env },
        stdio: ["ignore", "ignore", "pipe"],
      })
      let stderr = ""
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
      let hung = false
      const report = setTimeout(() => {
        hung = true
        child.kill("SIGUSR2")
        setTimeout(() => child.kill("SIGKILL"), 3_000).unref()
      }, 45_000)
      child.on("exit", (status) => {
        clearTimeout(report)
        if (!hung) {
          rmSync(reports, { recursive: true, force: true })
          return resolve({ status, stderr })
        }
        // what it was doing (a stack, or none when it waited), the CPU it had used (slow, or hung), and what kept it alive
        const gist = readdirSync(reports).map((file) => {
          const report = JSON.parse(readFileSync(join(reports, file), "utf8")) as Record<string, unknown> & { libuv?: { is_referenced?: boolean; is_active: boolean }[] }
          const handles = (report.libuv ?? []).filter((h) => h.is_active && h.is_referenced === true)
          return JSON.stringify({ javascriptStack: report["javascriptStack"], resourceUsage: report["resourceUsage"], handles }, null, 1)
        })
        reject(new Error(`the start did not exit within 45 s (reports in ${reports}); stderr: ${stderr}\n${gist.join("\n") || "no report written"}`))
      })
    })

  it("should stop the start with one sentence and exit code 1 when the port is in use, never a stack", async () => {
    const { createServer } = await import("node:net")
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    const port = (taken.address() as { port: number }).port
    try {
      const run = await start({ PORT: String(port), DATA_DIR: "/nonexistent-never-opened" })
      expect(run.status).toBe(1)
      expect(run.stderr.trim()).toBe(`Cannot listen on 127.0.0.1:${port}: the port is in use by another process. Stop it, or set PORT to another port.`)
    } finally {
      taken.close()
    }
  }, 60_000)

  it("should stop the start with one sentence and exit code 1 when DATABASE_URL's server does not answer or its database does not exist, creating none", async () => {
    const refused = await start({ PORT: "0", DATABASE_URL: "postgres://someone:secret-password@127.0.0.1:1/content", DATA_DIR: "/nonexistent-never-opened" })
    expect(refused.status).toBe(1)
    expect(refused.stderr.trim()).toBe("Cannot use the PostgreSQL database at 127.0.0.1:1/content (DATABASE_URL): nothing answers there (connection refused). Is it running, on that host and port?")
    const { databaseUrl, PG_ADMIN_URL } = await import("../../../test/support/databases.ts")
    const name = `cs_missing_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
    const missing = await start({ PORT: "0", DATABASE_URL: databaseUrl(name), DATA_DIR: "/nonexistent-never-opened" })
    const pg = (await import("pg")).default
    const client = new pg.Client({ connectionString: PG_ADMIN_URL })
    await client.connect()
    try {
      // a mistyped database name is not a new, empty database (MikroORM's migrator made one)
      const made = await client.query("select 1 from pg_database where datname = $1", [name])
      if (made.rowCount !== 0) await client.query(`DROP DATABASE ${name} WITH (FORCE)`)
      expect(made.rowCount).toBe(0)
    } finally {
      await client.end()
    }
    expect(missing.status).toBe(1)
    expect(missing.stderr.trim()).toBe(
      `Cannot use the PostgreSQL database at ${new URL(databaseUrl(name)).host}/${name} (DATABASE_URL): database "${name}" does not exist. Create it first (docs/operations.md, "PostgreSQL"), or correct the name.`,
    )
  }, 120_000)

  it("should stop the start with one sentence and exit code 1 when DATA_DIR cannot be made (a file on its path), never a stack", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "cs-datadir-")), "a-file")
    writeFileSync(file, "")
    try {
      for (const dir of [file, join(file, "data")]) {
        const run = await start({ PORT: "0", DATA_DIR: dir })
        expect(run.status).toBe(1)
        expect(run.stderr.trim()).toBe(`The data directory ${dir} (DATA_DIR) cannot be used: it, or a folder on its path, is a file. Set DATA_DIR to a directory this process may write, or set DATABASE_URL.`)
      }
    } finally {
      rmSync(dirname(file), { recursive: true, force: true })
    }
  }, 120_000)

  it("should stop every host's start with one sentence on a tracing setting it cannot use, before anything else loads", () => {
    for (const entry of ["apps/server/main.ts", "apps/rest-host/main.ts", "apps/mcp-host/main.ts"]) {
      const run = spawnSync(process.execPath, [entry], {
        cwd: new URL("../../../", import.meta.url).pathname,
        env: { ...process.env, PORT: "0", HOST: "127.0.0.1", OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", DATA_DIR: "/nonexistent-never-opened" },
        encoding: "utf8",
        timeout: 20_000,
      })
      expect([entry, run.status]).toEqual([entry, 1])
      expect(run.stderr.trim()).toBe("Configuration error: OTEL_EXPORTER_OTLP_PROTOCOL must be one of http/protobuf, http/json, not 'grpc'.")
    }
  })
})

describe("HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS", () => {
  it("should refuse a headers' timeout longer than the request's with one sentence naming both, and take them equal", () => {
    expect(refusal({ REQUEST_TIMEOUT_MS: "1000" })).toBe("HEADERS_TIMEOUT_MS (10000) must not be longer than REQUEST_TIMEOUT_MS (1000): the headers are part of the request.")
    expect(readConfig({ REQUEST_TIMEOUT_MS: "1000", HEADERS_TIMEOUT_MS: "1000" })).toMatchObject({ headersTimeoutMs: 1000, requestTimeoutMs: 1000 })
  })
})

describe("MCP_ALLOWED_HOSTS", () => {
  it("should take comma-separated Host names in lower case and refuse anything a Host header cannot be, naming it", () => {
    expect(readConfig({}).mcpAllowedHosts).toEqual([])
    expect(readConfig({ MCP_ALLOWED_HOSTS: " MCP.Example.com ,10.0.0.5:3000,, [::1]:8080,localhost" }).mcpAllowedHosts).toEqual(["mcp.example.com", "10.0.0.5:3000", "[::1]:8080", "localhost"])
    for (const bad of ["https://mcp.example.com", "mcp.example.com/mcp", "mcp.example.com:99999", "mcp example.com", "-bad.example"]) {
      expect(refusal({ MCP_ALLOWED_HOSTS: `ok.example,${bad}` })).toBe(
        `MCP_ALLOWED_HOSTS must be comma-separated names as clients send them in Host (host or host:port, such as mcp.example.com,10.0.0.5:3000), not '${bad.toLowerCase()}'.`,
      )
    }
  })
})

describe("misspeltSettings", () => {
  it("should name the setting a mistyped variable was meant to be, and nothing of an ordinary environment", () => {
    const env = { DATABASE_ULR: "postgres://db/x", REDIS_UR: "redis://r", PROT: "3000", DATADIR: "/d", LOG_LEVLE: "debug", DATABASE_URL: "postgres://db/y" }
    expect(misspeltSettings(env)).toEqual([
      { given: "DATABASE_ULR", meant: "DATABASE_URL" },
      { given: "REDIS_UR", meant: "REDIS_URL" },
      { given: "PROT", meant: "PORT" },
      { given: "DATADIR", meant: "DATA_DIR" },
      { given: "LOG_LEVLE", meant: "LOG_LEVEL" },
    ])
    const ordinary = ["PATH", "HOME", "HOSTNAME", "USER", "LANG", "TERM", "SHELL", "PWD", "OLDPWD", "NODE_ENV", "LOGNAME", "PGHOST", "PGPORT", "PGDATABASE", "CI", "TZ", "DEBUG", "EDITOR", "TEST_REDIS_URL", "OTEL_SERVICE_NAME", "npm_config_cache", "X".repeat(100)]
    expect(misspeltSettings(Object.fromEntries(ordinary.map((name) => [name, "x"])))).toEqual([])
  })

  it("should know every setting docs/operations.md's table lists but OpenTelemetry's own, and no other", () => {
    const table = readFileSync(new URL("../../../docs/operations.md", import.meta.url), "utf8")
    const documented = [...table.matchAll(/^\| `([A-Z][A-Z0-9_]*)`/gm)].map((m) => m[1]!).filter((name) => !name.startsWith("OTEL_"))
    expect([...new Set(documented)].sort()).toEqual([...SETTINGS].sort())
  })
})
