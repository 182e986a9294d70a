import { pino, type Logger } from "pino"
import { PinoPretty } from "pino-pretty"
import { GatheredLines } from "./gatheredLines.ts"

/** The levels `LOG_LEVEL` accepts, most severe first (`silent` logs nothing). */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const

/** A level `LOG_LEVEL` accepts. */
export type LogLevel = (typeof LOG_LEVELS)[number]

/** How the log is written: JSON lines (log shippers) or readable lines (a person at a terminal). */
export type LogFormat = "json" | "pretty"

/** What the service's logger is made from. */
export interface LoggerOptions {
  readonly level: LogLevel
  readonly format: LogFormat
  /** Where lines go (default stdout, file descriptor 1). */
  readonly destination?: number
}

// Fields of an access line that the readable format shows in its message instead of after it.
// (and the bulky fields of the service's events: the migrations' names, the signal named in the message)
const ACCESS_FIELDS = "method,route,status,duration_ms,request_id,channel,account_id,trace_id,tool,code,migrations,signal"

// JSON lines are gathered into writes of 12 Ki characters (pino's asynchronous logging as its
// documentation sets it up, gathered by `GatheredLines`), and whatever is gathered goes out at least
// every 100 ms, so a quiet server's lines are not held back. One write a line was the dearest part
// of an access line: a system call and a thread-pool hand-off per request (docs/benchmarks.md,
// "Operating costs").
const LOG_WRITE_CHARACTERS = 12 * 1024
const LOG_FLUSH_MS = 100

/**
 * `,"time":"<ISO 8601>"` for pino. The date and time to the second are written by `toISOString`
 * once a second; each millisecond then only appends its three digits (under load about ten lines
 * share a millisecond, and a GET's line at a few thousand a second seldom did: `toISOString` was
 * then a tenth of what an access line cost).
 */
export const isoTime = (now: () => number = Date.now): (() => string) => {
  let second = Number.NaN
  let prefix = ""
  let at = Number.NaN
  let field = ""
  return () => {
    const ms = now()
    if (ms !== at) {
      at = ms
      const s = Math.floor(ms / 1000)
      // `…T03:24:12.` (what precedes the milliseconds, `sssZ`, in every year toISOString writes)
      if (s !== second) {
        second = s
        prefix = `,"time":"${new Date(s * 1000).toISOString().slice(0, -4)}`
      }
      const milli = ms - s * 1000
      field = `${prefix}${milli < 10 ? "00" : milli < 100 ? "0" : ""}${milli}Z"`
    }
    return field
  }
}

/**
 * The service's logger: pino with the contract's fields (`time` as ISO 8601, `level` by name,
 * `msg`), no pid or hostname. JSON lines go out through SonicBoom (pino's asynchronous writer) in
 * writes of 12 Ki characters gathered by `GatheredLines`, or every 100 ms when fewer lines come
 * (and when the process exits); the readable format (pino-pretty) writes each line at once.
 */
export const createLogger = (options: LoggerOptions): Logger => {
  const settings = {
    level: options.level,
    base: undefined,
    timestamp: isoTime(),
    formatters: { level: (label: string) => ({ level: label }) },
  }
  const fd = options.destination ?? 1
  if (options.format === "pretty") {
    return pino(
      settings,
      PinoPretty({
        destination: fd,
        sync: true,
        colorize: true,
        translateTime: "SYS:HH:MM:ss",
        ignore: ACCESS_FIELDS,
        singleLine: true,
        // An access line reads "GET /api/v1/sites 200 3 ms req_... acc_... [trace <id>]"; the service's events, their message.
        messageFormat: (log, messageKey) => {
          const message = String(log[messageKey] ?? "")
          const tool = log["tool"] !== undefined ? ` (${String(log["tool"])})` : ""
          // an event of a request (`internal error`, `MCP tool failed`): its tool and request id, hidden as fields above
          if (log["route"] === undefined) return log["request_id"] !== undefined ? `${message}${tool} ${String(log["request_id"])}` : message
          const code = log["code"] !== undefined ? ` ${String(log["code"])}` : ""
          const account = log["account_id"] !== undefined ? ` ${String(log["account_id"])}` : ""
          // with tracing on, the trace to look up (the JSON lines carry it as `trace_id`)
          const trace = log["trace_id"] !== undefined ? ` trace ${String(log["trace_id"])}` : ""
          return `${message}${code}${tool} ${String(log["duration_ms"])} ms ${String(log["request_id"])}${account}${trace}`
        },
      }),
    )
  }
  return pino(settings, new GatheredLines(fd, LOG_WRITE_CHARACTERS, LOG_FLUSH_MS))
}
