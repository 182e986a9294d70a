import { Effect, Result, Schema, SchemaIssue } from "effect"
import { type FieldError, InvalidRequest } from "../errors.ts"

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

const pathOf = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>): string =>
  path
    .map((p) => (typeof p === "object" && p !== null && "key" in p ? p.key : p))
    .map((p) => (typeof p === "number" ? `[${p}]` : String(p)))
    .join(".")
    .replace(/\.\[/g, "[")

/** Field errors of a failed decode, one per issue, with a dotted path. */
export const fieldErrorsOf = (issue: SchemaIssue.Issue, root: string): ReadonlyArray<FieldError> => {
  const { issues } = formatter(issue)
  return issues.map((i) => {
    const path = pathOf(i.path as ReadonlyArray<PropertyKey>)
    const full = path === "" ? root : root === "" ? path : `${root}.${path}`
    const message =
      i.message === "Expected no excess property" ? `Unknown key '${path.split(".").pop()}': it cannot be set here` : i.message
    return { path: full === "" ? "(root)" : full, message }
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
  const errors = fieldErrorsOf(result.failure.issue, root)
  const unknown = errors.filter((e) => e.message.startsWith("Unknown key"))
  const detail =
    unknown.length > 0
      ? `${what}: ${unknown.map((e) => `'${e.path.split(".").pop()}'`).join(", ")} cannot be set here.`
      : `${what}: ${errors.map((e) => `${e.path}: ${e.message}`).join("; ")}.`
  return Effect.fail(new InvalidRequest({ detail, errors }))
}
