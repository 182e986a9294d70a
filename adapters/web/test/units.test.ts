import { describe, expect, it } from "vitest"
import { bodyLines, diffLines } from "@content-site/core"
import { escapeHtml, html, raw } from "../src/html.ts"

describe("html", () => {
  it("should escape interpolated text in content and attributes", () => {
    const evil = `<img src=x onerror="alert('1')">&`
    expect(html`<p title="${evil}">${evil}</p>`.value).toBe(
      '<p title="&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;">&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;</p>',
    )
  })

  it("should insert fragments and arrays as they are and skip null, undefined and false", () => {
    const items = ["a<", "b"].map((x) => html`<li>${x}</li>`)
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${raw("<hr>")}`.value).toBe("<ul><li>a&lt;</li><li>b</li></ul><hr>")
  })

  it("should escape backticks too", () => {
    expect(escapeHtml("`x`")).toBe("&#96;x&#96;")
  })
})

describe("diff (the core's, as the revision page uses it)", () => {
  it("should split HTML at block boundaries", () => {
    expect(bodyLines("<h2>T</h2><p>a</p><ul><li>x</li><li>y</li></ul>")).toEqual(["<h2>T</h2>", "<p>a</p>", "<ul>", "<li>x</li>", "<li>y</li>", "</ul>"])
  })

  it("should align the common lines and mark removed and added ones", () => {
    const d = diffLines(["a", "b", "c", "d"], ["a", "x", "c", "d", "e"])
    expect(d.map((l) => `${l.op}:${l.text}`)).toEqual(["same:a", "del:b", "ins:x", "same:c", "same:d", "ins:e"])
    expect(d.find((l) => l.text === "e")).toMatchObject({ oldNo: null, newNo: 5 })
    expect(d.find((l) => l.text === "d")).toMatchObject({ oldNo: 4, newNo: 4 })
  })

  it("should give identical texts no changes and empty texts all changes", () => {
    expect(diffLines(["a", "b"], ["a", "b"]).every((l) => l.op === "same")).toBe(true)
    expect(diffLines([], ["a"]).map((l) => l.op)).toEqual(["ins"])
    expect(diffLines(["a"], []).map((l) => l.op)).toEqual(["del"])
  })
})
