import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { linkHeader } from "../src/index.ts"
import { queryObject, strictQuery } from "@content-site/http"
import { expectedRevisionsOf, IF_MATCH_PATTERN, preferencesOf, prefersMinimal, unexpectedRevisionsOf } from "../src/rest/requestParts.ts"

describe("expectedRevisionsOf", () => {
  it("should accept exactly what the published If-Match pattern allows, read by the RFC 9110 list grammar", () => {
    // The list grammar, element by element (the reading the server had before the pattern was
    // published): each element an optional entity tag between optional spaces, at least one tag.
    const element = /[ \t]*(?:(?:W\/)?"[\x21\x23-\x7e\x80-\xff]*")?[ \t]*(,|$)/y
    const listGrammar = (h: string): boolean => {
      const t = h.replace(/^[ \t]+|[ \t]+$/g, "")
      if (t === "" || t === "*") return true
      let tags = 0
      for (let at = 0; at <= h.length; ) {
        element.lastIndex = at
        const m = element.exec(h)
        if (m === null) return false
        if (m[0].includes('"')) tags++
        if (m[1] === "") break
        at = element.lastIndex
      }
      return tags > 0
    }
    const header = fc.string({ unit: fc.constantFrom(" ", "\t", ",", '"', "W", "/", "*", "a", "-", "r", "1", "\xff"), maxLength: 16 })
    fc.assert(
      fc.property(header, (h) => {
        const accepted = (() => {
          try {
            expectedRevisionsOf(h, "art_1")
            return true
          } catch {
            return false
          }
        })()
        expect(accepted, JSON.stringify(h)).toBe(listGrammar(h))
        expect(IF_MATCH_PATTERN.test(h), JSON.stringify(h)).toBe(accepted)
      }),
      { numRuns: 5000 },
    )
  })

  it("should read the revision of this article's strong entity tag", () => {
    expect(expectedRevisionsOf('"art_1-r3"', "art_1")).toEqual([3])
    expect(expectedRevisionsOf(' "art_1-r12" ', "art_1")).toEqual([12])
  })

  it("should read every tag of a list, any of which may match", () => {
    expect(expectedRevisionsOf('"art_1-r2", "art_1-r1"', "art_1")).toEqual([2, 1])
    expect(expectedRevisionsOf('"other-r1", "art_1-r4"', "art_1")).toEqual([4])
    expect(expectedRevisionsOf('"art_1-r4","art_1-r5"\t, ,"x"', "art_1")).toEqual([4, 5])
    // a comma inside a tag is part of it, not a separator
    expect(expectedRevisionsOf('"a,b", "art_1-r6"', "art_1")).toEqual([6])
  })

  it("should compare strongly: a weak tag names no revision", () => {
    expect(expectedRevisionsOf('W/"art_1-r4"', "art_1")).toEqual([])
    expect(expectedRevisionsOf('W/"art_1-r4", "art_1-r5"', "art_1")).toEqual([5])
  })

  it("should mean no condition when absent or *", () => {
    expect(expectedRevisionsOf(undefined, "art_1")).toBeUndefined()
    expect(expectedRevisionsOf("*", "art_1")).toBeUndefined()
    expect(expectedRevisionsOf(" * ", "art_1")).toBeUndefined()
  })

  it("should name no revision (never matches) for another article's tag, a foreign tag or a revision no article can reach", () => {
    for (const header of ['"art_2-r3"', '"abc"', '"art_1-r0"', '"art_1-r03"', '"art_1-r1.0"', '"art_1-r99999999999999999999"', '"art_1-r9007199254740993"', '""']) {
      expect(expectedRevisionsOf(header, "art_1"), header).toEqual([])
    }
    expect(expectedRevisionsOf('"art_1-r9007199254740991"', "art_1")).toEqual([9007199254740991])
  })

  it("should refuse a value that is not a list of entity tags with InvalidRequest", () => {
    for (const header of ["art_1-r3", '"art_1-r3" "art_1-r4"', '"art_1-r3", *', ",", '"unterminated', 'w/"art_1-r3"', '"art_1-r3"x']) {
      expect(() => expectedRevisionsOf(header, "art_1"), header).toThrow(expect.objectContaining({ _tag: "InvalidRequest" }))
    }
  })
})

