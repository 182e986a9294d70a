import { Data } from "effect"

/** One offending protected block in a refused edit or restore. */
export interface ProtectedBlockViolation {
  readonly kind: "removed" | "changed" | "forged" | "hidden"
  readonly href: string | null
  readonly text: string
}

/** One field-level complaint inside an `invalid_request` problem. */
export interface FieldError {
  /** The field as the contract names it: keys and 0-based indexes joined by `/` (`edits/0/find`). */
  readonly path: string
  readonly message: string
}

/** The request is malformed: bad JSON, unknown key, value out of range, HTML nested too deep. */
export class InvalidRequest extends Data.TaggedError("InvalidRequest")<{
  readonly detail: string
  readonly errors: ReadonlyArray<FieldError>
}> {}

/**
 * No valid credential was presented. `attemptedAccountId`, never sent to the caller, names the
 * account whose email was given with a wrong password, so that its owner can be shown the attempt.
 */
export class Unauthenticated extends Data.TaggedError("Unauthenticated")<{ readonly detail: string; readonly attemptedAccountId?: string }> {}

/** The credential is valid but may not do this (a read-only key writing). */
export class InsufficientScope extends Data.TaggedError("InsufficientScope")<{ readonly detail: string }> {}

/** The object does not exist or belongs to another account: the two are indistinguishable. */
export class NotFound extends Data.TaggedError("NotFound")<{ readonly resource: string; readonly id: string }> {}

/** One unit two writers changed differently (`base_revision` merges): the HTML (or title) of each side. */
export interface MergeConflictView {
  /** `title`, or `body/<index>`: the base revision's first top-level block the conflict covers. */
  readonly unit: string
  readonly base: string
  readonly theirs: string
  readonly mine: string
}

/**
 * A concurrent writer won and this change could not be applied safely; after a three-way merge,
 * `conflicts` lists the units both writers changed differently.
 */
export class EditConflict extends Data.TaggedError("EditConflict")<{
  readonly detail: string
  readonly conflicts?: ReadonlyArray<MergeConflictView>
  /** When retrying soon is the answer (the same Idempotency-Key still running): seconds to wait (`Retry-After`). */
  readonly retryAfterSeconds?: number
}> {}

/**
 * The caller's `If-Match` / `if_revision` no longer matches the article, or its `If-None-Match`
 * names the revision the article is at (`noneMatch` set).
 */
export class PreconditionFailed extends Data.TaggedError("PreconditionFailed")<{
  /** The revisions the precondition accepts; none when its tags name no revision of this article (or when only If-None-Match was sent). */
  readonly expected: ReadonlyArray<number>
  readonly current: number
  /** Set when it is `If-None-Match` that failed: the revisions it names, or `*` (any). */
  readonly noneMatch?: ReadonlyArray<number> | "*"
}> {}

/** The body or the image is larger than the service accepts. */
export class PayloadTooLarge extends Data.TaggedError("PayloadTooLarge")<{ readonly detail: string }> {}

/** The request's content type is not one this endpoint accepts. */
export class UnsupportedMediaType extends Data.TaggedError("UnsupportedMediaType")<{ readonly detail: string }> {}

/** The bytes are not an accepted raster image (JPEG, PNG, WebP, GIF, AVIF). */
export class UnsupportedImage extends Data.TaggedError("UnsupportedImage")<{ readonly detail: string }> {}

/** The edit removes, changes or forges a protected link block. */
export class ProtectedLinkChanged extends Data.TaggedError("ProtectedLinkChanged")<{
  readonly blocks: ReadonlyArray<ProtectedBlockViolation>
}> {}

/** One edit of a PATCH whose `find` does not occur exactly once. */
export interface EditMismatch {
  /** `edits/<index>/find`. */
  readonly path: string
  readonly message: string
  /** How many times `find` occurs, counted up to 2: 0, or 2 for "2 or more" (the search stops at the second). */
  readonly count: number
}

/** A find-and-replace edit cannot be applied: its `find` occurs 0 or 2+ times in the body. */
export class EditNotApplicable extends Data.TaggedError("EditNotApplicable")<{
  readonly errors: ReadonlyArray<EditMismatch>
}> {}

