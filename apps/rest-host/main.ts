/**
 * A REST-only host: the same storage, runtime, middleware and REST adapter as `apps/server`, without
 * the MCP connector and the web pages. Same environment variables; SIGTERM/SIGINT drain and close.
 */
import { startHostTracing } from "../server/tracingStart.ts"

const tracing = await startHostTracing(process.env)
const { runHost } = await import("../server/host.ts")

runHost(["rest"], tracing, (server, say) => {
  say(`Content-Site REST API is listening on ${server.url}/api/v1 (reference: ${server.url}/api/docs)`)
  if (server.demo !== null) {
    say(`Demo API key (shown once): ${server.demo.apiKey}`)
    say(`  try: curl -H "Authorization: Bearer ${server.demo.apiKey}" ${server.url}/api/v1/sites`)
  }
})
