import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  matchedMarksOnly,
  MAX_SEARCH_QUERY_CHARACTERS,
  proseOfHtml,
  relaxedSearchQueries,
  SEARCH_HTML_CHARACTERS,
  SEARCH_MARK_START as S,
  SEARCH_MARK_STOP as E,
  SEARCH_TEXT_AMP,
  SEARCH_TEXT_LT,
  searchTextOfHtml,
  SNIPPET_CHARACTERS,
  SNIPPET_LEAD_CHARACTERS,
  SNIPPET_LEAD_UNITS,
  SNIPPET_UNITS,
  searchQueryTerms,
  searchQueryText,
  snippetOf,
  titleTermsQuery,
  searchPlainText,
  searchDatabaseQuery,
} from "../../src/index.ts"

describe("snippetOf", () => {
  it("should wrap each marked match in <mark> and escape everything else", () => {
    expect(snippetOf(`Fish & ${S}chips${E} <b>"x"</b> 'y'`)).toBe("Fish &amp; <mark>chips</mark> &lt;b&gt;&quot;x&quot;&lt;/b&gt; &#39;y&#39;")
  })
  it("should collapse white space and trim the ends", () => {
    expect(snippetOf(`  a \n\t b   ${S}c${E}   `)).toBe("a b <mark>c</mark>")
  })
  it("should cut the text after 300 characters, closing a mark cut short", () => {
    const long = snippetOf(`${"a ".repeat(30)}${S}${"b".repeat(290)}${E} tail`)
    expect(long.replace(/<\/?mark>/g, "")).toHaveLength(SNIPPET_CHARACTERS)
    expect(long.endsWith("</mark>")).toBe(true)
  })
  it("should start at most 60 characters before the first match, at a word's start, so a long lead cannot crowd the match out", () => {
    const long = "x".repeat(50)
    const headline = `${long} ${long} ${long} ${long} ${long} ${long} ${long} ${long} the ${S}tulips${E} bloom`
    const out = snippetOf(headline)
    expect(out).toContain("<mark>tulips</mark>")
    expect(out).toBe(`${long} the <mark>tulips</mark> bloom`)
    expect(out.indexOf("<mark>")).toBeLessThanOrEqual(SNIPPET_LEAD_CHARACTERS)
    // a word longer than the lead: the snippet starts at the match
    expect(snippetOf(`${"y".repeat(400)} ${S}tulips${E} bloom`)).toBe("<mark>tulips</mark> bloom")
    // within the lead, or no match at all: from the start, spaces counted once a run
    expect(snippetOf(`a  lead   of  words ${S}tulips${E}`)).toBe("a lead of words <mark>tulips</mark>")
    expect(snippetOf(`${"z ".repeat(30)}${S}m${E}`)).toBe(`${"z ".repeat(30)}<mark>m</mark>`)
    expect(snippetOf(`${"z ".repeat(29)}zz ${S}m${E}`)).toBe(`${"z ".repeat(28)}zz <mark>m</mark>`)
    expect(snippetOf(`${"w".repeat(400)}`)).toBe("w".repeat(SNIPPET_CHARACTERS))
  })
  it("should read a bounded number of code units whatever the headline holds that the snippet does not count", () => {
    // ts_headline counts words, not the white space between them: a body's run of 199 000 spaces
    // (or of zero-width spaces, or of stray mark ends) is all in its headline, and counted once or
    // not at all. A page holds up to 100 hits: 0.6 to 1 s of event loop before.
    const run = 199_000
    const cases = [
      [`a${" ".repeat(run)}${S}x${E}`, "<mark>x</mark>"],
      [`${S}x${E}${" ".repeat(run)}b`, "<mark>x</mark>"],
      [`a${"\u200b".repeat(run)}${S}x${E}`, "<mark>x</mark>"],
      [`${S}x${E}${E.repeat(run)} b`, "<mark>x</mark>"],
    ] as const
    for (const [headline, snippet] of cases) {
      const work = { read: 0 }
      expect(snippetOf(headline, work)).toBe(snippet)
      expect(work.read).toBeLessThanOrEqual(SNIPPET_LEAD_UNITS + SNIPPET_UNITS)
    }
    // ordinary text is read to its counted bounds as before
    const work = { read: 0 }
    expect(snippetOf(`${"a  ".repeat(40)}${S}x${E}${" b".repeat(200)}`, work)).toBe(`${"a ".repeat(30)}<mark>x</mark>${" b".repeat(119)}`)
    expect(work.read).toBeLessThanOrEqual(SNIPPET_LEAD_UNITS + SNIPPET_UNITS)
  })
  it("should never let text become markup: only <mark> and </mark> remain as tags", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("<", ">", "&", '"', "'", "a", " ", "é", S, E, "\n") }), (headline) => {
        const out = snippetOf(headline)
        expect(out).toMatch(/^(?:[^<>]|<\/?mark>)*$/)
        expect(out.replace(/<\/?mark>/g, "").replace(/&(?:amp|lt|gt|quot|#39);/g, "x").length).toBeLessThanOrEqual(SNIPPET_CHARACTERS)
        // marks are balanced
        expect(out.split("<mark>").length).toBe(out.split("</mark>").length)
      }),
    )
  })
})

