/** The strict query string's refusals, in words and field errors, as clients read them. */
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

  it("should read an empty query string as no parameters, and a lone name as one with an empty value", () => {
    expect({ ...strictQuery("", []) }).toEqual({})
    expect({ ...queryObject("flag") }).toEqual({ flag: "" })
  })
})
