import { describe, expect, it } from "vitest"
import { noneMatchNames, scanNoneMatch } from "../src/noneMatch.ts"

const etag = '"abc123"'

describe("scanNoneMatch", () => {
  it("should name the tag in a list, weak or strong, with empty elements and spaces", () => {
    expect(noneMatchNames('"abc123"', etag)).toBe(true)
    expect(noneMatchNames('W/"abc123"', etag)).toBe(true)
    expect(noneMatchNames(' "x" , ,\tW/"abc123" ', etag)).toBe(true)
    expect(noneMatchNames("*", etag)).toBe(true)
    expect(noneMatchNames(' * ', etag)).toBe(true)
  })

  it("should name nothing for another tag or a header that is not a list of entity tags", () => {
    expect(noneMatchNames('"other"', etag)).toBe(false)
    expect(noneMatchNames('"abc123" x', etag)).toBe(false)
    expect(noneMatchNames('abc123', etag)).toBe(false)
    expect(noneMatchNames('"abc123', etag)).toBe(false)
    expect(noneMatchNames('W"abc123"', etag)).toBe(false)
    expect(noneMatchNames('*, "abc123"', etag)).toBe(false)
    expect(noneMatchNames('"abc123" "abc123"', etag)).toBe(false)
  })

  it("should read each character of a hostile 16 KiB header at most once", () => {
    const n = 16 * 1024
    for (const header of [
      `${" ".repeat(n)}x`,
      `"a"${" ".repeat(n)}x`,
      `${'"a" ,'.repeat(n / 5)}x`,
      `${",".repeat(n)}x`,
      `"${"a".repeat(n)}`,
    ]) {
      const scan = scanNoneMatch(header, etag)
      expect(scan.named).toBe(false)
      expect(scan.reads).toBeLessThanOrEqual(header.length + 1)
    }
  })
})