describe("searchTextOfHtml", () => {
  it("should replace the tags that part words by spaces, decode the serialiser's entities and drop the mark characters", () => {
    expect(searchTextOfHtml(`<p class="x">Fish &amp; chips &lt;b&gt;</p><p>a${S}b</p>`)).toBe(` Fish ${SEARCH_TEXT_AMP} chips ${SEARCH_TEXT_LT}b>\u200b  a b `)
  })
  it("should join what an inline tag splits, as a reader and the word count see it, and part what a block or <br> does", () => {
    expect(searchTextOfHtml('<p>An <strong>un</strong>believable <em>Hydro</em>ponics <a href="x">set</a>up</p><ul><li>a</li><li>b<br>c</li></ul><table><tr><td>c1</td><td>c2</td></tr></table>')).toBe(
      " An unbelievable Hydroponics setup   a  b c     c1  c2   ",
    )
  })
  it("should keep text that looks like a tag as text: a zero-width space after its '<', which the snippet leaves out", () => {
    const text = searchTextOfHtml("<p>Tag &lt;numbat&gt; text</p>")
    expect(text).toBe(" Tag <\u200bnumbat>\u200b text ")
    expect(snippetOf(text.replace("numbat", `${S}numbat${E}`))).toBe("Tag &lt;<mark>numbat</mark>&gt; text")
    // a zero-width space of the article's own text stays
    expect(snippetOf("a\u200bb")).toBe("a\u200bb")
  })
  it("should decode &amp;lt; once, as the database does, a zero-width space after its '&', which the snippet leaves out", () => {
    const text = searchTextOfHtml("<p>&amp;lt; R&amp;D; &amp;nbsp;</p>")
    expect(text).toBe(" &\u200blt;\u200b R&\u200bD;\u200b &\u200bnbsp;\u200b ")
    expect(snippetOf(text.replace("nbsp", `${S}nbsp${E}`))).toBe("&amp;lt; R&amp;D; &amp;<mark>nbsp</mark>;")
  })
  it("should search only the first 200 000 characters, counted as code points", () => {
    const text = searchTextOfHtml(`${"😀".repeat(SEARCH_HTML_CHARACTERS)}tail`)
    expect([...text]).toHaveLength(SEARCH_HTML_CHARACTERS)
  })
})

