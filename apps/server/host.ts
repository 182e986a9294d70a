/**
 * The process side of every host (`npm start`, the REST-only and MCP-only hosts): start the
 * server from the environment, print what a person needs, and on SIGTERM/SIGINT drain in-flight
 * requests and close the database. A configuration error stops the start with its message.
 */
import { DataDirLocked } from "@content-site/orm"
import { ConfigError } from "./config.ts"
import { startServer, type StartedServer, type StartOptions } from "./server.ts"

/** Runs a host until a signal: `announce` prints the addresses (and the demo account, once). */
export const runHost = (surfaces: StartOptions["surfaces"], announce: (server: StartedServer) => void): void => {
  const main = async () => {
    const server = await startServer({ env: process.env, ...(surfaces !== undefined ? { surfaces } : {}) })
    announce(server)
    let stopping = false
    const stop = (signal: string) => {
      if (stopping) return
      stopping = true
      console.log(`${signal}: draining in-flight requests, then closing the database`)
      server.close().then(
        () => process.exit(0),
        (err: unknown) => {
          console.error(err)
          process.exit(1)
        },
      )
    }
    process.on("SIGTERM", () => stop("SIGTERM"))
    process.on("SIGINT", () => stop("SIGINT"))
  }
  main().catch((err: unknown) => {
    // Errors a person can act on are one sentence; anything else keeps its stack for the operator.
    if (err instanceof ConfigError) console.error(`Configuration error: ${err.message}`)
    else if (err instanceof DataDirLocked) console.error(err.message)
    else console.error(err)
    process.exit(1)
  })
}
