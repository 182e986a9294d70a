import { defaultLimits, type LimitSettings } from "@content-site/core"
// The signing keys' module alone: the MCP adapter's whole surface (its SDK, OAuth server, zod
// and ajv) would load with every admin command that reads the configuration.
import { DEFAULT_KEY_ROTATE_DAYS } from "@content-site/mcp/signingKeys"
import { type LogFormat, LOG_LEVELS, type LogLevel } from "@content-site/telemetry"

/** The server's configuration, read from environment variables (the table in docs/operations.md, "Configuration"). */
export interface ServerConfig {
  readonly host: string
  readonly port: number
  /** Set when PUBLIC_URL is given; otherwise derived from the listening address. */
  readonly publicUrl: string | undefined
  readonly databaseUrl: string | undefined
  readonly dataDir: string
  readonly redisUrl: string | undefined
  readonly seedDemo: boolean
  readonly limits: LimitSettings
  readonly imageFetchAllowPrivate: boolean
  readonly trustProxy: boolean
  readonly headersTimeoutMs: number
  readonly requestTimeoutMs: number
  readonly keepAliveTimeoutMs: number
  readonly shutdownGraceMs: number
  /** How long an edit waits for another edit of the same article before answering 409. */
  readonly editLockTimeoutMs: number
  /** How often the OAuth signing keys are reloaded (handed to the MCP adapter, as the rotation age). */
  readonly oauthKeyRefreshMs: number
  /** Clients may be described by a metadata document at an https URL (OAUTH_CLIENT_METADATA_DOCUMENTS, default true). */
  readonly oauthClientMetadataDocuments: boolean
  readonly oauthKeyRotateDays: number
  /** The least severe level logged (LOG_LEVEL, default info). */
  readonly logLevel: LogLevel
  /** JSON lines, or readable lines (LOG_FORMAT; default: readable on a terminal, JSON otherwise). */
  readonly logFormat: LogFormat
  /** GET /metrics answers to this bearer token; unset: no metrics (404). */
  readonly metricsToken: string | undefined
  /** Further `Host` names accepted at /mcp besides PUBLIC_URL's (MCP_ALLOWED_HOSTS), lower case. */
  readonly mcpAllowedHosts: ReadonlyArray<string>
}

/** A `Host` header's value: a DNS name or an IPv4 address, or an IPv6 one in brackets, and an optional port. */
const HOST_NAME = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]{2,45}\])(?::([0-9]{1,5}))?$/

/** MCP_ALLOWED_HOSTS: comma-separated names as clients send them in `Host`; anything else stops the start. */
const allowedHostsOf = (raw: string | undefined): ReadonlyArray<string> => {
  const names = (raw ?? "").split(",").map((h) => h.trim().toLowerCase()).filter((h) => h !== "")
  for (const name of names) {
    const m = HOST_NAME.exec(name)
    if (m === null || Number(m[1] ?? 0) > 65535) {
      throw new ConfigError(`MCP_ALLOWED_HOSTS must be comma-separated names as clients send them in Host (host or host:port, such as mcp.example.com,10.0.0.5:3000), not '${name}'.`)
    }
  }
  return names
}

/** A configuration value that cannot be used. */
export class ConfigError extends Error {
  override readonly name = "ConfigError"
}

const nonEmpty = (v: string | undefined): string | undefined => (v === undefined || v.trim() === "" ? undefined : v.trim())

const intOf = (env: Record<string, string | undefined>, name: string, fallback: number, min: number, max: number): number => {
  const raw = nonEmpty(env[name])
  if (raw === undefined) return fallback
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, not '${raw}'.`)
  }
  return Number(raw)
}

const boolOf = (env: Record<string, string | undefined>, name: string, fallback: boolean): boolean => {
  const raw = nonEmpty(env[name])?.toLowerCase()
  if (raw === undefined) return fallback
  if (raw === "true" || raw === "1") return true
  if (raw === "false" || raw === "0") return false
  throw new ConfigError(`${name} must be true or false, not '${raw}'.`)
}

const oneOf = <T extends string>(env: Record<string, string | undefined>, name: string, allowed: ReadonlyArray<T>, fallback: T): T => {
  const raw = nonEmpty(env[name])?.toLowerCase()
  if (raw === undefined) return fallback
  if (!(allowed as ReadonlyArray<string>).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(", ")}, not '${raw}'.`)
  return raw as T
}

/**
 * `http(s)://host[:port]` and nothing else: no query, fragment or credentials (they would land in
 * every link, and the OAuth issuer refuses them), and a port that exists.
 */
