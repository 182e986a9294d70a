/**
 * Values from the OpenAPI document's own JSON Schemas, for property-based tests of the API: a
 * fast-check arbitrary of values each schema allows, and a list of values it forbids.
 *
 * Why not a library: the JSON-Schema-to-fast-check packages on npm cover an older draft's subset
 * and are unmaintained; Schemathesis, the fuzzer that found this document's gaps, is Python. The
 * subset here is what the document uses (`$ref`, `enum`, `type`, `pattern` and `allOf` patterns,
 * lengths, `minimum`/`maximum`, `items`/`maxItems`, `properties`/`required`, object `anyOf`), and
 * every generated value is checked against the schema by Ajv, so a gap here generates fewer
 * values, never a wrong one.
 */
import { Ajv2020 } from "ajv/dist/2020.js"
import fc from "fast-check"

type Json = Record<string, any>

/** Code points, as JSON Schema's `minLength`/`maxLength` count them. */
const codePoints = (s: string): number => {
  let n = 0
  for (const _ of s) n++
  return n
}

/** Longest string generated at random (boundary values at a schema's `maxLength` come on top, up to `LONGEST_BOUNDARY`). */
const LONGEST_RANDOM = 40
/** Longest boundary string built: a 1 MiB body is the heavy-body tests' business, not a fuzzer's. */
const LONGEST_BOUNDARY = 4096

export interface SchemaValues {
  /** The schema with its `$ref` followed. */
  readonly deref: (schema: Json) => Json
  /** Whether the document allows `value` for `schema`. */
  readonly allows: (schema: Json, value: unknown) => boolean
  /** Values the schema allows, boundaries included. */
  readonly valid: (schema: Json) => fc.Arbitrary<unknown>
  /** Values the schema forbids, one per kind of constraint it has (wrong types for JSON fields). */
  readonly invalid: (schema: Json, options?: { readonly asText?: boolean }) => ReadonlyArray<unknown>
}

