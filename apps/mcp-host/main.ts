/**
 * An MCP-only host: the same storage, runtime, middleware and MCP connector (with its OAuth
 * authorization server and sign-in pages) as `apps/server`, without the REST API and the web
 * pages. Same environment variables; SIGTERM/SIGINT drain and close.
 */
import { runHost } from "../server/host.ts"

runHost(["mcp"], (server) => {
  console.log(`Content-Site MCP connector is listening on ${server.url}/mcp`)
  console.log(`  try: npx @modelcontextprotocol/inspector --cli ${server.url}/mcp --transport http --method tools/list`)
  if (server.demo !== null) console.log(`Demo sign-in: ${server.demo.email} / ${server.demo.password}`)
})
