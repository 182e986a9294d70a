/**
 * Tracing started before a host's modules load (it instruments them as they do): a setting that
 * cannot be used stops the start with one sentence, as the host's own configuration errors do.
 * Imports nothing of the server.
 */
import { startTracing, TracingConfigError } from "@content-site/telemetry/tracing"

export const startHostTracing = async (env: Record<string, string | undefined>) => {
  try {
    return await startTracing(env)
  } catch (err) {
    if (!(err instanceof TracingConfigError)) throw err
    console.error(`Configuration error: ${err.message}`)
    process.exit(1)
  }
}
