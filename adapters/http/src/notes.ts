import type { ParameterizedContext } from "koa"

/**
 * What a request learns on its way that its access log line and metrics report: the account once
 * known, the MCP tool called, the problem code answered. Kept on `ctx.state`; nothing of the
 * request's input (no key, token, cookie or body) is ever noted.
 */
export interface RequestNotes {
  accountId?: string
  /** The MCP tools the request called, at most a batch's worth (known tools' names only, never the caller's text). */
  tools?: Array<{ readonly name: string; readonly outcome: "ok" | "error"; readonly seconds: number }>
  /** The code of the problem answered (REST, pages) or returned as a tool error (MCP). */
  problemCode?: string
  /**
   * The route's template, where a path was recognised without a router's match (a known API path
   * answered 405 or `OPTIONS` for a method no operation takes): `/api/v1/articles/{id}`.
   */
  route?: string
}

/** The notes of a request (an empty object until something is noted). */
export const notesOf = (ctx: ParameterizedContext): RequestNotes => {
  const state = ctx.state as { notes?: RequestNotes }
  state.notes ??= {}
  return state.notes
}

/** Notes the account a request acts for, once it is authenticated. */
export const noteAccount = (ctx: ParameterizedContext, accountId: string): void => {
  notesOf(ctx).accountId = accountId
}

/** A structured event log (pino's `Logger` is one): fields first, then the message. */
export interface EventLog {
  readonly info: (fields: object, msg: string) => void
  readonly warn: (fields: object, msg: string) => void
  readonly error: (fields: object, msg: string) => void
}

/**
 * Runs `work` inside a span named `name` (tracing on), or just runs it. The span is marked an error
 * when `work` throws, or when `failed` names what went wrong with the value it answered (an MCP
 * tool's `isError` result: a failure the protocol answers as a value, not by throwing).
 */
export type SpanRunner = <A>(name: string, work: () => Promise<A>, failed?: (result: A) => string | undefined) => Promise<A>

const consoleLog: EventLog = {
  info: (_fields, msg) => console.log(msg),
  warn: (fields, msg) => console.error(msg, fields),
  error: (fields, msg) => console.error(msg, fields),
}

/** The event log an adapter reports to: the server's (pino), or the console when none was given. */
export const eventLogOf = (deps: { readonly log?: EventLog | undefined }): EventLog => deps.log ?? consoleLog
