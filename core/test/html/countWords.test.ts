import { describe, expect, it } from "vitest"
import { countWords } from "../../src/html/index.ts"
import { isWhiteSpace, trimHtmlSpace } from "../../src/html/words.ts"

describe("countWords", () => {
  const cases: ReadonlyArray<readonly [string, number]> = [
    ["", 0],
    ["   \n\t ", 0],
    ["<p>Hello world</p>", 2],
    ["<p>Hello <strong>big</strong> world</p>", 3],
    ["<p>Hello&nbsp;world</p>", 2],
    ["<p>Hello\u2003world\u3000again</p>", 3],
    ["<p>one<b>two</b> three</p>", 2],
    ["<p>a</p>\n<p>b</p>", 2],
    ["<p>a</p><p>b</p>", 2],
    ["<ul><li>one</li><li>two</li></ul><h2>Three</h2>", 3],
    ["line<br>break", 2],
    ["<table><tr><td>a</td><td>b</td></tr></table>", 2],
    ["<p>fish &amp; chips</p>", 3],
    ["<p>AT&amp;T</p>", 1],
    ['<img alt="many words in alt" src="/x.png"><a title="a b c" href="/">link</a>', 1],
    ["<p>a <!-- two words --> b</p>", 2],
    ["<p>x</p><script>var a = 1 + 2</script><style>p { color: red }</style>", 1],
    ["<p>日本語 テキスト</p>", 2],
    ["<p>émoji 😀 ok</p>", 3],
  ]
  for (const [html, words] of cases) {
    it(`should count ${words} in ${JSON.stringify(html)}`, () => {
      expect(countWords(html)).toBe(words)
    })
  }

  it("should count a 1 MiB body", () => {
    expect(countWords("<p>word word</p>\n".repeat(65_536))).toBe(131_072)
  })

  it("should count input too deep to parse without overflowing the stack", () => {
    expect(countWords("<div>".repeat(100_000) + "a b")).toBe(2)
  })
})

describe("isWhiteSpace", () => {
  it("should agree with the Unicode White_Space property on every BMP code unit", () => {
    const disagreements: Array<number> = []
    for (let c = 0; c <= 0xffff; c++) {
      if (isWhiteSpace(c) !== /\p{White_Space}/u.test(String.fromCharCode(c))) disagreements.push(c)
    }
    expect(disagreements).toEqual([])
  })
})

describe("trimHtmlSpace", () => {
  it("should trim what /^[\\t\\n\\f\\r ]+|[\\t\\n\\f\\r ]+$/g trims, and only that", () => {
    const texts = ["", " ", "\t\n\f\r ", "a", " a ", "\n<p>a</p>\r\n", "a  \t b", "\u00a0a\u00a0", " \u2003a\v ", "x" + " ".repeat(1000) + "y"]
    for (const text of texts) expect(trimHtmlSpace(text)).toBe(text.replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, ""))
  })
})