describe("proseOfHtml", () => {
  it("should give paragraphs, headings and list items lines of their own, without markup", () => {
    expect(proseOfHtml("<h2>Intro</h2><p>One &amp; <a href=\"x\">two</a>.</p><ul><li>a</li><li>b</li></ul><p>x<br>y</p>")).toBe(
      "Intro\n\nOne & two.\n\n- a\n\n- b\n\nx\ny",
    )
  })

  it("should keep a table's cells apart: a row a line, its cells between ' | '", () => {
    expect(proseOfHtml("<table><thead><tr><th>Plant</th> <th>Month</th></tr></thead><tbody><tr><td>c1</td><td>c<b>2</b></td></tr></tbody></table><p>after</p>")).toBe(
      "Plant | Month\n\nc1 | c2\n\nafter",
    )
  })

  it("should keep a row on one line when its cells hold blocks (paragraphs, lists), its cells between ' | '", () => {
    expect(proseOfHtml("<table><tr><th><p>Plant</p></th><th>Month</th></tr><tr><td><p>Apple</p><p>Gala</p></td><td><ul><li>May</li><li>June</li></ul></td></tr></table><p>after</p>")).toBe(
      "Plant | Month\n\nApple Gala | - May - June\n\nafter",
    )
  })

  it("should part the words of a block that opens inside another, of an image and of a rule, as the word count does", () => {
    // a nested list, a paragraph inside a div after its own text, an image between two words, a rule inside a div
    expect(
      proseOfHtml('<ul><li>Fruit<ul><li>Apple</li><li>Pear</li></ul></li><li>Veg</li></ul><div>Intro<p>Para</p></div><p>Before<img src="https://x.test/i.png" alt="">After</p><div>Top<hr>Bottom</div><address>Post</address><main>Box</main>'),
    ).toBe("- Fruit\n\n- Apple\n\n- Pear\n\n- Veg\n\nIntro\n\nPara\n\nBefore After\n\nTop\n\nBottom\n\nPost\n\nBox")
  })

  it("should keep a <pre>'s indentation, tabs and blank lines (code reads as written), not the line break HTML ignores after <pre>", () => {
    expect(proseOfHtml('<p>Code:</p><pre>\ndef f():\n    return 1\n\n\n\tx</pre><pre><code class="py">  a\n  b</code></pre><p>after  it</p>')).toBe(
      "Code:\n\ndef f():\n    return 1\n\n\n\tx\n\n  a\n  b\n\nafter it",
    )
  })

  it("should read the source's own line breaks as spaces, as a browser shows indented HTML, but keep a <pre>'s lines", () => {
    expect(proseOfHtml("<h2>\n  Picking apples\n</h2>\n<p>\n  Pick them when\n  they are ripe.\n</p>\n<ul>\n  <li>\n    Gala\n  </li>\n  <li>Fuji</li>\n</ul>\n<pre>a\nb</pre><p>x<br>\ny</p>")).toBe(
      "Picking apples\n\nPick them when they are ripe.\n\n- Gala\n\n- Fuji\n\na\nb\n\nx\ny",
    )
  })

  it("should number an ordered list's items as a browser does (its start, counting down when reversed, nested lists their own)", () => {
    expect(proseOfHtml("<ol><li>One<ul><li>Dot</li></ul></li><li>Two<ol start=\"7\"><li>Seven</li><li>Eight</li></ol></li><li>Three</li></ol>")).toBe(
      "1. One\n\n- Dot\n\n2. Two\n\n7. Seven\n\n8. Eight\n\n3. Three",
    )
    expect(proseOfHtml('<ol reversed=""><li>a</li><li>b<ol reversed="" start="10"><li>x</li><li>y</li></ol></li><li>c</li></ol><ol><li>again</li></ol>')).toBe(
      "3. a\n\n2. b\n\n10. x\n\n9. y\n\n1. c\n\n1. again",
    )
  })

  it("should write an item whose text opens with a block (a loose list's <li><p>) after its '- ' or number, not on a line of its own", () => {
    expect(proseOfHtml('<ul><li><p>Water early</p><p>and often</p></li><li>\n  <p class="x">Mulch</p></li></ul><ol start="3"><li><h3>Prune</h3></li><li><div><p>Feed</p></div></li><li><p></p></li></ol>')).toBe(
      "- Water early\n\nand often\n\n- Mulch\n\n3. Prune\n\n4. Feed\n\n5.",
    )
    // an item that opens with a list of its own keeps its marker apart, as before; a block after a link stays after its address
    expect(proseOfHtml("<ul><li><ul><li>a</li></ul></li></ul>")).toBe("-\n\n- a")
    expect(proseOfHtml('<div><a href="https://x.test/">go</a><p>next</p></div>')).toBe("go (https://x.test/)\n\nnext")
  })

  it("should write a link's address after its text, unless the text is the address or the link is not to a web address", () => {
    expect(
      proseOfHtml(
        '<p>See <a href="https://x.test/a?b=1&amp;c=2">the <em>guide</em></a>, <a href="https://x.test/">https://x.test/</a>, <a href="mailto:a@x.test">mail</a> and <a href="https://x.test/&lt;p&gt;">odd</a>.</p>',
      ),
    ).toBe("See the guide (https://x.test/a?b=1&c=2), https://x.test/, mail and odd (https://x.test/<p>).")
  })

  it("should not read a body's own noncharacters as the white space a <pre> keeps", () => {
    expect(proseOfHtml("<p>a\uFDD2b\uFDD3c\uFDD4d</p><pre>e\uFDD4 f</pre>")).toBe("abcd\n\ne f")
  })
})

