/**
 * The SDK's handler of each protocol method parses its request with the protocol's own (zod)
 * schema before anything else runs, and lets the schema's error go out as an internal error
 * (-32603) whose message is the issues dumped as JSON. A message whose params the protocol's
 * schema refuses is the caller's mistake: here it is answered as one, invalid params (-32602),
 * its message the problem's code and a sentence naming each field (`params/name: ...`), its data
 * the `invalid_request` problem, as every other refusal at `/mcp` is.
 */
import type { FieldError, Problem } from "@content-site/core"
import { refusal } from "./calls.ts"

/** Issues named in one refusal at most (a schema's issues are as many as the message's fields, which the body's size bounds). */
const MAX_ISSUES = 10

/** The first `MAX_ISSUES` issues of a schema's refusal (zod's `issues`), or undefined for any other error. */
const issuesOf = (error: unknown): ReadonlyArray<{ readonly path: ReadonlyArray<PropertyKey>; readonly message: string }> | undefined => {
  if (typeof error !== "object" || error === null) return undefined
  const issues = (error as { issues?: unknown }).issues
  if (!Array.isArray(issues)) return undefined
  return issues.slice(0, MAX_ISSUES).filter(
    (i): i is { path: Array<PropertyKey>; message: string } => typeof i === "object" && i !== null && Array.isArray(i.path) && typeof i.message === "string",
  )
}

/** The request handlers a `Protocol` (the SDK's `Server`) keeps by method: the SDK's own, not in its types. */
type Handlers = Map<string, (request: unknown, extra: { readonly requestId: string | number }) => Promise<unknown>>

/**
 * Wraps each request handler `protocol` has now so that a schema's refusal of the request is the
 * problem `problemOf` makes of it (given the method and the request's id as the SDK saw it). Answers whether the
 * SDK's handlers were found (a later SDK may keep them elsewhere: then nothing changes).
 */
export const refuseMalformedParams = (
  protocol: object,
  problemOf: (method: string, detail: string, errors: ReadonlyArray<FieldError>, requestId: string | number) => Promise<Problem>,
): boolean => {
  const handlers = (protocol as { _requestHandlers?: unknown })._requestHandlers
  if (!(handlers instanceof Map)) return false
  for (const [method, handler] of (handlers as Handlers).entries()) {
    handlers.set(method, async (request: unknown, extra: { readonly requestId: string | number }) => {
      try {
        return await handler(request, extra)
      } catch (error) {
        const issues = issuesOf(error)
        if (issues === undefined || issues.length === 0) throw error
        const errors = issues.map((i) => ({ path: i.path.map(String).join("/") || "params", message: i.message }))
        throw refusal(await problemOf(method, `The ${method} message's params are not valid: ${errors.map((e) => `${e.path}: ${e.message}`).join("; ")}.`, errors, extra.requestId))
      }
    })
  }
  return true
}
