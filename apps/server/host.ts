/**
 * The process side of every host (`npm start`, the REST-only and MCP-only hosts): start the
 * server from the environment, print what a person needs, and on SIGTERM/SIGINT drain in-flight
 * requests and close the database. A configuration error stops the start with its message.
 */
import { DatabaseUnreachable, DataDirLocked, DataDirUnusable, SchemaTooNew } from "@content-site/orm"
import type { Tracing } from "@content-site/telemetry"
import { ConfigError } from "./config.ts"
import { ListenFailed, startServer, type StartedServer, type StartOptions } from "./server.ts"

/** Writes one line of a host's announcement (a log event at level info, whatever LOG_LEVEL says). */
export type Say = (line: string) => void

/**
 * Runs a host until a signal: `announce` says the addresses (and the demo account, once) through
 * `say`. `tracing` is what `startTracing` answered, if tracing is on.
 */
export const runHost = (surfaces: StartOptions["surfaces"], tracing: Tracing | undefined, announce: (server: StartedServer, say: Say) => void): void => {
  // A signal while the service starts (migrating, seeding) is kept until it has started, and then
  // stops it as any signal does (the database closed, not cut off in the middle of a write); a
  // second one while it still starts, or while it drains, ends the process at once.
  let started: StartedServer | undefined
  let signalledWhileStarting: string | undefined
  let stopping = false
  const stop = (signal: string) => {
    if (started === undefined) {
      if (signalledWhileStarting !== undefined) process.exit(1)
      signalledWhileStarting = signal
      return
    }
    // A second signal while it drains (Ctrl-C again) ends it at once: requests still running are
    // cut off, their transactions rolled back.
    if (stopping) {
      started.logger.warn({ signal }, `${signal} again: stopping now, without waiting for requests in flight`)
      // once that line is written (the log's writes are asynchronous), or after a second at most
      const exit = () => process.exit(1)
      setTimeout(exit, 1_000)
      started.logger.flush(exit)
      return
    }
    stopping = true
    const server = started
    const { logger } = server
    logger.info({ signal }, `${signal}: draining in-flight requests, then closing the database`)
    server.close().then(
      async () => {
        const spans = await tracing?.shutdown().catch(() => undefined)
        // what the span export worker sent, and lost (a collector down or slow: failed; over its queue cap: dropped)
        if (spans !== undefined) logger[spans.failed + spans.dropped > 0 ? "warn" : "info"]({ spans }, "tracing shut down")
        process.exit(0)
      },
      (err: unknown) => {
        logger.fatal({ err }, "could not close cleanly")
        logger.flush()
        process.exit(1)
      },
    )
  }
  process.on("SIGTERM", () => stop("SIGTERM"))
  process.on("SIGINT", () => stop("SIGINT"))
  const main = async () => {
    const server = await startServer({ env: process.env, ...(surfaces !== undefined ? { surfaces } : {}), ...(tracing !== undefined ? { tracing } : {}) })
    started = server
    const { logger } = server
    // The announcement is for the person who started the service: shown below LOG_LEVEL=info too.
    // (also when a signal came while starting: a demo key made now is shown only this once)
    const announcer = logger.level === "silent" ? logger : logger.child({}, { level: "info" })
    announce(server, (line) => announcer.info(line))
    if (signalledWhileStarting !== undefined) stop(signalledWhileStarting)
  }
  main().catch((err: unknown) => {
    // Errors a person can act on are one sentence; anything else keeps its stack for the operator.
    if (err instanceof ConfigError) console.error(`Configuration error: ${err.message}`)
    else if (err instanceof DataDirLocked || err instanceof DataDirUnusable || err instanceof ListenFailed || err instanceof DatabaseUnreachable || err instanceof SchemaTooNew) console.error(err.message)
    else console.error(err)
    process.exit(1)
  })
}
