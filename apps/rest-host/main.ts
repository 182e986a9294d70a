/**
 * A REST-only host: the same storage, runtime, middleware and REST adapter as `apps/server`, without
 * the MCP connector and the web pages. Same environment variables; SIGTERM/SIGINT drain and close.
 */
import { ConfigError } from "../server/config.ts"
import { startServer } from "../server/server.ts"

const main = async () => {
  const server = await startServer({ env: process.env, surfaces: ["rest"] })
  console.log(`Content-Site REST API is listening on ${server.url}/api/v1 (reference: ${server.url}/api/docs)`)
  if (server.demo !== null) {
    console.log(`Demo API key (shown once): ${server.demo.apiKey}`)
    console.log(`  try: curl -H "Authorization: Bearer ${server.demo.apiKey}" ${server.url}/api/v1/sites`)
  }
  let stopping = false
  const stop = () => {
    if (stopping) return
    stopping = true
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err)
        process.exit(1)
      },
    )
  }
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? `Configuration error: ${err.message}` : err)
  process.exit(1)
})
