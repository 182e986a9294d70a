/**
 * The encoder of a response schema. An answer is built by the core's views from validated data,
 * so encoding it only shapes it for the wire: the schema's keys, in the schema's order, nothing
 * else. Where the schema encodes nothing differently from its type (no transformation, no
 * declaration anywhere in it, as for every resource today), that is a walk compiled once from
 * the schema; any other schema keeps `Schema.encodeUnknownSync`. Either way the field checks are
 * not run again on the way out (they ran on the way in).
 */
import { Schema, SchemaAST } from "effect"

type Encode = (value: unknown) => unknown

const same: Encode = (value) => value

/** Kinds whose encoded form is the value itself. */
const LEAVES: ReadonlySet<string> = new Set([
  "String", "Number", "Boolean", "Literal", "Null", "Undefined", "Enum", "TemplateLiteral", "Unknown", "Any",
])

const isObject = (value: unknown): value is Record<PropertyKey, unknown> => typeof value === "object" && value !== null

/**
 * The encoder of an object schema: its declared keys copied in order, those that are undefined
 * left out, each field encoded by its own schema's encoder. Made as a function of its own with the
 * keys written in (a shared loop over computed keys is several times slower once it has seen the
 * shapes of many schemas); the keys come from our schemas and are written as JSON string literals.
 */
const objectEncoder = (fields: ReadonlyArray<readonly [string, Encode]>): Encode => {
  const nested = fields.map(([, encode]) => encode)
  const copies = fields.map(([name, encode], i) => {
    const key = JSON.stringify(name)
    return `f = v[${key}]; if (f !== undefined) o[${key}] = ${encode === same ? "f" : `e[${i}](f)`};`
  })
  const make = new Function("e", `return (v) => { if (typeof v !== "object" || v === null) return v; const o = {}; let f; ${copies.join(" ")} return o }`)
  return make(nested) as Encode
}

/** A walk that encodes like the schema, or undefined when the schema needs the general encoder. */
const compile = (ast: SchemaAST.AST): Encode | undefined => {
  if (ast.encoding !== undefined) return undefined
  if (LEAVES.has(ast._tag)) return same
  switch (ast._tag) {
    case "Objects": {
      if (ast.indexSignatures.length > 0) return undefined
      const fields: Array<readonly [string, Encode]> = []
      for (const property of ast.propertySignatures) {
        const encode = compile(property.type)
        // (`__proto__` would set the copy's prototype instead of a key)
        if (encode === undefined || typeof property.name !== "string" || property.name === "__proto__") return undefined
        fields.push([property.name, encode])
      }
      return objectEncoder(fields)
    }
    case "Arrays": {
      if (ast.elements.length > 0 || ast.rest.length !== 1) return undefined
      const item = compile(ast.rest[0]!)
      if (item === undefined) return undefined
      return item === same ? same : (value) => (Array.isArray(value) ? value.map(item) : value)
    }
    case "Union": {
      // leaves and at most one object or array member, told apart by the value's own kind
      let objects: Encode | undefined
      let arrays: Encode | undefined
      for (const member of ast.types) {
        const encode = compile(member)
        if (encode === undefined) return undefined
        if (member._tag === "Objects") {
          if (objects !== undefined) return undefined
          objects = encode
        } else if (member._tag === "Arrays") {
          if (arrays !== undefined) return undefined
          arrays = encode
        } else if (encode !== same) return undefined
      }
      if (objects === undefined && arrays === undefined) return same
      return (value) => (Array.isArray(value) ? (arrays ?? same)(value) : isObject(value) ? (objects ?? same)(value) : value)
    }
    default:
      return undefined
  }
}

const encoders = new WeakMap<Schema.Top, Encode>()

/** The encoder of a response schema, made once per schema. */
export const wireEncoderOf = (schema: Schema.Top): Encode => {
  let encode = encoders.get(schema)
  if (encode === undefined) {
    encode = compile(schema.ast) ?? generalEncoder(schema)
    encoders.set(schema, encode)
  }
  return encode
}

/** The general encoder (transformations, declarations), without re-running the field checks. */
export const generalEncoder = (schema: Schema.Top): Encode => {
  const encodeSync = Schema.encodeUnknownSync(schema as Schema.Codec<unknown, unknown, never, never>)
  return (value) => encodeSync(value, { disableChecks: true })
}

/** Whether a schema is encoded by the compiled walk (for tests). */
export const isCompiled = (schema: Schema.Top): boolean => compile(schema.ast) !== undefined
