/** The strict query string's refusals, in words and field errors, as clients read them. */
import type { InvalidRequest } from "@content-site/core"
import { describe, expect, it } from "vitest"
import { queryObject, strictQuery } from "../src/index.ts"

const refusal = (read: () => unknown): unknown => {
  try {
    read()
  } catch (error) {
    return error
  }
  return "(no refusal)"
}

describe("the query string's refusals", () => {
  it("should name every repeated parameter, in its words and one field error each", () => {
    expect(refusal(() => queryObject("a=1&b=2&a=3&b=4&c=5"))).toMatchObject({
      _tag: "InvalidRequest",
      detail: "Query parameter 'a', 'b' is given more than once; give each parameter at most once.",
      errors: [
        { path: "a", message: "Repeated query parameter" },
        { path: "b", message: "Repeated query parameter" },
      ],
    })
  })

  it("should name every unknown parameter and the ones the route takes, or say it takes none", () => {
    expect(refusal(() => strictQuery("x=1&page=2&y=3", ["page", "per_page"]))).toMatchObject({
      _tag: "InvalidRequest",
      detail: "Unknown query parameter 'x', 'y'; allowed: page, per_page.",
      errors: [
        { path: "x", message: "Unknown query parameter" },
        { path: "y", message: "Unknown query parameter" },
      ],
    })
    expect(refusal(() => strictQuery("x=1", []))).toMatchObject({ detail: "Unknown query parameter 'x'; this endpoint takes none." })
  })

  it("should answer a bounded refusal however many parameters are unknown or repeated: 20 listed, 5 named, each cut at 100 characters", () => {
    const unknown = refusal(() => strictQuery(Array.from({ length: 1500 }, (_, i) => `p${i}=1`).join("&"), ["page"])) as InvalidRequest
    expect(unknown.errors).toHaveLength(20)
    expect(unknown.errors[19]).toEqual({ path: "p19", message: "Unknown query parameter" })
    expect(unknown.detail).toBe("Unknown query parameter 'p0', 'p1', 'p2', 'p3', 'p4' and 1495 more; allowed: page. 1500 in all; errors lists the first 20.")
    expect(JSON.stringify(unknown).length).toBeLessThan(2048)
    const repeated = refusal(() => queryObject(Array.from({ length: 700 }, (_, i) => `r${i}=1&r${i}=2`).join("&"))) as InvalidRequest
    expect(repeated.errors).toHaveLength(20)
    expect(repeated.detail).toBe("Query parameter 'r0', 'r1', 'r2', 'r3', 'r4' and 695 more is given more than once; give each parameter at most once. 700 in all; errors lists the first 20.")
    const long = `${"é".repeat(99)}\u{1F600}${"z".repeat(8000)}`
    const cut = refusal(() => strictQuery(`${encodeURIComponent(long)}=1`, [])) as InvalidRequest
    expect(cut.errors).toEqual([{ path: `${"é".repeat(99)}\u{1F600}…`, message: "Unknown query parameter" }])
    expect(cut.detail).toBe(`Unknown query parameter '${"é".repeat(99)}\u{1F600}…'; this endpoint takes none.`)
  })

  it("should read an empty query string as no parameters, and a lone name as one with an empty value", () => {
    expect({ ...strictQuery("", []) }).toEqual({})
    expect({ ...queryObject("flag") }).toEqual({ flag: "" })
  })
})