describe("unexpectedRevisionsOf (If-None-Match on a write)", () => {
  it("should mean no condition when absent or blank, and any revision for *", () => {
    expect(unexpectedRevisionsOf(undefined, "art_1")).toBeUndefined()
    expect(unexpectedRevisionsOf(" \t", "art_1")).toBeUndefined()
    expect(unexpectedRevisionsOf("*", "art_1")).toBe("*")
    expect(unexpectedRevisionsOf(" * ", "art_1")).toBe("*")
  })

  it("should read every tag of a list, compared weakly (W/ names the revision too)", () => {
    expect(unexpectedRevisionsOf('"art_1-r3"', "art_1")).toEqual([3])
    expect(unexpectedRevisionsOf('W/"art_1-r4", "art_1-r5"', "art_1")).toEqual([4, 5])
    expect(unexpectedRevisionsOf('"other-r1", "art_1-r4"\t, ,"x"', "art_1")).toEqual([4])
  })

  it("should name no revision for another article's tag, a foreign tag or a revision no article can reach", () => {
    for (const header of ['"art_2-r3"', '"abc"', '"art_1-r0"', '"art_1-r03"', 'W/"art_1-r99999999999999999999"', '""']) {
      expect(unexpectedRevisionsOf(header, "art_1"), header).toEqual([])
    }
  })

  it("should refuse a value that is not a list of entity tags with InvalidRequest naming If-None-Match", () => {
    for (const header of ["art_1-r3", '"art_1-r3" "art_1-r4"', '"art_1-r3", *', ",", '"unterminated', 'w/"art_1-r3"', '"art_1-r3"x']) {
      expect(() => unexpectedRevisionsOf(header, "art_1"), header).toThrow(
        expect.objectContaining({ _tag: "InvalidRequest", errors: [expect.objectContaining({ path: "If-None-Match" })] }),
      )
    }
  })
})

describe("queryObject", () => {
  it("should refuse a repeated parameter naming it", () => {
    expect(queryObject("a=1&b=2")).toEqual({ a: "1", b: "2" })
    expect(() => queryObject("page=1&page=2")).toThrow(expect.objectContaining({ _tag: "InvalidRequest", detail: expect.stringContaining("'page'") }))
  })

  it("should keep prototype names as plain parameters", () => {
    expect(Object.keys(queryObject("__proto__=1&constructor=2&toString=3"))).toEqual(["__proto__", "constructor", "toString"])
    expect(() => queryObject("__proto__=1&__proto__=2")).toThrow(expect.objectContaining({ _tag: "InvalidRequest" }))
  })
})

describe("strictQuery", () => {
  it("should refuse every parameter not allowed, prototype names included", () => {
    for (const q of ["__proto__=1", "constructor=1", "hasOwnProperty=1", "toString=1", "foo=1", "page=1&x=2"]) {
      expect(() => strictQuery(q, ["page"]), q).toThrow(expect.objectContaining({ _tag: "InvalidRequest", detail: expect.stringContaining("Unknown query parameter") }))
    }
    expect(() => strictQuery("a=1", [])).toThrow(expect.objectContaining({ detail: expect.stringContaining("takes none") }))
  })

  it("should return the allowed parameters", () => {
    expect({ ...strictQuery("page=2", ["page", "per_page"]) }).toEqual({ page: "2" })
    expect({ ...strictQuery("", []) }).toEqual({})
  })
})

