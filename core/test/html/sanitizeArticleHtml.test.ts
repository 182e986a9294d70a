import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { analyzeArticleHtml, MAX_PARSED_NODES, sanitizeArticleHtml } from "../../src/html/index.ts"
import { clean, elementsOf, failureOf, failureTag, unsafeParts } from "./helpers.ts"

const report = (input: string) => Effect.runSync(sanitizeArticleHtml(input)).report

describe("sanitizeArticleHtml: what stays", () => {
  const benign = [
    "<h1>Title</h1><h2>Sub</h2><h3>a</h3><h4>b</h4><h5>c</h5><h6>d</h6>",
    "<p>Text with <em>em</em>, <strong>strong</strong>, <b>b</b>, <i>i</i>, <u>u</u>, <s>s</s>, <sub>1</sub>, <sup>2</sup>, <mark>m</mark>, <small>s</small>.</p>",
    "<p>Line<br>break</p><hr>",
    "<ul><li>one</li><li>two</li></ul><ol start=\"3\" reversed=\"\"><li value=\"5\">three</li></ol>",
    "<dl><dt>term</dt><dd>definition</dd></dl>",
    '<p><a href="https://example.com/a" title="A" rel="nofollow noopener" target="_blank" hreflang="en">link</a></p>',
    '<p><a href="/relative/path?q=1#frag">relative</a> <a href="#top">anchor</a> <a href="mailto:a@example.com">mail</a> <a href="tel:+4912345">call</a></p>',
    '<figure><img src="https://example.com/i.jpg" alt="An image" title="T" width="640" height="480" loading="lazy"><figcaption>Caption</figcaption></figure>',
    '<table><caption>Prices</caption><thead><tr><th scope="col">A</th><th colspan="2">B</th></tr></thead><tbody><tr><td rowspan="2">1</td><td>2</td></tr></tbody><tfoot><tr><td>f</td></tr></tfoot></table>',
    '<blockquote cite="https://example.com/q"><p>Quote</p></blockquote><p><q cite="https://example.com">q</q> <cite>Work</cite></p>',
    "<pre><code>const x = 1 &lt; 2 &amp;&amp; y &gt; 0;\n  indented</code></pre><p><kbd>Ctrl</kbd>+<samp>out</samp></p>",
    '<p><abbr title="HyperText Markup Language">HTML</abbr> <time datetime="2026-10-03">3 Oct</time> <del datetime="2026-01-01" cite="/why">old</del><ins>new</ins></p>',
    '<section id="intro" class="lead wide"><article><header>h</header><aside>a</aside><footer>f</footer></article></section>',
    "<details open=\"\"><summary>More</summary><div>Hidden</div></details>",
    '<div lang="de" dir="ltr" role="note" aria-label="Note" aria-describedby="x y" aria-hidden="true"><span>t</span></div>',
    '<p><a href="https://news.test/p" rel="nofollow" data-service-protected="backlink">anchor</a></p>',
    "<p>Entities: &amp; &lt; &gt; &nbsp; \" ' é 😀</p>",
  ]
  for (const html of benign) {
    it(`should keep ${html.slice(0, 50)}… byte for byte`, () => {
      expect(clean(html)).toBe(html)
      expect(report(html)).toStrictEqual({ changed: false, removed: [] })
    })
  }

  it("should keep a URL whose scheme is upper case", () => {
    expect(clean('<a href="HTTPS://example.com">x</a>')).toBe('<a href="HTTPS://example.com">x</a>')
  })

  it("should keep a URL with leading whitespace and an allowed scheme", () => {
    expect(clean('<a href="  https://example.com">x</a>')).toBe('<a href="  https://example.com">x</a>')
  })

  it("should keep ids without a user-content- prefix", () => {
    expect(clean('<h2 id="section-1">S</h2>')).toBe('<h2 id="section-1">S</h2>')
  })

  it("should report changed:false for input that differs only in serialisation", () => {
    const result = Effect.runSync(sanitizeArticleHtml("<P CLASS=lead>a<br/>b<ul><li>x<li>y</ul>"))
    expect(result.html).toBe('<p class="lead">a<br>b</p><ul><li>x</li><li>y</li></ul>')
    expect(result.report).toStrictEqual({ changed: false, removed: [] })
  })

  it("should write the canonical serialisation (innerHTML form)", () => {
    expect(clean("<p title='a\"b'>x &#60; y&nbsp;</p>")).toBe('<p title="a&quot;b">x &lt; y&nbsp;</p>')
  })

  it("should make implied table sections explicit", () => {
    expect(clean("<table><tr><td>1</table>")).toBe("<table><tbody><tr><td>1</td></tr></tbody></table>")
  })
})

