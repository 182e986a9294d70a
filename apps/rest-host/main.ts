/**
 * A REST-only host: the same storage, runtime, middleware and REST adapter as `apps/server`, without
 * the MCP connector and the web pages. Same environment variables; SIGTERM/SIGINT drain and close.
 */
import { runHost } from "../server/host.ts"

runHost(["rest"], (server) => {
  console.log(`Content-Site REST API is listening on ${server.url}/api/v1 (reference: ${server.url}/api/docs)`)
  if (server.demo !== null) {
    console.log(`Demo API key (shown once): ${server.demo.apiKey}`)
    console.log(`  try: curl -H "Authorization: Bearer ${server.demo.apiKey}" ${server.url}/api/v1/sites`)
  }
})
