import { type CoreError, internalProblemKind, type ProblemKind, problemKinds } from "./errors.ts"
import type { Problem } from "./schema/resources.ts"

/** The problem kind (status, code, title) of a core error. */
export const problemKindOf = (error: CoreError): ProblemKind => problemKinds[error._tag]

const detailOf = (error: CoreError): string => {
  switch (error._tag) {
    case "InvalidRequest":
    case "Unauthenticated":
    case "InsufficientScope":
    case "EditConflict":
    case "PayloadTooLarge":
    case "UnsupportedMediaType":
    case "UnsupportedImage":
    case "UnsafeUrl":
    case "ImageFetchFailed":
    case "IdempotencyKeyReused":
    case "Unavailable":
      return error.detail
    case "NotFound":
      // a path is nobody's object: "no endpoint with id '/api/v1/x' on this account" misleads
      return error.resource === "endpoint"
        ? `No endpoint at '${error.id}': the API's paths are listed in its OpenAPI document, /api/v1/openapi.json.`
        : error.resource === "revision"
          ? revisionNotFound(error.id)
          : `No ${error.resource} with id '${error.id}' on this account.`
    case "PreconditionFailed":
      return error.noneMatch !== undefined
        ? error.noneMatch === "*"
          ? `The article exists (at revision ${error.current}), and If-None-Match: * asks for a change only where it does not; nothing was changed.`
          : `The article is at revision ${error.current}, which If-None-Match names; nothing was changed: fetch it again if you meant to change it.`
        : error.expected.length === 0
        ? `The article is at revision ${error.current}, and the precondition names no revision of this article (If-Match takes its ETag, "<article id>-r<revision>", compared strongly: a weak W/ tag never matches): fetch it again and re-apply your change.`
        : `The article is at revision ${error.current}, not ${error.expected.join(" or ")}: fetch it again and re-apply your change.`
    case "ProtectedLinkChanged":
      return `The edit removes, changes or forges ${error.blocks.length} protected link block(s); keep every element carrying data-service-protected exactly as it is (moving it is allowed).`
    case "EditNotApplicable":
      return `${error.errors.length} edit(s) cannot be applied: each find must occur exactly once in the current body (as get_article / GET serves it); make it longer to be unique, or fetch the article again.`
    case "RateLimited":
      return `More than ${error.limit} ${error.counted ?? "requests in a minute"}; retry in ${error.retryAfterSeconds} s.`
    case "DailyEditLimit":
      return `The account's ${error.limit} article changes for today (UTC) are used up; retry after midnight UTC, in ${error.retryAfterSeconds} s.`
  }
}

/** The RFC 9457 problem object for a core error, as REST and MCP both send it. */
export const toProblem = (error: CoreError, requestId: string, publicUrl: string): Problem => {
  const kind = problemKindOf(error)
  return {
    type: `${publicUrl}/problems/${kind.code}`,
    title: kind.title,
    status: kind.status,
    code: kind.code,
    detail: detailOf(error),
    request_id: requestId,
    ...(error._tag === "InvalidRequest" || error._tag === "EditNotApplicable" ? { errors: error.errors } : {}),
    ...(error._tag === "ProtectedLinkChanged" ? { blocks: error.blocks } : {}),
    ...(error._tag === "EditConflict" && error.conflicts !== undefined ? { conflicts: error.conflicts } : {}),
    ...(error._tag === "RateLimited" || error._tag === "DailyEditLimit" ? { retry_after: error.retryAfterSeconds } : {}),
  }
}

/** The problem object for a defect: no internal detail leaks. */
export const internalProblem = (requestId: string, publicUrl: string): Problem => ({
  type: `${publicUrl}/problems/${internalProblemKind.code}`,
  title: internalProblemKind.title,
  status: internalProblemKind.status,
  code: internalProblemKind.code,
  detail: "Something went wrong on our side; the request id identifies it in our logs.",
  request_id: requestId,
})

/** Whether an unknown failure value is one of the core's tagged errors. */
export const isCoreError = (u: unknown): u is CoreError =>
  typeof u === "object" && u !== null && "_tag" in u && typeof (u as { _tag: unknown })._tag === "string" && (u as { _tag: string })._tag in problemKinds

/**
 * A revision is named by its article and number (`art_x/99`), or by the number a path gave when it
 * is none (`0`, `x`): "No revision 99 of article 'art_x' on this account.", not "with id 'art_x/99'".
 */
const revisionNotFound = (id: string): string => {
  const slash = id.lastIndexOf("/")
  return slash > 0
    ? `No revision ${id.slice(slash + 1)} of article '${id.slice(0, slash)}' on this account.`
    : `No revision '${id}' of this article: revisions are numbered 1, 2, 3, ... (list_revisions or GET /api/v1/articles/{id}/revisions lists them).`
}