describe("searchQueryText", () => {
  it("should write every Unicode white space as a plain space and leave everything else as it was, one character for one", () => {
    expect(searchQueryText("a\u00a0b\u2003c\u3000d\te\u2028f")).toBe("a b c d e f")
    // not white space: a zero-width space or joiner is part of a word
    expect(searchQueryText("a\u200bb\u200dc")).toBe("a\u200bb\u200dc")
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 60 }), (q) => {
        const out = searchQueryText(q)
        expect(out.length).toBe(q.length)
        expect(/\p{White_Space}/u.test(out.replace(/ /g, ""))).toBe(false)
        expect(out.replace(/ /g, "")).toBe(q.replace(/\p{White_Space}/gu, ""))
      }),
    )
  })
})

describe("relaxedSearchQueries", () => {
  it("should try a question's own words, all of them, then any one of them", () => {
    expect(relaxedSearchQueries("Which articles talk about compost?")).toEqual(["compost"])
    expect(relaxedSearchQueries("What did we write about Tomato blight?")).toEqual(["Tomato blight", "Tomato OR blight"])
    // nothing of the question to drop: only the looser try
    expect(relaxedSearchQueries("compost heap")).toEqual(["compost OR heap"])
    // one word, or only a question's words: nothing else to try
    expect(relaxedSearchQueries("compost")).toEqual([])
    expect(relaxedSearchQueries("compost?")).toEqual([])
    expect(relaxedSearchQueries("what is this about?")).toEqual([])
  })

  it("should leave a query that uses the syntax as its author wrote it", () => {
    for (const q of ['"tomato blight" garden', "tomato OR potato", "tomato or potato", "tomato -potato", 'which "articles"']) expect(relaxedSearchQueries(q), q).toEqual([])
  })

  it("should leave out a question's negated words whose word is not the contraction's rest (can't, won’t, shan't), as it leaves out can, will and shall", () => {
    expect(relaxedSearchQueries("Why can't I grow tomatoes?")).toEqual(["grow tomatoes", "grow OR tomatoes"])
    expect(relaxedSearchQueries("Why won’t my compost heat up?")).toEqual(["compost heat up", "compost OR heat OR up"])
    expect(relaxedSearchQueries("Shan't we prune roses?")).toEqual(["prune roses", "prune OR roses"])
  })

  it("should read a dash standing alone as a sentence's punctuation, not as the syntax's -word", () => {
    expect(relaxedSearchQueries("Tomato blight - what causes it?")).toEqual(["Tomato blight causes", "Tomato OR blight OR causes"])
    expect(relaxedSearchQueries("Tomato blight -- what causes it?")).toEqual(["Tomato blight causes", "Tomato OR blight OR causes"])
    expect(relaxedSearchQueries("Tomato blight --what causes it?")).toEqual([])
  })

  it("should answer tries of at most a query's length, in plain words, and none that is the query itself", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: MAX_SEARCH_QUERY_CHARACTERS }), (q) => {
        const tries = relaxedSearchQueries(q)
        expect(tries.length).toBeLessThanOrEqual(2)
        for (const t of tries) {
          expect([...t].length).toBeLessThanOrEqual(MAX_SEARCH_QUERY_CHARACTERS)
          expect(t).not.toContain('"')
          expect(t).not.toBe(q)
          expect(t.split(" ").some((w) => w.startsWith("-"))).toBe(false)
        }
      }),
    )
    // the looser try keeps the words that fit
    const long = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ").slice(0, MAX_SEARCH_QUERY_CHARACTERS)
    const [any] = relaxedSearchQueries(long)
    expect(any!.length).toBeLessThanOrEqual(MAX_SEARCH_QUERY_CHARACTERS)
    expect(any!.startsWith("word0 OR word1 OR word2")).toBe(true)
  })
})