const isOrigin = (raw: string): boolean => {
  if (!/^https?:\/\/[^/\s?#@]+$/i.test(raw)) return false
  try {
    new URL(raw)
    return true
  } catch {
    return false
  }
}

/** `postgres://` or `postgresql://` with a database name: what the driver can open (a socket directory may be given as `?host=`). */
const isPostgresUrl = (raw: string): boolean => {
  try {
    const url = new URL(raw)
    return (url.protocol === "postgres:" || url.protocol === "postgresql:") && url.pathname.length > 1
  } catch {
    return false
  }
}

/**
 * `redis://` or `rediss://` (TLS) with a host, and at most a database number as its path: what
 * ioredis connects to as written. It takes any other scheme as plain `redis://` (an `https://`
 * URL without TLS) and a database that is no number as a SELECT that throws past the start.
 */
const isRedisUrl = (raw: string): boolean => {
  try {
    const url = new URL(raw)
    return (url.protocol === "redis:" || url.protocol === "rediss:") && url.hostname !== "" && /^(?:\/\d{0,5})?$/.test(url.pathname)
  } catch {
    return false
  }
}

/**
 * Reads and checks the configuration; a bad value is a ConfigError naming the variable.
 * `terminal`: whether stdout is a terminal (readable log lines by default).
 */
export const readConfig = (env: Record<string, string | undefined>, terminal = false): ServerConfig => {
  const metricsToken = nonEmpty(env.METRICS_TOKEN)
  // A token is sent in a header: printable ASCII without spaces, long enough not to be guessed.
  if (metricsToken !== undefined && !/^[\x21-\x7e]{16,256}$/.test(metricsToken)) {
    throw new ConfigError("METRICS_TOKEN must be 16 to 256 printable characters without spaces.")
  }
  const publicUrl = nonEmpty(env.PUBLIC_URL)?.replace(/\/+$/, "")
  if (publicUrl !== undefined && !isOrigin(publicUrl)) {
    throw new ConfigError(`PUBLIC_URL must be an origin like https://content.example.com (no path), not '${publicUrl}'.`)
  }
  const databaseUrl = nonEmpty(env.DATABASE_URL)
  if (databaseUrl !== undefined && !isPostgresUrl(databaseUrl)) {
    // (the value is not repeated: it may hold a password)
    throw new ConfigError("DATABASE_URL must be a PostgreSQL URL naming its database, such as postgres://user:password@host:5432/content_site.")
  }
  const redisUrl = nonEmpty(env.REDIS_URL)
  if (redisUrl !== undefined && !isRedisUrl(redisUrl)) {
    // (the value is not repeated: it may hold a password)
    throw new ConfigError("REDIS_URL must be a redis:// or rediss:// URL with a host and at most a database number, such as redis://:password@host:6379/0.")
  }
  const mcpAllowedHosts = allowedHostsOf(env.MCP_ALLOWED_HOSTS)
  // a request's headers are part of the request: Node refuses a headers' timeout past the request's
  const headersTimeoutMs = intOf(env, "HEADERS_TIMEOUT_MS", 10_000, 100, 600_000)
  const requestTimeoutMs = intOf(env, "REQUEST_TIMEOUT_MS", 60_000, 100, 3_600_000)
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(`HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not be longer than REQUEST_TIMEOUT_MS (${requestTimeoutMs}): the headers are part of the request.`)
  }
  return {
    mcpAllowedHosts,
    host: nonEmpty(env.HOST) ?? "0.0.0.0",
    port: intOf(env, "PORT", 3000, 0, 65535),
    publicUrl,
    databaseUrl,
    dataDir: nonEmpty(env.DATA_DIR) ?? "./data",
    redisUrl,
    seedDemo: boolOf(env, "SEED_DEMO", true),
    limits: {
      requestsPerMinute: intOf(env, "RATE_LIMIT_PER_MINUTE", defaultLimits.requestsPerMinute, 1, 1_000_000_000),
      dailyEdits: intOf(env, "DAILY_EDIT_LIMIT", defaultLimits.dailyEdits, 1, 1_000_000_000),
      maxPerPage: intOf(env, "MAX_PER_PAGE", defaultLimits.maxPerPage, 1, 100),
      authFailuresPerMinute: intOf(env, "AUTH_FAILURE_LIMIT_PER_MINUTE", defaultLimits.authFailuresPerMinute, 1, 1_000_000_000),
      clientRegistrationsPerHour: intOf(env, "OAUTH_REGISTRATION_LIMIT_PER_HOUR", defaultLimits.clientRegistrationsPerHour, 1, 1_000_000_000),
      authorizationRequestsPerHour: intOf(env, "OAUTH_AUTHORIZATION_LIMIT_PER_HOUR", defaultLimits.authorizationRequestsPerHour, 1, 1_000_000_000),
    },
    imageFetchAllowPrivate: boolOf(env, "IMAGE_FETCH_ALLOW_PRIVATE", false),
    trustProxy: boolOf(env, "TRUST_PROXY", false),
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: intOf(env, "KEEP_ALIVE_TIMEOUT_MS", 5_000, 100, 600_000),
    shutdownGraceMs: intOf(env, "SHUTDOWN_GRACE_MS", 10_000, 0, 600_000),
    editLockTimeoutMs: intOf(env, "EDIT_LOCK_TIMEOUT_MS", 5_000, 50, 60_000),
    oauthKeyRefreshMs: intOf(env, "OAUTH_KEY_REFRESH_MS", 60_000, 50, 3_600_000),
    oauthKeyRotateDays: intOf(env, "OAUTH_KEY_ROTATE_DAYS", DEFAULT_KEY_ROTATE_DAYS, 0, 3_650),
    oauthClientMetadataDocuments: boolOf(env, "OAUTH_CLIENT_METADATA_DOCUMENTS", true),
    logLevel: oneOf(env, "LOG_LEVEL", LOG_LEVELS, "info"),
    logFormat: oneOf<LogFormat>(env, "LOG_FORMAT", ["json", "pretty"], terminal ? "pretty" : "json"),
    metricsToken,
  }
}

/**
 * Every environment variable the service reads (docs/operations.md's table, which a test holds to
 * this list), and the OpenTelemetry SDK's own family (`OTEL_*`, read by the SDK, not checked here).
 */
export const SETTINGS: ReadonlyArray<string> = [
  "PORT", "HOST", "PUBLIC_URL", "DATABASE_URL", "DATA_DIR", "REDIS_URL", "SEED_DEMO", "RATE_LIMIT_PER_MINUTE",
  "DAILY_EDIT_LIMIT", "MAX_PER_PAGE", "AUTH_FAILURE_LIMIT_PER_MINUTE", "OAUTH_KEY_REFRESH_MS", "OAUTH_CLIENT_METADATA_DOCUMENTS",
  "OAUTH_KEY_ROTATE_DAYS", "OAUTH_REGISTRATION_LIMIT_PER_HOUR", "OAUTH_AUTHORIZATION_LIMIT_PER_HOUR", "IMAGE_FETCH_ALLOW_PRIVATE", "TRUST_PROXY", "HEADERS_TIMEOUT_MS",
  "REQUEST_TIMEOUT_MS", "KEEP_ALIVE_TIMEOUT_MS", "MCP_ALLOWED_HOSTS", "EDIT_LOCK_TIMEOUT_MS", "SHUTDOWN_GRACE_MS", "LOG_LEVEL",
  "LOG_FORMAT", "METRICS_TOKEN",
]

/** Names longer than this are no one's typing of a setting: not compared (the comparison is quadratic in a name's length). */
const MAX_COMPARED_NAME = 64

/** The edit distance of `a` and `b` (insertions, deletions, substitutions, adjacent swaps), or more than `most` once it must be. */
const distance = (a: string, b: string, most: number): number => {
  if (Math.abs(a.length - b.length) > most) return most + 1
  // rows of the Damerau-Levenshtein (optimal string alignment) table: |a| x |b| cells, both at most MAX_COMPARED_NAME
  let before = Array.from({ length: b.length + 1 }, () => 0)
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1)
      row.push(d)
    }
    before = previous
    previous = row
  }
  return previous[b.length]!
}

/**
 * Environment variables that look like a mistyped setting (`DATABASE_ULR`, `REDIS_UR`): not a
 * setting themselves, upper case, and at most two edits from one (one for names under eight
 * characters). A setting misspelt is otherwise silently not set, and its default used: the
 * embedded database for a mistyped DATABASE_URL. Each name is compared with each setting once.
 */
export const misspeltSettings = (env: Record<string, string | undefined>): Array<{ readonly given: string; readonly meant: string }> => {
  const known = new Set(SETTINGS)
  const found: Array<{ given: string; meant: string }> = []
  for (const given of Object.keys(env)) {
    if (known.has(given) || given.length > MAX_COMPARED_NAME || !/^[A-Z][A-Z0-9_]*$/.test(given)) continue
    const most = given.length < 8 ? 1 : 2
    let best: { meant: string; d: number } | undefined
    for (const meant of SETTINGS) {
      const d = distance(given, meant, most)
      if (d <= most && (best === undefined || d < best.d)) best = { meant, d }
    }
    if (best !== undefined) found.push({ given, meant: best.meant })
  }
  return found
}