/** An `Idempotency-Key` already used, within its 24 hours, for a different request. */
export class IdempotencyKeyReused extends Data.TaggedError("IdempotencyKeyReused")<{ readonly detail: string }> {}

/** The image URL is not https or points at a non-public address. */
export class UnsafeUrl extends Data.TaggedError("UnsafeUrl")<{ readonly detail: string }> {}

/** Fetching the image URL failed (status, timeout, network). */
export class ImageFetchFailed extends Data.TaggedError("ImageFetchFailed")<{ readonly detail: string }> {}

/** Too many requests in the current minute. */
export class RateLimited extends Data.TaggedError("RateLimited")<{
  readonly limit: number
  readonly retryAfterSeconds: number
  /** What was counted, for the problem's sentence; the account's requests a minute when absent. */
  readonly counted?: string
}> {}

/** The account's article changes for this UTC day are used up. */
export class DailyEditLimit extends Data.TaggedError("DailyEditLimit")<{
  readonly limit: number
  readonly retryAfterSeconds: number
}> {}

/** A dependency (the database) cannot be reached; nothing was written; retry later. */
export class Unavailable extends Data.TaggedError("Unavailable")<{ readonly detail: string }> {}

/** Every error a core use case can fail with. */
export type CoreError =
  | InvalidRequest
  | Unauthenticated
  | InsufficientScope
  | NotFound
  | EditConflict
  | PreconditionFailed
  | PayloadTooLarge
  | UnsupportedMediaType
  | UnsupportedImage
  | ProtectedLinkChanged
  | EditNotApplicable
  | IdempotencyKeyReused
  | UnsafeUrl
  | ImageFetchFailed
  | RateLimited
  | DailyEditLimit
  | Unavailable

/** How one core error appears on the wire: HTTP status, contract code and problem title. */
export interface ProblemKind {
  readonly status: number
  readonly code: string
  readonly title: string
}

/**
 * The one exhaustive table from error tag to contract code. Adding an error to `CoreError`
 * breaks the build here until it is given a status and code.
 */
export const problemKinds = {
  InvalidRequest: { status: 400, code: "invalid_request", title: "Invalid request" },
  Unauthenticated: { status: 401, code: "unauthenticated", title: "Unauthenticated" },
  InsufficientScope: { status: 403, code: "insufficient_scope", title: "Insufficient scope" },
  NotFound: { status: 404, code: "not_found", title: "Not found" },
  EditConflict: { status: 409, code: "edit_conflict", title: "Edit conflict" },
  PreconditionFailed: { status: 412, code: "precondition_failed", title: "Precondition failed" },
  PayloadTooLarge: { status: 413, code: "payload_too_large", title: "Payload too large" },
  UnsupportedMediaType: { status: 415, code: "unsupported_media_type", title: "Unsupported media type" },
  UnsupportedImage: { status: 415, code: "unsupported_image", title: "Unsupported image" },
  ProtectedLinkChanged: { status: 422, code: "protected_link_changed", title: "Protected link changed" },
  EditNotApplicable: { status: 422, code: "edit_not_applicable", title: "Edit not applicable" },
  IdempotencyKeyReused: { status: 422, code: "idempotency_key_reused", title: "Idempotency key reused" },
  UnsafeUrl: { status: 422, code: "unsafe_url", title: "Unsafe URL" },
  ImageFetchFailed: { status: 422, code: "image_fetch_failed", title: "Image fetch failed" },
  RateLimited: { status: 429, code: "rate_limited", title: "Rate limited" },
  DailyEditLimit: { status: 429, code: "daily_edit_limit", title: "Daily edit limit reached" },
  Unavailable: { status: 503, code: "unavailable", title: "Service unavailable" },
} as const satisfies Record<CoreError["_tag"], ProblemKind>

/** The problem used for defects: never carries a stack trace or internal message. */
export const internalProblemKind: ProblemKind = { status: 500, code: "internal", title: "Internal error" }
