/**
 * An MCP-only host: the same storage, runtime, middleware and MCP connector (with its OAuth
 * authorization server and sign-in pages) as `apps/server`, without the REST API and the web
 * pages. Same environment variables; SIGTERM/SIGINT drain and close.
 */
import { ConfigError } from "../server/config.ts"
import { startServer } from "../server/server.ts"

const main = async () => {
  const server = await startServer({ env: process.env, surfaces: ["mcp"] })
  console.log(`Content-Site MCP connector is listening on ${server.url}/mcp`)
  console.log(`  try: npx @modelcontextprotocol/inspector --cli ${server.url}/mcp --transport http --method tools/list`)
  if (server.demo !== null) console.log(`Demo sign-in: ${server.demo.email} / ${server.demo.password}`)
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
