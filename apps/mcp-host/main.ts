/**
 * An MCP-only host: the same storage, runtime, middleware and MCP connector (with its OAuth
 * authorization server and sign-in pages) as `apps/server`, without the REST API and the web
 * pages. Same environment variables; SIGTERM/SIGINT drain and close.
 */
import { startHostTracing } from "../server/tracingStart.ts"

const tracing = await startHostTracing(process.env)
const { runHost } = await import("../server/host.ts")

runHost(["mcp"], tracing, (server, say) => {
  // {mcp_url} is under PUBLIC_URL: the endpoint refuses another Host, and tokens are bound to it.
  say(`Content-Site MCP connector is listening on ${server.publicUrl}/mcp (Streamable HTTP)`)
  say(`  try: npx @modelcontextprotocol/inspector --cli ${server.publicUrl}/mcp --transport http --method tools/list`)
  if (server.demo !== null) say(`Demo sign-in: ${server.demo.email} / ${server.demo.password} (created now, shown once)`)
})