describe("searchPlainText and searchDatabaseQuery", () => {
  it("should follow every ASCII punctuation character with a zero-width space, and nothing else", () => {
    expect(searchPlainText("see example.com/path, </script> naïve–x")).toBe("see example.\u200bcom/\u200bpath,\u200b <\u200b/\u200bscript>\u200b naïve–x")
  })
  it("should write the query's terms as phrases of the searched text's spelling, keeping -, OR and phrases as written", () => {
    expect(searchDatabaseQuery('node.js -"co-op shop" OR x@y.z')).toBe('"node.\u200bjs" -"co-\u200bop shop" OR "x@\u200by.\u200bz"')
    // an OR that joins nothing is left out, as websearch_to_tsquery leaves it
    expect(searchDatabaseQuery("roses OR !")).toBe('"roses"')
    expect(searchDatabaseQuery("roses OR")).toBe('"roses" "OR"')
    expect(searchDatabaseQuery("- !")).toBe("")
  })
  it("should leave the zero-width space after punctuation out of a snippet", () => {
    expect(snippetOf(`${searchPlainText("see example.com/")}\uFDD0path\uFDD1${searchPlainText("/to.")}`)).toBe("see example.com/<mark>path</mark>/to.")
  })
})

describe("searchQueryTerms and titleTermsQuery", () => {
  it("should read words, phrases, negations and OR in any case, as websearch_to_tsquery does", () => {
    expect(searchQueryTerms('tomato "spring bulbs" -roses or -"late frost" OR a-b "open')).toEqual([
      { text: "tomato", phrase: false, negated: false },
      { text: "spring bulbs", phrase: true, negated: false },
      { text: "roses", phrase: false, negated: true },
      "OR",
      { text: "late frost", phrase: true, negated: true },
      "OR",
      { text: "a-b", phrase: false, negated: false },
      { text: "open", phrase: true, negated: false },
    ])
  })
  it("should give the positive terms, any one of them, and nothing for a query of negations", () => {
    expect(titleTermsQuery('tomato "spring bulbs" -roses OR -"late frost" a-b')).toBe('"tomato" OR "spring bulbs" OR "a-\u200bb"')
    expect(titleTermsQuery("-roses -tulips")).toBe("")
    expect(titleTermsQuery('"" - OR')).toBe("")
    // a quote ends a word and opens a phrase, as in PostgreSQL
    expect(titleTermsQuery('ab"cd')).toBe('"ab" OR "cd"')
    // the word "or" is a term like any other: quoted, the joined query reads it back as a word
    expect(titleTermsQuery("OR roses")).toBe('"OR" OR "roses"')
  })
  it("should read OR, - and operator characters where PostgreSQL's tokenizer does", () => {
    const read = (q: string) => searchQueryTerms(q).map((t) => (t === "OR" ? "|" : `${t.negated ? "!" : ""}${t.phrase ? `"${t.text}"` : t.text}`))
    // OR is an operator only after an operand and before another: else it is the word "or"
    expect(read("OR roses")).toEqual(["OR", "roses"])
    expect(read("roses OR")).toEqual(["roses", "OR"])
    expect(read("roses OR   ")).toEqual(["roses", "OR"])
    expect(read("roses OR OR tulips")).toEqual(["roses", "|", "OR", "tulips"])
    expect(read("OR OR roses")).toEqual(["OR", "|", "roses"])
    expect(read("roses OR!")).toEqual(["roses", "OR"])
    expect(read("roses OR! tulips")).toEqual(["roses", "|", "tulips"])
    expect(read('roses OR"tulips"')).toEqual(["roses", "|", '"tulips"'])
    expect(read("roses OR-tulips orchids or_x")).toEqual(["roses", "OR-tulips", "orchids", "or_x"])
    // a lone - negates the next operand; two undo each other; a trailing one negates nothing
    expect(read("- roses")).toEqual(["!roses"])
    expect(read("roses - tulips")).toEqual(["roses", "!tulips"])
    expect(read("--roses - - tulips -")).toEqual(["roses", "tulips"])
    expect(read('a -"b c" -OR')).toEqual(["a", '!"b c"', "!OR"])
    // operator characters end a word and are passed over; other punctuation stays in the word
    expect(read("roses!tulips (a|b) x:y c>d")).toEqual(["roses", "tulips", "a", "b", "x", ":y", "c>d"])
    // `:` ends a word but starts one too: `:or` is a word, not the operator
    expect(read("a :or b")).toEqual(["a", ":or", "b"])
    expect(read("a : or b")).toEqual(["a", ":", "|", "b"])
    expect(read('roses"tulips')).toEqual(["roses", '"tulips"'])
    // space is ASCII space, as C's isspace reads it: a no-break space is part of a word
    expect(read("roses\u00a0OR\u00a0tulips")).toEqual(["roses\u00a0OR\u00a0tulips"])
    expect(read("roses\tOR\ntulips")).toEqual(["roses", "|", "tulips"])
  })
})