export const schemaValues = (doc: Json): SchemaValues => {
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false })
  ajv.addSchema({ $id: "openapi", components: doc.components }, "openapi")
  const compiled = new Map<string, (v: unknown) => boolean>()
  const allows = (schema: Json, value: unknown): boolean => {
    const text = JSON.stringify(schema)
    let validate = compiled.get(text)
    if (validate === undefined) {
      const f = ajv.compile(JSON.parse(text.replaceAll('"#/components/', '"openapi#/components/')) as Json)
      validate = (v) => f(v) === true
      compiled.set(text, validate)
    }
    return validate(value)
  }
  const deref = (schema: Json): Json => {
    let s = schema
    // A $ref chain in this document is one link long; four is a generous bound.
    for (let i = 0; i < 4 && typeof s["$ref"] === "string"; i++) {
      const path = (s["$ref"] as string).replace(/^#\//, "").split("/")
      s = path.reduce<Json>((node, key) => node[key] as Json, doc)
    }
    return s
  }
  const patternsOf = (s: Json): Array<RegExp> =>
    [s["pattern"], ...((s["allOf"] as Array<Json> | undefined) ?? []).map((a) => a["pattern"])]
      .filter((p): p is string => typeof p === "string")
      .map((p) => new RegExp(p, "u"))

  const valid = (schema: Json): fc.Arbitrary<unknown> => {
    const s = deref(schema)
    const checked = (arb: fc.Arbitrary<unknown>) => arb.filter((v) => allows(schema, v))
    if (Array.isArray(s["enum"])) return fc.constantFrom(...(s["enum"] as Array<unknown>))
    switch (s["type"]) {
      case "string": {
        const min = (s["minLength"] as number | undefined) ?? 0
        const max = (s["maxLength"] as number | undefined) ?? Number.POSITIVE_INFINITY
        const [first, ...rest] = patternsOf(s)
        const random =
          first !== undefined
            ? fc.stringMatching(first).filter((v) => rest.every((p) => p.test(v)))
            : fc.string({ unit: "grapheme", minLength: min, maxLength: Math.max(min, Math.min(max, LONGEST_RANDOM)) })
        const boundaries = [min, Math.min(max, LONGEST_BOUNDARY)]
          .map((n) => "a".repeat(n))
          .filter((v) => codePoints(v) >= min && codePoints(v) <= max && allows(schema, v))
        return checked(boundaries.length > 0 ? fc.oneof({ arbitrary: random, weight: 4 }, fc.constantFrom(...boundaries)) : random)
      }
      case "integer": {
        const min = Math.max((s["minimum"] as number | undefined) ?? -(2 ** 31), Number.MIN_SAFE_INTEGER)
        const max = Math.min((s["maximum"] as number | undefined) ?? 2 ** 31, Number.MAX_SAFE_INTEGER)
        return fc.oneof({ arbitrary: fc.integer({ min: Math.max(min, -1000), max: Math.min(max, 1000) }), weight: 3 }, fc.constantFrom(min, max))
      }
      case "number":
        return checked(fc.double({ noNaN: true, noDefaultInfinity: true }))
      case "boolean":
        return fc.boolean()
      case "array": {
        const maxLength = Math.min((s["maxItems"] as number | undefined) ?? 3, 3)
        return checked(fc.array(valid(s["items"] as Json), { minLength: Math.min((s["minItems"] as number | undefined) ?? 0, maxLength), maxLength }))
      }
      case "object": {
        const properties = (s["properties"] as Record<string, Json> | undefined) ?? {}
        const required = (s["required"] as Array<string> | undefined) ?? []
        const model = Object.fromEntries(Object.entries(properties).map(([k, p]) => [k, valid(p)]))
        return checked(fc.record(model, { requiredKeys: required }))
      }
      default:
        return fc.constant(undefined)
    }
  }

  const invalid = (schema: Json, options: { readonly asText?: boolean } = {}): ReadonlyArray<unknown> => {
    const s = deref(schema)
    const candidates: Array<unknown> = []
    const type = s["type"]
    if (type === "string" || Array.isArray(s["enum"])) {
      candidates.push("", " ", "zz", "\u0000", "a\ud800b", "\udc00", "١٢٣٤-٠١-٠٢", "２０２６-01-01", "2026-02-30", "2026-13-01", "9999-12-31T24:00:00Z", "0000-01", "-1", "x y")
      for (const n of [s["minLength"], s["maxLength"]]) {
        if (typeof n !== "number") continue
        for (const m of [n - 1, n + 1]) if (m >= 0 && m <= LONGEST_BOUNDARY + 1) candidates.push("a".repeat(m), "é".repeat(m), " ".repeat(m))
      }
      if (Array.isArray(s["enum"])) candidates.push(`${String((s["enum"] as Array<unknown>)[0])}x`, String((s["enum"] as Array<unknown>)[0]).toUpperCase())
      if (!options.asText) candidates.push(7, null, true, ["a"], {})
    } else if (type === "integer") {
      const min = s["minimum"] as number | undefined
      const max = s["maximum"] as number | undefined
      const numbers = [min !== undefined ? min - 1 : undefined, max !== undefined ? max + 1 : undefined, 1.5, -(2 ** 53) - 2, 2 ** 64].filter((n): n is number => n !== undefined)
      if (options.asText) candidates.push(...numbers.map(String), "", "abc", "1e1", "+2", "0x10", " 3", "2.0", "١")
      else candidates.push(...numbers, "1", null, true)
    } else if (type === "boolean") {
      candidates.push(...(options.asText ? ["yes", "1", ""] : ["true", 1, null]))
    } else if (type === "array") {
      candidates.push("a", {}, 1)
      const maxItems = s["maxItems"] as number | undefined
      if (maxItems !== undefined && maxItems <= 200) candidates.push(Array.from({ length: maxItems + 1 }, () => ({ find: "x", replace: "y" })))
    }
    // What the document forbids, as a string for a parameter (whose value is always text).
    return candidates.filter((v) => {
      if (!options.asText) return !allows(schema, v)
      if (typeof v !== "string") return false
      const typed = type === "integer" ? (/^-?[0-9]+$/.test(v) ? Number(v) : v) : v
      return !allows(schema, typed)
    })
  }
  return { deref, allows, valid, invalid }
}
