/**
 * `npm start`: the whole service (REST, MCP, web pages) on PORT (3000), with the embedded database
 * under DATA_DIR or PostgreSQL with DATABASE_URL. SIGTERM/SIGINT drain in-flight requests and close
 * the database. With OTEL_EXPORTER_OTLP_ENDPOINT set, tracing starts before the server's modules
 * load (so their libraries can be instrumented); without it, nothing of OpenTelemetry is loaded.
 */
import { startHostTracing } from "./tracingStart.ts"

const tracing = await startHostTracing(process.env)
const { runHost } = await import("./host.ts")

runHost(undefined, tracing, (server, say) => {
  // Each line ends in a word, not the address: a reader of the JSON line can take the address up to the space.
  say(`Content-Site is listening on ${server.url} (REST API, MCP connector, web pages)`)
  const base = server.publicUrl
  say(`  API reference: ${base}/api/docs    OpenAPI: ${base}/api/v1/openapi.json`)
  if (server.demo !== null) {
    say("Demo account (created now, shown once):")
    say(`  sign in at ${base}/  email: ${server.demo.email}  password: ${server.demo.password}`)
    say(`  API key: ${server.demo.apiKey}`)
    say(`  try:     curl -H "Authorization: Bearer ${server.demo.apiKey}" ${base}/api/v1/sites`)
  }
})
