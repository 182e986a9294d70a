import { Effect, Result, Schema, SchemaAST, SchemaIssue } from "effect"
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
  /** The path of the object holding `key` (`edits/0`), "" at the top. */
  readonly parent: string
}

const errorsOf = (issue: SchemaIssue.Issue, root: string): ReadonlyArray<DecodeError> => {
  const { issues } = formatter(issue)
  return issues.map((i) => {
    const segments = [...(root === "" ? [] : [root]), ...segmentsOf(i.path as ReadonlyArray<PropertyKey>)]
    const key = segments.length === 0 ? "" : String(segments[segments.length - 1])
    const message = i.message === "Expected no excess property" ? `Unknown key '${key}': it cannot be set here` : i.message
    return { path: segments.length === 0 ? "(root)" : pathOf(segments), message, key, parent: segments.length > 1 ? pathOf(segments.slice(0, -1)) : "" }
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

/** The `isMaxLength` of an array schema, if it has one (`edits`: MAX_EDITS). */
const maxLengthOf = (ast: SchemaAST.AST): number | undefined => {
  if (ast._tag !== "Arrays") return undefined
  for (const check of ast.checks ?? []) {
    const representation = check.annotations?.representation as { id?: unknown; payload?: { maxLength?: unknown } } | undefined
    if (representation?.id === "effect/schema/isMaxLength" && typeof representation.payload?.maxLength === "number") return representation.payload.maxLength
  }
  return undefined
}

/** The top-level properties of an object schema that are arrays with a maximum length, and the maximum: found once per schema. */
const boundedArrays = new WeakMap<SchemaAST.AST, ReadonlyArray<readonly [PropertyKey, number]>>()
const boundedArraysOf = (ast: SchemaAST.AST): ReadonlyArray<readonly [PropertyKey, number]> => {
  let found = boundedArrays.get(ast)
  if (found === undefined) {
    found = ast._tag !== "Objects" ? [] : ast.propertySignatures.flatMap((p) => {
      const max = maxLengthOf(p.type)
      return max === undefined ? [] : [[p.name, max] as const]
    })
    boundedArrays.set(ast, found)
  }
  return found
}

/**
 * The arrays at the top of an object input longer than their schema allows, found before any
 * element is decoded: the decoder reads every element (and builds an issue for each one it
 * refuses) before it checks the length, and a PATCH of a million `{}` edits held the event loop
 * 23 s. One look a bounded array of the schema (most schemas have none).
 */
const tooLongArrays = (ast: SchemaAST.AST, input: unknown, root: string): ReadonlyArray<DecodeError> => {
  const bounded = boundedArraysOf(ast)
  if (bounded.length === 0 || typeof input !== "object" || input === null || Array.isArray(input)) return []
  const found: Array<DecodeError> = []
  for (const [name, max] of bounded) {
    const value = Object.hasOwn(input, name) ? (input as Record<PropertyKey, unknown>)[name] : undefined
    if (!Array.isArray(value) || value.length <= max) continue
    const segments = [...(root === "" ? [] : [root]), name]
    found.push({ path: pathOf(segments), message: `Expected a value with a length of at most ${max}`, key: String(name), parent: root === "" ? "" : pathOf([root]) })
  }
  return found
}

/** Field errors a refusal lists at most (`errors`); its detail says how many there were in all. */
export const MAX_LISTED_ERRORS = 20
/** Unknown keys a refusal's detail names at most. */
const MAX_NAMED_KEYS = 5
/** Characters of a key a refusal shows at most (a longer one is cut, with `…`). */
const MAX_SHOWN_KEY = 100

/** A key or path as a refusal shows it: at most MAX_SHOWN_KEY characters (code points). */
const shown = (text: string): string => {
  if (text.length <= MAX_SHOWN_KEY) return text
  const points = Array.from(text.slice(0, MAX_SHOWN_KEY * 2))
  return points.length <= MAX_SHOWN_KEY ? text : `${points.slice(0, MAX_SHOWN_KEY).join("")}…`
}

/**
 * A refusal of named query parameters (unknown or repeated), bounded as decodeInput's: `errors`
 * lists at most MAX_LISTED_ERRORS of them, the detail names at most MAX_NAMED_KEYS and counts the
 * rest, each name cut at MAX_SHOWN_KEY characters (1 500 unknown parameters answered 91 KB).
 * `sentence` gets the quoted names (`'a', 'b' and 3 more`) and words the detail.
 */
export const namedParametersRefusal = (
  names: ReadonlyArray<string>,
  message: string,
  sentence: (named: string) => string,
): InvalidRequest => {
  const named = `${names
    .slice(0, MAX_NAMED_KEYS)
    .map((n) => `'${shown(n)}'`)
    .join(", ")}${names.length > MAX_NAMED_KEYS ? ` and ${names.length - MAX_NAMED_KEYS} more` : ""}`
  const listed = names.length > MAX_LISTED_ERRORS ? ` ${names.length} in all; errors lists the first ${MAX_LISTED_ERRORS}.` : ""
  return new InvalidRequest({
    detail: `${sentence(named)}${listed}`,
    errors: names.slice(0, MAX_LISTED_ERRORS).map((n) => ({ path: shown(n), message })),
  })
}

/**
 * Decodes untrusted input with a core schema, refusing unknown keys, and turns every failure
 * into an `InvalidRequest` whose detail names the offending keys. An answer is bounded whatever
 * the input holds: at most MAX_LISTED_ERRORS field errors (the detail counts the rest) and
 * MAX_NAMED_KEYS keys named in the detail, each key and path cut at MAX_SHOWN_KEY characters
 * (a body of 100 000 unknown keys answered 8.4 MB). Work: linear in the input's issues; an array at
 * the top longer than its schema's `isMaxLength` is refused before any element is decoded.
 */
export const decodeInput = <S extends Schema.Codec<any, any, never, never>>(
  schema: S,
  input: unknown,
  what: string,
  root = "",
): Effect.Effect<S["Type"], InvalidRequest> => {
  const tooLong = tooLongArrays(schema.ast, input, root)
  const result = tooLong.length > 0 ? undefined : decoderOf(schema)(input)
  if (result !== undefined && Result.isSuccess(result)) return Effect.succeed(result.success)
  const found = result === undefined ? tooLong : errorsOf(result.failure.issue, root)
  const unknown = found.filter((e) => e.message.startsWith("Unknown key"))
  const andMore = (all: number) => (all > MAX_NAMED_KEYS ? ` and ${all - MAX_NAMED_KEYS} more` : "")
  const listed = found.length > MAX_LISTED_ERRORS ? ` ${found.length} errors in all; errors lists the first ${MAX_LISTED_ERRORS}.` : ""
  const detail =
    unknown.length > 0
      ? `${what}: ${unknown
          .slice(0, MAX_NAMED_KEYS)
          .map((e) => `'${shown(e.key)}'${e.parent === "" ? "" : ` in ${shown(e.parent)}`}`)
          .join(", ")}${andMore(unknown.length)} cannot be set here.${listed}`
      : `${what}: ${found
          .slice(0, MAX_NAMED_KEYS)
          .map((e) => `${shown(e.path)}: ${e.message}`)
          .join("; ")}${andMore(found.length)}.${listed}`
  const errors = found.slice(0, MAX_LISTED_ERRORS).map(({ path, message, key }) => ({
    path: shown(path),
    message: message.startsWith("Unknown key") ? `Unknown key '${shown(key)}': it cannot be set here` : message,
  }))
  return Effect.fail(new InvalidRequest({ detail, errors }))
}