describe("linkHeader", () => {
  it("should link first, prev, next and last with absolute URLs keeping other parameters", () => {
    const link = linkHeader("https://cs.test", "/api/v1/sites/s/articles", "status=draft&page=2", { page: 2, per_page: 20, total: 57, total_pages: 3 })
    expect(link).toBe(
      '<https://cs.test/api/v1/sites/s/articles?status=draft&page=1>; rel="first", <https://cs.test/api/v1/sites/s/articles?status=draft&page=1>; rel="prev", <https://cs.test/api/v1/sites/s/articles?status=draft&page=3>; rel="next", <https://cs.test/api/v1/sites/s/articles?status=draft&page=3>; rel="last"',
    )
  })

  it("should omit prev on the first page and next on the last", () => {
    const link = linkHeader("https://cs.test", "/api/v1/sites", "", { page: 1, per_page: 20, total: 0, total_pages: 0 })
    expect(link).not.toContain('rel="prev"')
    expect(link).not.toContain('rel="next"')
  })

  it("should answer a header asked again from what it is made of, never another page's or list's", () => {
    const at = (base: string, path: string, query: string, page: number, totalPages: number) =>
      linkHeader(base, path, query, { page, per_page: 20, total: totalPages * 20, total_pages: totalPages })
    const first = at("https://cs.test", "/api/v1/sites/s/articles", "per_page=20", 2, 3)
    expect(at("https://cs.test", "/api/v1/sites/s/articles", "per_page=20", 2, 3)).toBe(first)
    expect(at("https://cs.test", "/api/v1/sites/s/articles", "per_page=20", 2, 4)).toContain("page=4>; rel=\"last\"")
    expect(at("https://cs.test", "/api/v1/sites/s/articles", "per_page=20", 3, 3)).not.toContain('rel="next"')
    expect(at("https://cs.test", "/api/v1/sites/t/articles", "per_page=20", 2, 3)).toContain("/sites/t/articles")
    expect(at("https://cs.test", "/api/v1/sites/s/articles", "per_page=20&status=draft", 2, 3)).toContain("status=draft")
    expect(at("https://other.test", "/api/v1/sites/s/articles", "per_page=20", 2, 3)).toContain("<https://other.test/")
  })
})

describe("prefersMinimal (RFC 7240 Prefer)", () => {
  it("should ask for a minimal answer on return=minimal, whatever the case, quoting or parameters", () => {
    for (const header of ["return=minimal", "RETURN=Minimal", 'return="minimal"', "return = minimal", "return=minimal; foo=bar", "wait=5, return=minimal", "respond-async,return=minimal"]) {
      expect(prefersMinimal(header), header).toBe(true)
    }
  })

  it("should not on no header, return=representation, other preferences or other values", () => {
    for (const header of ["", "return=representation", "respond-async, wait=10", "handling=lenient", "return", "return=", "minimal", "returns=minimal", "return=minimalist"]) {
      expect(prefersMinimal(header), header).toBe(false)
    }
  })

  it("should consider only the first return preference", () => {
    expect(prefersMinimal("return=representation, return=minimal")).toBe(false)
    expect(prefersMinimal("return=minimal, return=representation")).toBe(true)
  })

  it("should not be fooled by commas, semicolons or return=minimal inside a quoted value", () => {
    expect(prefersMinimal('foo="a, return=minimal"')).toBe(false)
    expect(prefersMinimal('foo="x;y,z", return=minimal')).toBe(true)
    expect(prefersMinimal('foo="say \\"hi\\", return=minimal"')).toBe(false)
  })
})

describe("preferencesOf", () => {
  it("should list the preferences in order, names lower-cased, values unquoted, parameters dropped", () => {
    expect(preferencesOf(' Respond-Async , wait=10, foo="a \\"b\\" c"; p=1,, return=minimal')).toEqual([
      { name: "respond-async", value: "" },
      { name: "wait", value: "10" },
      { name: "foo", value: 'a "b" c' },
      { name: "return", value: "minimal" },
    ])
  })
})
