import { Effect, Result, Schema, SchemaIssue } from "effect"
import { type FieldError, InvalidRequest } from "../errors.ts"

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * A field's path as the contract writes it (`edits/0/find`, the form every error of the service
 * names a field in): its keys and indexes joined by `/`, a `~` in a key written `~0` and a `/`
 * `~1` (JSON Pointer's escapes, RFC 6901, without the leading slash), so that an unknown key
 * holding either cannot be read as two.
 */
const pathOf = (segments: ReadonlyArray<PropertyKey>): string => segments.map((p) => String(p).replaceAll("~", "~0").replaceAll("/", "~1")).join("/")

const segmentsOf = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined): ReadonlyArray<PropertyKey> =>
  (path ?? []).map((p) => (typeof p === "object" && p !== null && "key" in p ? p.key : p))

/** One field error of a decode (each naming its field as `edits/0/find` does), with the key it names last as it was written (for the detail). */
interface DecodeError extends FieldError {
  readonly key: string
}

const errorsOf = (issue: SchemaIssue.Issue, root: string): ReadonlyArray<DecodeError> => {
  const { issues } = formatter(issue)
  return issues.map((i) => {
    const segments = [...(root === "" ? [] : [root]), ...segmentsOf(i.path as ReadonlyArray<PropertyKey>)]
    const key = segments.length === 0 ? "" : String(segments[segments.length - 1])
    const message = i.message === "Expected no excess property" ? `Unknown key '${key}': it cannot be set here` : i.message
    return { path: segments.length === 0 ? "(root)" : pathOf(segments), message, key }
  })
}

type Decoder = (input: unknown) => Result.Result<unknown, Schema.SchemaError>
const decoders = new WeakMap<Schema.Top, Decoder>()
/** The schema's decoder for untrusted input, made once per schema. */
const decoderOf = (schema: Schema.Codec<any, any, never, never>): Decoder => {
  let decode = decoders.get(schema)
  if (decode === undefined) {
    const parse = Schema.decodeUnknownResult(schema)
    decode = (input) => parse(input, { onExcessProperty: "error", errors: "all" })
    decoders.set(schema, decode)
  }
  return decode
}

/**
 * Decodes untrusted input with a core schema, refusing unknown keys, and turns every failure
 * into an `InvalidRequest` whose detail names the offending keys.
 */
export const decodeInput = <S extends Schema.Codec<any, any, never, never>>(
  schema: S,
  input: unknown,
  what: string,
  root = "",
): Effect.Effect<S["Type"], InvalidRequest> => {
  const result = decoderOf(schema)(input)
  if (Result.isSuccess(result)) return Effect.succeed(result.success)
  const found = errorsOf(result.failure.issue, root)
  const unknown = found.filter((e) => e.message.startsWith("Unknown key"))
  const detail =
    unknown.length > 0
      ? `${what}: ${unknown.map((e) => `'${e.key}'`).join(", ")} cannot be set here.`
      : `${what}: ${found.map((e) => `${e.path}: ${e.message}`).join("; ")}.`
  return Effect.fail(new InvalidRequest({ detail, errors: found.map(({ path, message }) => ({ path, message })) }))
}