describe("sanitizeArticleHtml: what goes", () => {
  const dropped: ReadonlyArray<readonly [string, string, string]> = [
    ["<p>a</p><script>alert(1)</script>", "<p>a</p>", "script"],
    ["<style>p{color:red}</style><p>a</p>", "<p>a</p>", "style"],
    ['<iframe src="https://evil.test"></iframe><p>a</p>', "<p>a</p>", "iframe"],
    ['<object data="x.swf"><p>fallback</p></object>', "", "object"],
    ['<embed src="x.swf">', "", "embed"],
    ["<form action=\"/x\"><input name=q><button>Go</button></form>", "", "form"],
    ["<svg><circle r=\"1\"></circle></svg>", "", "svg"],
    ["<math><mi>x</mi></math>", "", "math"],
    ["<template><p>t</p></template>", "", "template"],
    ["<noscript><p>n</p></noscript>", "", "noscript"],
    ["<textarea>t</textarea>", "", "textarea"],
    ["<applet code=x></applet>", "", "applet"],
    ["<marquee>m</marquee>", "m", "marquee"],
    ["<font color=red>f</font>", "f", "font"],
    ["<center>c</center>", "<div>c</div>", "center"],
    ["<nav><p>n</p></nav>", "<div><p>n</p></div>", "nav"],
  ]
  for (const [input, output, what] of dropped) {
    it(`should remove ${what} from ${input.slice(0, 40)}`, () => {
      const result = Effect.runSync(sanitizeArticleHtml(input))
      expect(result.html).toBe(output)
      expect(result.report.changed).toBe(true)
      expect(result.report.removed.map((entry) => entry.what)).toContain(what)
    })
  }

  it("should never turn script or style contents into text", () => {
    expect(clean("<script>var a = '<b>x</b>'</script><style>b{}</style>")).toBe("")
  })

  it("should remove event handler attributes in any case", () => {
    expect(clean('<p onclick="a()" ONMOUSEOVER="b()" OnLoad="c()">x</p>')).toBe("<p>x</p>")
  })

  it("should remove style and srcdoc attributes", () => {
    expect(clean('<p style="color:red">x</p><div srcdoc="<script>">y</div>')).toBe("<p>x</p><div>y</div>")
  })

  it("should remove data attributes other than data-service-protected", () => {
    expect(clean('<p data-toggle="x" data-service-protected="y">x</p>')).toBe('<p data-service-protected="y">x</p>')
  })

  it("should remove the name attribute", () => {
    expect(clean('<img name="getElementById" src="/i.png">')).toBe('<img src="/i.png">')
  })

  const unsafeUrls = [
    "javascript:alert(1)",
    "JAVASCRIPT:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "java\nscript:alert(1)",
    "\u0001javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "file:///etc/passwd",
  ]
  for (const url of unsafeUrls) {
    it(`should remove href ${JSON.stringify(url)}`, () => {
      expect(clean(`<a href="${url.replace(/"/g, "&quot;").replace(/</g, "&lt;")}">x</a>`)).toBe("<a>x</a>")
    })
  }

  it("should keep java\\0script: harmless, as the parser makes the NUL a U+FFFD (no scheme)", () => {
    expect(clean('<a href="java\u0000script:alert(1)">x</a>')).toBe('<a href="java\ufffdscript:alert(1)">x</a>')
  })

  it("should remove javascript: written with character references", () => {
    expect(clean('<a href="&#106;avascript&#58;alert(1)">x</a>')).toBe("<a>x</a>")
    expect(clean('<a href="jav&#x09;ascript:alert(1)">x</a>')).toBe("<a>x</a>")
  })

  it("should remove unsafe src and cite URLs", () => {
    expect(clean('<img src="data:image/png;base64,AAAA" alt="a">')).toBe('<img alt="a">')
    expect(clean('<blockquote cite="javascript:x">q</blockquote>')).toBe("<blockquote>q</blockquote>")
  })

  it("should treat a colon after a slash, ? or # as part of a relative URL", () => {
    expect(clean('<a href="/a:b">x</a><a href="?q=javascript:x">y</a>')).toBe('<a href="/a:b">x</a><a href="?q=javascript:x">y</a>')
  })

  it("should remove comments", () => {
    expect(clean("<p>a<!-- secret -->b</p>")).toBe("<p>ab</p>")
  })

  it("should report removals grouped and sorted by what", () => {
    expect(report('<p onclick="x" onmouseover="y">a</p><script></script><p onclick="z">b</p><!--c-->')).toStrictEqual({
      changed: true,
      removed: [
        { what: "comment", count: 1 },
        { what: "onclick attribute", count: 2 },
        { what: "onmouseover attribute", count: 1 },
        { what: "script", count: 1 },
      ],
    })
  })

  it("should count only the outermost element of dropped content", () => {
    expect(report("<svg><script>a</script><g onclick=x>b</g></svg>").removed).toStrictEqual([{ what: "svg", count: 1 }])
  })

  it("should unwrap table parts outside a table", () => {
    expect(elementsOf(clean("<div><td>x</td></div>")).map((element) => element.tagName)).toEqual(["div"])
  })
})

