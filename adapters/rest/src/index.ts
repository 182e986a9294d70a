/** The REST adapter (Koa): the operations, their pipeline and the OpenAPI document, on the HTTP kit (`@content-site/http`). */
export { API_PREFIX, linkHeader, mountRest, presentedKey } from "./rest/mountRest.ts"
export { type Operation, operations } from "./rest/operations.ts"
export { openApiDocument } from "./openapi/openapi.ts"
