/**
 * The HTTP kit every HTTP adapter (REST, MCP, the web pages) and the server share: Koa plumbing
 * with no routes of its own. Request ids, the client's address, security headers, strict query
 * strings, problem responses and the error funnel, the Effect runner and its runtime type, web
 * sessions, and the body-limit middleware that lets a client read its 413.
 */
export * from "./deps.ts"
export * from "./requestId.ts"
export * from "./securityHeaders.ts"
export * from "./clientAddress.ts"
export * from "./problems.ts"
export * from "./run.ts"
export * from "./query.ts"
export * from "./session.ts"
export * from "./closeAfterUnreadBody.ts"
export * from "./displayName.ts"
export * from "./notes.ts"
export * from "./ownTurn.ts"
export * from "./jsonDepth.ts"
export * from "./largeTextAsBytes.ts"
export * from "./untilClientLeaves.ts"
