import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { iso } from "../src/mapping.ts"

/** PostgreSQL's text of a timestamptz in a UTC session, with 0 to 6 fraction digits. */
const pgText = (d: Date, digits: number): string => {
  const base = d.toISOString().slice(0, 19).replace("T", " ")
  const fraction = `${String(d.getUTCMilliseconds()).padStart(3, "0")}000`.slice(0, digits).replace(/0+$/, "")
  return `${base}${fraction === "" ? "" : `.${fraction}`}+00`
}

describe("timestamps read from the database", () => {
  it("should turn PostgreSQL's UTC text into the same RFC 3339 instant Date gives", () => {
    fc.assert(
      fc.property(fc.date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true }), fc.integer({ min: 0, max: 6 }), (d, digits) => {
        const text = pgText(d, digits)
        expect(iso(text)).toBe(new Date(text.replace(" ", "T").replace("+00", "Z")).toISOString())
      }),
    )
  })

  it("should read other offsets, microseconds and Date values through Date", () => {
    expect(iso("2026-11-19 10:45:00+01")).toBe("2026-11-19T09:45:00.000Z")
    expect(iso("2026-11-19 09:45:00.123456+00")).toBe("2026-11-19T09:45:00.123Z")
    expect(iso(new Date("2026-11-19T09:45:00.5Z"))).toBe("2026-11-19T09:45:00.500Z")
  })
})