describe("matchedMarksOnly", () => {
  const m = (w: string) => `${S}${w}${E}`
  it("should unmark a phrase's word that stands alone, and keep the phrase's run, across punctuation and case", () => {
    const headline = `${m("Spring")} is here. We plant ${m("spring")} ${m("bulbs")} now, ${m("Bulbs")} are ${m("tomato")}-${m("blight")}.`
    expect(matchedMarksOnly(headline, '"spring bulbs" tomato-blight')).toBe(`Spring is here. We plant ${m("spring")} ${m("bulbs")} now, Bulbs are ${m("tomato")}-${m("blight")}.`)
    // a word of the query of its own keeps its marks everywhere
    // (and a mark it cannot place, here a word not in the query, is left as the database put it)
    expect(matchedMarksOnly(headline, '"spring bulbs" bulbs')).toBe(`Spring is here. We plant ${m("spring")} ${m("bulbs")} now, ${m("Bulbs")} are ${m("tomato")}-${m("blight")}.`)
  })
  it("should unmark the words the query excludes, as ts_headline marks them too, unless a positive term holds them", () => {
    const headline = `${m("Roses")} and ${m("tulips")}, ${m("Tulips")} and ${m("lilies")}`
    expect(matchedMarksOnly(headline, "roses -tulips")).toBe(`${m("Roses")} and tulips, Tulips and ${m("lilies")}`)
    expect(matchedMarksOnly(headline, 'roses -"tulips lilies"')).toBe(`${m("Roses")} and tulips, Tulips and lilies`)
    expect(matchedMarksOnly(headline, "roses -tulips OR tulips")).toBe(headline)
  })
  it("should read the text between marks once, however many words the query's phrases have", () => {
    // The worst headline ts_headline can make: 35 words (MaxWords) apart by runs of white space
    // (non-word tokens, not counted by MaxWords) filling a body's searched text, and a query of
    // one phrase of 99 one-letter words (199 characters, under the query's 200).
    const gap = " ".repeat(Math.floor(SEARCH_HTML_CHARACTERS / 35))
    const headline = Array.from({ length: 35 }, () => m("x")).join(gap)
    const query = `"${Array.from({ length: 99 }, () => "x").join(" ")}"`
    expect(query.length).toBeLessThanOrEqual(MAX_SEARCH_QUERY_CHARACTERS)
    const work = { read: 0 }
    // (35 marks cannot spell the 99 words: every mark is the phrase's alone, and goes)
    expect(matchedMarksOnly(headline, query, work)).toBe(headline.replaceAll(S, "").replaceAll(E, ""))
    // each character between two marks read once (before: once for each phrase word that could
    // reach it, up to 34 times here: 3.4 M characters, 35 ms a hit, and a page holds many hits)
    expect(work.read).toBeLessThanOrEqual(headline.length)
  })
  it("should leave a headline without phrases as it is, and keep a mark it cannot place", () => {
    const headline = `${m("Crème")} and ${m("brûlée")} and ${m("x")}`
    expect(matchedMarksOnly(headline, "creme brulee")).toBe(headline)
    expect(matchedMarksOnly(headline, '"creme brulee"')).toBe(`Crème and brûlée and ${m("x")}`)
    expect(matchedMarksOnly(`${m("Crème")} ${m("brûlée")}`, '"CREME brulee" -"x y"')).toBe(`${m("Crème")} ${m("brûlée")}`)
  })
})
