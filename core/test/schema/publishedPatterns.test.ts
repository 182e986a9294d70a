import fc from "fast-check"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { DateBound, isStorableText, parseDateBound, PeriodParam, STORABLE_TEXT_PATTERN, Title, TITLE_PATTERN } from "../../src/index.ts"

// The JSON Schema the document publishes for a field must say what its filter checks: a pattern
// that allowed more would let clients send what the server refuses; one that allowed less would
// make validating clients refuse what the server takes. Each pattern against its filter, on
// strings built from the characters that matter to it.
const jsonSchemaPattern = (schema: Schema.Top): RegExp => {
  const text = JSON.stringify(Schema.toJsonSchemaDocument(schema).schema)
  const source = /"pattern":"((?:[^"\\]|\\.)*)"/.exec(text)?.[1]
  if (source === undefined) throw new Error(`no pattern in ${text}`)
  return new RegExp(JSON.parse(`"${source}"`) as string, "u")
}

const spaces = "\t\n\u000b\f\r \u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000\ufeff\u200b\u180e"

describe("published patterns", () => {
  it("should publish the storable-text rule as a pattern that agrees with isStorableText", () => {
    const pattern = new RegExp(STORABLE_TEXT_PATTERN, "u")
    const text = fc.string({ unit: fc.constantFrom("a", "\u0000", "\ud800", "\udbff", "\udc00", "\udfff", "😀", "\ud83d", "\ude00", "é") })
    fc.assert(fc.property(fc.oneof(text, fc.string({ unit: "binary" })), (s) => pattern.test(s) === isStorableText(s)), { numRuns: 1000 })
  })

  it("should publish the title rule (1 to 300 characters after trimming) as a pattern that agrees with the filter, whitespace and astral characters included", () => {
    const is = Schema.is(Title)
    const unit = fc.constantFrom(...spaces, "a", "😀", "é")
    const titles = fc.oneof(
      fc.string({ unit, maxLength: 20 }),
      fc.tuple(fc.string({ unit: fc.constantFrom(...spaces), maxLength: 5 }), fc.string({ unit: fc.constantFrom("a", "😀", " "), minLength: 295, maxLength: 305 }), fc.string({ unit: fc.constantFrom(...spaces), maxLength: 5 })).map((p) => p.join("")),
    )
    fc.assert(fc.property(titles, (s) => TITLE_PATTERN.test(s) === is(s)), { numRuns: 3000 })
    expect(jsonSchemaPattern(Title).source).toBe(TITLE_PATTERN.source)
    for (const [s, ok] of [["a", true], [" a\u3000", true], ["   ", false], ["", false], ["x".repeat(300), true], [` ${"x".repeat(300)}\n`, true], ["x".repeat(301), false], ["😀".repeat(300), true], ["😀".repeat(301), false]] as const) {
      expect(TITLE_PATTERN.test(s), JSON.stringify(s).slice(0, 20)).toBe(ok)
    }
  })

  it("should publish from/to as a pattern that allows every value the server takes, and refuses only what the description says beyond it", () => {
    const pattern = jsonSchemaPattern(DateBound)
    const is = Schema.is(DateBound)
    const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, "0"))
    const year = fc.oneof(fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, "0")), fc.constantFrom("0000", "0001", "9999", "１２３４", "٢٠٢٦"))
    const date = fc.tuple(year, two(13), two(32)).map(([y, m, d]) => `${y}-${m}-${d}`)
    const time = fc.tuple(two(24), two(60), two(60), fc.constantFrom("", ".5", ".123456789", ".1234567890"), fc.constantFrom("Z", "z", "+00:00", "-23:59", "+24:00", "+01:60", "")).map(([h, m, s, f, z]) => `T${h}:${m}:${s}${f}${z}`)
    const bound = fc.oneof(date, fc.tuple(date, time).map(([d, t]) => d + t))
    fc.assert(
      fc.property(bound, (s) => {
        if (is(s)) expect(pattern.test(s), s).toBe(true)
        else if (pattern.test(s)) {
          // Allowed by the pattern, refused by the server: only a day its month lacks or an instant outside the years.
          const refused = parseDateBound(s, false)
          expect("refused" in refused, s).toBe(true)
        }
      }),
      { numRuns: 3000 },
    )
    expect(pattern.test("2026-02-30")).toBe(true)
    expect(is("2026-02-30")).toBe(false)
    expect(pattern.test("2026-01-01T24:00:00Z")).toBe(false)
  })

  it("should publish period as a pattern that agrees with the filter", () => {
    const pattern = jsonSchemaPattern(PeriodParam)
    const is = Schema.is(PeriodParam)
    const periods = fc.oneof(
      fc.constantFrom("this_month", "last_month", "last_30_days", "This_month", "0000-01", "0001-01", "9999-12", "2026-13", "2026-00", "٢٠٢٦-01", "2026-1"),
      fc.tuple(fc.integer({ min: 0, max: 10000 }), fc.integer({ min: 0, max: 13 })).map(([y, m]) => `${String(y).padStart(4, "0")}-${String(m).padStart(2, "0")}`),
    )
    fc.assert(fc.property(periods, (s) => pattern.test(s) === is(s)), { numRuns: 2000 })
  })
})
