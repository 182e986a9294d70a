/**
 * `npm start`: the whole service (REST, MCP, web pages) on PORT (3000), with the embedded database
 * under DATA_DIR or PostgreSQL with DATABASE_URL. SIGTERM/SIGINT drain in-flight requests and close
 * the database.
 */
import { runHost } from "./host.ts"

runHost(undefined, (server) => {
  console.log(`Content-Site is listening on ${server.url}`)
  const base = process.env.PUBLIC_URL?.replace(/\/+$/, "") || server.url
  console.log(`  API reference: ${base}/api/docs    OpenAPI: ${base}/api/v1/openapi.json`)
  if (server.demo !== null) {
    console.log("")
    console.log("Demo account (created now, shown once):")
    console.log(`  sign in at ${base}/  email: ${server.demo.email}  password: ${server.demo.password}`)
    console.log(`  API key: ${server.demo.apiKey}`)
    console.log(`  try:     curl -H "Authorization: Bearer ${server.demo.apiKey}" ${base}/api/v1/sites`)
  }
})