describe("sanitizeArticleHtml: re-parsing", () => {
  it("should settle markup that a re-parse restructures", () => {
    const once = clean("<p><marquee><p>x</p></marquee></p>")
    expect(once).toBe("<p></p><p>x</p><p></p>")
    expect(clean(once)).toBe(once)
  })

  it("should settle nested links left by an unwrapped element", () => {
    const once = clean('<a href="/a"><marquee><a href="/b">y</a></marquee></a>')
    expect(clean(once)).toBe(once)
    expect(elementsOf(once).filter((element) => element.tagName === "a")).toHaveLength(2)
  })

  it("should keep a leading newline of pre text across a round trip", () => {
    expect(clean("<pre>\n\nx</pre>")).toBe("<pre>\n\nx</pre>")
    expect(clean("<pre>\nx</pre>")).toBe("<pre>x</pre>")
  })

  it("should neutralise the noscript mutation vector", () => {
    const once = clean('<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>')
    expect(unsafeParts(once)).toEqual([])
    expect(clean(once)).toBe(once)
  })

  it("should neutralise namespace-confusion payloads", () => {
    const input = "<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>"
    expect(unsafeParts(clean(input))).toEqual([])
  })
})

describe("sanitizeArticleHtml: depth and size", () => {
  it("should accept 256 nested elements", () => {
    expect(failureTag(sanitizeArticleHtml("<div>".repeat(256) + "x"))).toBe("success")
  })

  it("should refuse 257 nested elements with InvalidRequest", () => {
    const error = failureOf(sanitizeArticleHtml("<div>".repeat(257) + "x"))
    expect(error._tag).toBe("InvalidRequest")
    expect(error._tag === "InvalidRequest" && error.errors[0]?.path).toBe("body")
    expect(error.detail).toMatch(/256/)
  })

  it("should refuse 300 nested elements inside dropped content too", () => {
    expect(failureTag(sanitizeArticleHtml("<svg>" + "<g>".repeat(300) + "</svg>"))).toBe("InvalidRequest")
  })

  it("should refuse 200000 nested elements without overflowing the stack", () => {
    expect(failureTag(sanitizeArticleHtml("<b>".repeat(200_000)))).toBe("InvalidRequest")
    expect(failureTag(sanitizeArticleHtml("<div>".repeat(200_000)))).toBe("InvalidRequest")
  })

  it("should sanitise a 1 MiB body", () => {
    const paragraph = '<p>Some <a href="https://example.com">text</a> and more words here &amp; there.</p>\n'
    const whole = paragraph.repeat(Math.floor((1024 * 1024) / paragraph.length))
    // Whole paragraphs, padded with text to exactly 1 MiB: its stored form is itself.
    const body = whole + "x".repeat(1024 * 1024 - whole.length)
    const result = Effect.runSync(analyzeArticleHtml(body))
    expect(result.html).toBe(body)
    expect(result.wordCount).toBeGreaterThan(90_000)
  })

  it("should refuse with PayloadTooLarge a body whose sanitised form is over 1 MiB", () => {
    // 1 MiB with a paragraph left open: the stored form closes it, four bytes too many.
    const body = "<p>" + "x".repeat(1024 * 1024 - 3)
    const error = failureOf(analyzeArticleHtml(body))
    expect(error._tag).toBe("PayloadTooLarge")
    expect(error.detail).toMatch(/^The body's sanitised HTML is larger than 1048576 bytes \(1 MiB\); the parser closes and reopens elements left open, .* Close the elements or send less\.$/)
  })

  it("should refuse a body nested deeper than 256 elements with InvalidRequest naming the body and the bound", () => {
    expect(failureOf(analyzeArticleHtml(`<p>${"<span>".repeat(300)}x</p>`))).toMatchObject({
      _tag: "InvalidRequest",
      detail: "The body is HTML nested deeper than 256 elements.",
      errors: [{ path: "body", message: "HTML must not be nested deeper than 256 elements" }],
    })
  })

  it("should refuse with PayloadTooLarge formatting tags that the parser reopens into more than 1 MiB", () => {
    // Each <p> closes the formatting elements of the one before and reopens them: 7 times the input.
    const error = failureOf(analyzeArticleHtml("<p><b><i><u>".repeat(20_000)))
    expect(error._tag).toBe("PayloadTooLarge")
  })

  it("should refuse with PayloadTooLarge a parse that would build more than MAX_PARSED_NODES elements and attributes", () => {
    // 300 distinct open formatting elements, reopened in each of 2000 paragraphs: 600 000 elements from 23 KB.
    const formatting = Array.from({ length: 300 }, (_, i) => `<b id=b${i}>`).join("")
    const error = failureOf(analyzeArticleHtml(`<p>${formatting}</p>` + "<p>x".repeat(2000)))
    expect(error._tag).toBe("PayloadTooLarge")
    expect(error.detail).toMatch(new RegExp(`^The body's HTML builds more than ${MAX_PARSED_NODES} elements and attributes when parsed \\(for example .*\\); close them or simplify the markup\\.$`))
  })

  it("should keep a stored body's reopened formatting elements when within the bounds", () => {
    const body = "<p><b>a</p><p>b</p>"
    const once = clean(body)
    expect(once).toBe("<p><b>a</b></p><p><b>b</b></p>")
    expect(clean(once)).toBe(once)
  })

  it("should accept markup up to MAX_PARSED_NODES elements and attributes, and refuse it past them", () => {
    const within = "<br>".repeat(MAX_PARSED_NODES - 16)
    expect(Effect.runSync(analyzeArticleHtml(within)).html).toBe(within)
    expect(failureOf(analyzeArticleHtml('<br class="a">'.repeat(MAX_PARSED_NODES / 2)))._tag).toBe("PayloadTooLarge")
  })

  it("should treat the empty string as an empty body", () => {
    expect(Effect.runSync(sanitizeArticleHtml(""))).toStrictEqual({ html: "", report: { changed: false, removed: [] } })
  })
})

describe("the corpus checker", () => {
  it("should flag what the sanitiser must remove", () => {
    const problems = unsafeParts('<a href="java\tscript:x" onclick="y">a</a><svg></svg><p style="x"></p>')
    expect(problems).toHaveLength(4)
    expect(problems).toContain("attribute onClick")
    expect(problems).toContain("href=javascript:x")
    expect(problems).toContain("element svg")
    expect(problems).toContain("attribute style")
  })
})

describe("sanitizeArticleHtml: disallowed block elements", () => {
  const analyze = (input: string) => Effect.runSync(analyzeArticleHtml(input))

  const blocks: ReadonlyArray<readonly [string, string]> = [
    ["nav", "div"], ["main", "div"], ["address", "div"], ["center", "div"], ["fieldset", "div"],
    ["dialog", "div"], ["search", "div"], ["hgroup", "div"], ["legend", "div"], ["menu", "ul"], ["dir", "ul"],
  ]
  for (const [tag, equivalent] of blocks) {
    it(`should keep the content of each ${tag} as a block of its own (${equivalent}), not run into its neighbour`, () => {
      const result = analyze(`<${tag}>Home</${tag}><${tag}>About</${tag}>`)
      expect(result.html).toBe(`<${equivalent}>Home</${equivalent}><${equivalent}>About</${equivalent}>`)
      expect(result.wordCount).toBe(2)
      expect(result.report).toStrictEqual({ changed: true, removed: [{ what: tag, count: 2 }] })
    })
  }

  it("should separate a block element's text from the text around it", () => {
    const result = analyze("Before<nav>Home</nav>After")
    expect(result.html).toBe("Before<div>Home</div>After")
    expect(result.wordCount).toBe(3)
  })

  it("should keep a listing's text as preformatted text", () => {
    const result = analyze("<listing>a\nb</listing><listing>c</listing>")
    expect(result.html).toBe("<pre>a\nb</pre><pre>c</pre>")
    expect(result.wordCount).toBe(3)
    expect(result.report.removed).toStrictEqual([{ what: "listing", count: 2 }])
  })

  it("should keep only the attributes the schema allows on the equivalent, and report only the tag", () => {
    const result = analyze('<nav class="menu" id="top" onclick="x()" style="color:red" data-x="1">Home</nav>')
    expect(result.html).toBe('<div class="menu" id="top">Home</div>')
    expect(result.report).toStrictEqual({ changed: true, removed: [{ what: "nav", count: 1 }] })
  })

  it("should not make a protected block of a disallowed element that claims to be one", () => {
    const result = analyze('<nav data-service-protected="box"><a href="https://m.test/" data-service-protected="backlink">m</a></nav>')
    expect(result.html).toBe('<div><a href="https://m.test/" data-service-protected="backlink">m</a></div>')
    expect(result.blocks.map((block) => block.href)).toStrictEqual(["https://m.test/"])
  })

  it("should be idempotent on the equivalent it stores", () => {
    const first = analyze("<main><nav>a</nav><p>b<center>c</center></p></main>")
    const again = analyze(first.html)
    expect(again.html).toBe(first.html)
    expect(again.report).toStrictEqual({ changed: false, removed: [] })
    expect(again.wordCount).toBe(first.wordCount)
  })

  it("should leave an inline unknown element unwrapped in place, joining no words and adding none", () => {
    for (const [input, html] of [
      ["<p>a<my-widget>b</my-widget>c</p>", "<p>abc</p>"],
      ["<p>x<font>y</font><big>z</big><tt>w</tt></p>", "<p>xyzw</p>"],
      ["<my-widget>Home</my-widget><my-widget>About</my-widget>", "HomeAbout"],
    ] as const) {
      const result = analyze(input)
      expect(result.html).toBe(html)
      expect(result.wordCount).toBe(1)
    }
  })
})
