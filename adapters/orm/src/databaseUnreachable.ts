/**
 * A database (or Redis) the service was pointed at and cannot use at start: a server that does
 * not answer, a name that does not resolve, a role or password refused, a database that does not
 * exist. One sentence for the operator, naming the place without its password; the process stops
 * instead of printing the driver's stack.
 */
export class DatabaseUnreachable extends Error {
  constructor(variable: "DATABASE_URL" | "REDIS_URL", url: string, cause: unknown) {
    super(`Cannot use the ${variable === "DATABASE_URL" ? "PostgreSQL database" : "Redis server"} at ${placeOf(url)} (${variable}): ${reasonOf(cause)}`, { cause })
    this.name = "DatabaseUnreachable"
  }
}

/** `host:port/database` of a URL, never its user's password (an unparsable URL is not repeated). */
const placeOf = (url: string): string => {
  try {
    const u = new URL(url)
    return `${u.host || "the local socket"}${u.pathname.length > 1 ? u.pathname : ""}`
  } catch {
    return "the given address"
  }
}

const reasonOf = (cause: unknown): string => {
  const e = (cause ?? {}) as { code?: unknown; message?: unknown }
  const message = typeof e.message === "string" && e.message.trim() !== "" ? e.message.trim() : String(cause)
  switch (e.code) {
    case "ECONNREFUSED":
      return "nothing answers there (connection refused). Is it running, on that host and port?"
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "the host name does not resolve."
    case "3D000":
      return `${message.replace(/\.$/, "")}. Create it first (docs/operations.md, "PostgreSQL"), or correct the name.`
    case "28P01":
    case "28000":
      return `${message.replace(/\.$/, "")}. Check the user and password.`
    default:
      // (ioredis's only word for a server that refused or dropped the connection)
      if (message === "Connection is closed.") return "nothing answers there, or it closed the connection. Is it running, on that host and port?"
      return message.endsWith(".") ? message : `${message}.`
  }
}
