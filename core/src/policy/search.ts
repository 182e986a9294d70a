import { WORD_BOUNDARY_ELEMENTS } from "../html/words.ts"
import { MAX_SEARCH_QUERY_CHARACTERS } from "../schema/queries.ts"

/**
 * The rules of full-text search that every storage adapter shares: which text of a body is
 * searched, and how a headline (the adapter's text with its matches between two markers) becomes
 * the public `snippet`: plain text, HTML-escaped, matches in `<mark>`, at most 300 characters.
 */

/**
 * How many characters (code points) of a body's HTML are searched: the first 200 000. It bounds
 * the work of indexing a change and of a snippet (linear in it), and keeps a body's `tsvector`
 * under PostgreSQL's 1 MB ceiling whatever the body holds (at most about 33 000 distinct words).
 */
export const SEARCH_HTML_CHARACTERS = 200_000

/**
 * How many characters (code points) of a body's HTML a hit's headline reads for its first match:
 * the first 32 768 (32 Ki). A search finds a body by its first `SEARCH_HTML_CHARACTERS`, but marking
 * the query's words costs about 0.3 µs a character of the text marked (PostgreSQL's `ts_headline`
 * of a 200 000-character body of short words: about 50 ms a hit, 5 s of the database's time for
 * a page of 100 such hits; 10 ms and 1 s with this bound, 2026-11-29). A body whose first match is
 * past it shows the title's or target keyword's match, else its opening.
 */
export const HEADLINE_HTML_CHARACTERS = 32_768

/** The longest snippet, in characters (code points) of its text, marks and escapes not counted. */
export const SNIPPET_CHARACTERS = 300

/**
 * What an adapter puts before and after each match of a headline: Unicode noncharacters, which
 * the searched text never holds (`searchTextOfHtml` removes them), so no text can forge a mark.
 */
export const SEARCH_MARK_START = "\uFDD0"
/** See `SEARCH_MARK_START`. */
export const SEARCH_MARK_STOP = "\uFDD1"

/**
 * How many characters (code points) of a body's searched text a headline holds before its first
 * mark: more than `snippetStart` reads back (`SNIPPET_LEAD_UNITS` code units), so that it finds the
 * same start in the window as in the whole text.
 */
export const HEADLINE_BEFORE = 1000

/** How many characters (code points) a body's headline holds at most: more than `snippetOf` reads past its start. */
export const HEADLINE_CHARACTERS = 7000

/**
 * A body's headline (its searched text, every word of the query marked) cut as the database
 * adapter cuts it (`substr(h, greatest(1, strpos(h, mark) - HEADLINE_BEFORE), HEADLINE_CHARACTERS)`):
 * from `HEADLINE_BEFORE` code points before the first mark (or the start), at most
 * `HEADLINE_CHARACTERS` code points. Linear in the text.
 */
export const headlineWindow = (marked: string): string => {
  const chars = Array.from(marked)
  const mark = chars.indexOf(SEARCH_MARK_START)
  const from = Math.max(0, mark - HEADLINE_BEFORE)
  return chars.slice(from, from + HEADLINE_CHARACTERS).join("")
}

/**
 * The headline a snippet is made of: the body's where a match of the query is marked there (after
 * `matchedMarksOnly`), else the title's, else the target keyword's (an article found by its title
 * alone shows where it matched), else the body's opening. Linear in the headlines.
 */
export const snippetHeadline = (hit: { readonly headline: string; readonly titleHeadline: string; readonly keywordHeadline: string }, query: string): string => {
  const body = matchedMarksOnly(hit.headline, query)
  if (body.includes(SEARCH_MARK_START)) return body
  for (const other of [hit.titleHeadline, hit.keywordHeadline]) {
    const marked = matchedMarksOnly(other, query)
    if (marked.includes(SEARCH_MARK_START)) return marked
  }
  return body
}

const ENTITY = /&(amp|lt|gt|nbsp|quot);/g
const DECODED: Record<string, string> = { amp: "&", lt: "<", gt: ">", nbsp: "\u00a0", quot: '"' }

/**
 * What a `<` of the text is followed by in the searched text: a zero-width space, so that
 * PostgreSQL's text-search parser does not read `<numbat>` written in an article as a tag and
 * drop its word (`snippetOf` leaves it out again).
 */
export const SEARCH_TEXT_LT = "<\u200b"

/**
 * What a `&` of the text is followed by in the searched text: a zero-width space, so that
 * PostgreSQL's text-search parser does not read `&nbsp;` or `R&D;` written in an article as an
 * entity and drop its word (`snippetOf` leaves it out again).
 */
export const SEARCH_TEXT_AMP = "&\u200b"

/**
 * The characters of the searched text that a zero-width space follows: every ASCII punctuation
 * character. PostgreSQL's text-search parser reads runs of words and punctuation as tokens of their
 * own (a host `example.com`, a path `/path/to` or `/script` of an escaped `</script>`, a file
 * `node.js`, an email, a version `2.0`, a number `-5`, a tag, an entity) and indexes them whole, so
 * a word inside them was not found by itself (`path`, `script`, `node`, `2`, `5`), though a person
 * reads it as a word and the memory store found it. After the zero-width space the parser sees only
 * words (runs of letters and digits), as the memory store reads them; a snippet leaves the
 * zero-width spaces out again (`snippetOf`).
 */
const SEARCH_PUNCTUATION = /[!-/:-@[-`{-~]/g
/** One character of `SEARCH_PUNCTUATION`. */
const ONE_SEARCH_PUNCTUATION = new RegExp(`^${SEARCH_PUNCTUATION.source}$`)

/**
 * The soft hyphen: a place where a word may be broken across lines, not shown otherwise
 * (`pomo&shy;doro` reads *pomodoro*). PostgreSQL's parser read it as part of a word under one
 * locale (PGlite: *pomo­doro*, which `pomodoro` did not find) and as a space under another (and
 * the memory store), so the searched text leaves it out: every storage reads the word a reader sees.
 */
const SOFT_HYPHEN = "\u00ad"

/**
 * A title's, a target keyword's or a body's text as it is searched: each ASCII punctuation
 * character followed by a zero-width space (`SEARCH_PUNCTUATION`; `SEARCH_TEXT_LT` and
 * `SEARCH_TEXT_AMP` are two of them), soft hyphens left out (`SOFT_HYPHEN`). The SQL function
 * `cs_search_plain` of the database adapter computes the same text; a query's terms are written so
 * too (`searchDatabaseQuery`). Two passes.
 */
export const searchPlainText = (text: string): string => text.replaceAll(SOFT_HYPHEN, "").replace(SEARCH_PUNCTUATION, "$&\u200b")

/** Whether a zero-width space after `c` is one `searchPlainText` put there. */
const isSearchPunctuation = (c: string): boolean => ONE_SEARCH_PUNCTUATION.test(c)

const TAG = /<\/?([a-zA-Z][a-zA-Z0-9]*)[^>]*>/g
// the tags that part words (a paragraph, a cell, `<br>`): a space; any other (`<b>`, `<a>`) joins what is on both sides
const tagAsText = (_: string, name: string): string => (WORD_BOUNDARY_ELEMENTS.has(name.toLowerCase()) ? " " : "")

/**
 * The searched text of a stored body: its first `SEARCH_HTML_CHARACTERS` characters (or
 * `characters`: a headline's `HEADLINE_HTML_CHARACTERS`, as `cs_search_text(left(body, n))`), the tags
 * that part words (`WORD_BOUNDARY_ELEMENTS`, as the word count reads them) replaced by a space and
 * every other tag removed (`un<b>believ</b>able` is one word), the entities the serialiser writes
 * in text (`&amp;`, `&lt;`, `&gt;`, `&nbsp;`, and `&quot;`) decoded, the mark characters removed,
 * and each ASCII punctuation character followed by a zero-width space (`searchPlainText`: a `<` is
 * `SEARCH_TEXT_LT`, a `&` `SEARCH_TEXT_AMP`). Stored bodies are serialised
 * by the core (attribute values escape `>`), so `<[^>]*>` finds exactly their tags. The SQL
 * function `cs_search_text` of the database adapter computes the same text. Linear in the prefix.
 */
export const searchTextOfHtml = (html: string, characters: number = SEARCH_HTML_CHARACTERS): string => {
  // the prefix by code points, as PostgreSQL's `left` counts: at most `characters` steps
  let end = 0
  for (let n = 0; n < characters && end < html.length; n++) {
    const unit = html.charCodeAt(end)
    end += unit >= 0xd800 && unit <= 0xdbff && end + 1 < html.length ? 2 : 1
  }
  return searchPlainText(
    html
      .slice(0, end)
      .replace(TAG, tagAsText)
      .replace(/<[^>]*>/g, "")
      .replace(ENTITY, (_, name: string) => DECODED[name]!)
      .replace(/[\uFDD0\uFDD1]/g, " "),
  )
}

/** One term of a web-search query as written: a word or a `"phrase"` (without its quotes), maybe negated. */
export interface SearchQueryTerm {
  readonly text: string
  readonly phrase: boolean
  readonly negated: boolean
}

/** What `websearch_to_tsquery` reads as space between tokens: C's `isspace`, ASCII only (a no-break space is part of a word). */
const isQuerySpace = (c: string): boolean => c === " " || (c >= "\t" && c <= "\r")
/** PostgreSQL's operator characters: passed over where they stand, and they end a word. */
const QUERY_OPERATOR_CHARACTERS: ReadonlySet<string> = new Set(["!", "&", "|", "(", ")", "<"])
/** What ends a word after its first character: space, `"`, an operator character and `:` (a weight in tsquery; `:or` is a word). */
const endsQueryWord = (c: string): boolean => isQuerySpace(c) || c === '"' || c === ":" || QUERY_OPERATOR_CHARACTERS.has(c)


/**
 * Whether the query's characters at `at` are an `OR` operator, as PostgreSQL's
 * `parse_or_operator` decides after an operand: `or` in any case, not part of a word (not followed
 * by a letter, a digit, `-` or `_`), and some character other than white space after the one that
 * follows it ("roses OR" and "roses OR!" end in the word *or*). At most the query's characters.
 */
const orOperatorAt = (chars: ReadonlyArray<string>, at: number): boolean => {
  if ((chars[at] ?? "").toLowerCase() !== "o" || (chars[at + 1] ?? "").toLowerCase() !== "r") return false
  const next = chars[at + 2]
  if (next === undefined || next === "-" || next === "_" || /[\p{L}\p{N}]/u.test(next)) return false
  for (let i = at + 3; i < chars.length; i++) if (!isQuerySpace(chars[i]!)) return true
  return false
}

/**
 * A query as the service hands it to its storage: every Unicode white space (no-break, em, thin and
 * ideographic spaces, line and paragraph separators) written as a plain space, which is all that
 * `searchQueryTerms` and the database's own reading count as space (PostgreSQL with a UTF-8
 * collation would count some of the others too, and PGlite none), so that every storage reads a
 * query the same way, and a phrase pasted from a web page (its spaces often no-break ones) is read
 * as the words a person sees. One character for one: the query's length is kept.
 */
export const searchQueryText = (q: string): string => q.replace(/\p{White_Space}/gu, " ")

/**
 * Words of a question or a request in English that say nothing of what it is about (a chat
 * assistant asks "Which articles talk about compost?"); every result is an article, so
 * `article` and its kin say nothing either. Compared in lower case.
 */
const QUESTION_WORDS: ReadonlySet<string> = new Set(
  (
    "a an the and of to in on at for from with about into by as is are was were be been being do does did done " +
    "what which who whom whose where when why how i me my we us our you your it its they them their this that these those there here " +
    "any anything some something all each every have has had can could should would will shall may might must please tell show find give list " +
    "know want need look looking search searching article articles post posts page pages blog talk talks talking mention mentions " +
    "mentioning write wrote written writing say says said cover covers covered discuss discusses discussed"
  ).split(" "),
)

/** The ending of a contraction: *what's*, *where’s*, *we're*, *I've*, *don't* are words of the question too. */
const CONTRACTION = /(?:n['’]t|['’](?:s|re|ve|ll|d|m))$/

/** The negations whose word is not the contraction's rest (*can't* is *can*, not *ca*). */
const IRREGULAR_NEGATIONS: ReadonlyMap<string, string> = new Map([["can't", "can"], ["won't", "will"], ["shan't", "shall"]])

/** Whether a bare word is one of the question's own (`QUESTION_WORDS`), written whole or contracted (*what's*, *what’s*, *can't*). */
const isQuestionWord = (word: string): boolean => {
  const lower = word.toLowerCase()
  const irregular = IRREGULAR_NEGATIONS.get(lower.replace("’", "'"))
  return QUESTION_WORDS.has(lower) || QUESTION_WORDS.has(irregular ?? lower.replace(CONTRACTION, ""))
}

/** A word's letters and digits without the punctuation around it ("compost?" is "compost"). */
const bareWord = (word: string): string => word.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "")

/**
 * The research connector's further tries when a query found nothing, for a query written as a
 * question or a sentence, as chat assistants write them: its words without the question's own
 * (`QUESTION_WORDS`, contracted ones too: *what's*), all required; then any one of them (`OR`), as many as fit in a query's
 * 200 characters. None for a query that uses the syntax (a phrase, `OR`, `-word`): its author
 * meant it as written. One pass over the query's words (at most 200 characters).
 */
export const relaxedSearchQueries = (query: string): ReadonlyArray<string> => {
  const words = searchQueryText(query).split(" ").filter((w) => w !== "")
  // (a dash standing alone, "blight - what causes it?", is a sentence's punctuation, not a -word)
  if (words.some((w) => w.includes('"') || /^-+[^-]/.test(w) || w.toLowerCase() === "or")) return []
  const bare = words.map(bareWord).filter((w) => w !== "")
  const kept = bare.filter((w) => !isQuestionWord(w))
  const tries: Array<string> = []
  if (kept.length > 0 && kept.length < bare.length) tries.push(kept.join(" "))
  if (kept.length > 1) {
    let any = kept[0]!
    for (const word of kept.slice(1)) {
      if (any.length + 4 + word.length > MAX_SEARCH_QUERY_CHARACTERS) break
      any = `${any} OR ${word}`
    }
    if (any !== kept[0]) tries.push(any)
  }
  return tries
}

/**
 * A web-search query read as PostgreSQL's `websearch_to_tsquery` reads it (its tokenizer,
 * `gettoken_query_websearch`, followed step by step): where an operand is awaited, each `-` negates
 * it (two undo each other), the operator characters `! & | ( ) <` are passed over, `"` opens a
 * phrase to the next `"` or the end, and anything else is a word up to white space, `"`, `:` or an
 * operator character (`OR` there is the word *or*, and `:or` a word); after an operand, `OR` is the
 * operator where `orOperatorAt` says so, operator characters are passed over, and anything else
 * starts the next operand (an implicit AND). Each `OR` operator is the string `"OR"`. A trailing `-` negates
 * nothing. One pass over the query's code points (at most 200).
 */
export const searchQueryTerms = (q: string): Array<SearchQueryTerm | "OR"> => {
  const out: Array<SearchQueryTerm | "OR"> = []
  const chars = Array.from(q)
  let operand = true
  let negations = 0
  let i = 0
  while (i < chars.length) {
    const c = chars[i]!
    if (isQuerySpace(c)) {
      i++
    } else if (!operand) {
      if (orOperatorAt(chars, i)) {
        out.push("OR")
        i += 2
        operand = true
      } else if (QUERY_OPERATOR_CHARACTERS.has(c)) i++
      else operand = true
    } else if (c === "-") {
      negations++
      i++
    } else if (QUERY_OPERATOR_CHARACTERS.has(c)) {
      i++
    } else {
      const phrase = c === '"'
      let end = i + 1
      while (end < chars.length && (phrase ? chars[end] !== '"' : !endsQueryWord(chars[end]!))) end++
      out.push({ text: chars.slice(phrase ? i + 1 : i, end).join(""), phrase, negated: negations % 2 === 1 })
      i = phrase && end < chars.length ? end + 1 : end
      negations = 0
      operand = false
    }
  }
  return out
}

/**
 * The query's positive terms (its words and phrases not negated), in web-search syntax joined by
 * `OR`: an article whose title holds any of them is a title match, which ranks above body-only
 * matches. Empty when the query has no positive term (`-roses`). Each term is written as a
 * `"phrase"`, which `websearch_to_tsquery` reads as it reads the term alone (a word holds no `"`:
 * `searchQueryTerms` ends words there), so that the word *or* stays a word in the joined query;
 * its text as `searchDatabaseQuery` writes it. Linear in the query.
 */
export const titleTermsQuery = (q: string): string =>
  searchQueryTerms(q)
    .flatMap((t) => (t === "OR" || t.negated || t.text.trim() === "" ? [] : [`"${searchPlainText(t.text)}"`]))
    .join(" OR ")

/**
 * The query as the database reads it: its terms as `searchQueryTerms` reads them, each written as a
 * `"phrase"` (read as the term alone: a word holds no `"`) of its text with every ASCII punctuation
 * character followed by a zero-width space (`searchPlainText`), as the searched text has it, so
 * that `node.js`, `co-operation` or `example.com/path` is the phrase of its words, not a token the
 * parser reads whole; `-` before a negated term, `OR` between two terms (an `OR` after the last
 * term joins nothing, as in the query as written). Linear in the query.
 */
export const searchDatabaseQuery = (q: string): string => {
  const terms = searchQueryTerms(q)
  const last = terms.findLastIndex((t) => t !== "OR")
  const parts: Array<string> = []
  terms.forEach((t, i) => {
    if (t !== "OR") parts.push(`${t.negated ? "-" : ""}"${searchPlainText(t.text)}"`)
    else if (i < last) parts.push("OR")
  })
  return parts.join(" ")
}

/** Each upper-case or title-case letter in lower case by itself, as PostgreSQL's `lower` does (`ΣΑΣ` is `σασ`, not `σας`). */
const lowerEach = (s: string): string => s.replace(/[\p{Lu}\p{Lt}]/gu, (c) => c.toLowerCase())

/**
 * The letters (in lower case) that PostgreSQL's `unaccent` rules write as other letters, where
 * decomposing them (NFKD) and removing their marks would not: `ð` is `d`, `ı` `i`, `ħ` `h`, `ŋ`
 * `n`, small capitals and letters with hooks or strokes their plain letter. Pairs of a letter and
 * what it is written as, read from `unaccent.rules`.
 */
const SPELLED: ReadonlyMap<string, string> = new Map(
  (
    "ß ss,æ ae,œ oe,ø o,đ d,ł l,þ th,ð d,ħ h,ı i,ĸ q,ŀ l,ŉ 'n,ŋ n,ŧ t,ƀ b,ɓ b,ƃ b,ƈ c,ɖ d,ɗ d,ƌ d,ɛ e,ƒ f,ɠ g,ƕ hv,ɩ i,ɨ i,ƙ k,ƚ l,ɲ n,ƞ n,ƣ oi," +
    "ƥ p,ƫ t,ƭ t,ʈ t,ʋ v,ƴ y,ƶ z,ǥ g,ȡ d,ȥ z,ȴ l,ȵ n,ȶ t,ȷ j,ȸ db,ȹ qp,ⱥ a,ȼ c,ⱦ t,ȿ s,ɀ z,ʉ u,ɇ e,ɉ j,ɍ r,ɏ y,ɕ c,ɟ j,ɡ g,ɢ g,ɦ h,ɧ h,ɪ i," +
    "ɫ l,ɬ l,ɭ l,ɱ m,ɳ n,ɴ n,ɶ oe,ɼ r,ɽ r,ɾ r,ʀ r,ʂ s,ʏ y,ʐ z,ʑ z,ʙ b,ʛ g,ʜ h,ʝ j,ʟ l,ʠ q,ʣ dz,ʥ dz,ʦ ts,ʪ ls,ʫ lz,ϒ υ,ϲ σ,ᴀ a,ᴁ ae,ᴃ b," +
    "ᴄ c,ᴅ d,ᴆ d,ᴇ e,ᴊ j,ᴋ k,ᴌ l,ᴍ m,ᴏ o,ᴘ p,ᴛ t,ᴜ u,ᴠ v,ᴡ w,ᴢ z,ᵫ ue,ᵬ b,ᵭ d,ᵮ f,ᵯ m,ᵰ n,ᵱ p,ᵲ r,ᵳ r,ᵴ s,ᵵ t,ᵶ z,ᵺ th,ᵻ i,ᵽ p,ᵾ u," +
    "ᶀ b,ᶁ d,ᶂ f,ᶃ g,ᶄ k,ᶅ l,ᶆ m,ᶇ n,ᶈ p,ᶉ r,ᶊ s,ᶌ v,ᶍ x,ᶎ z,ᶏ a,ᶑ d,ᶒ e,ᶓ e,ᶖ i,ᶙ u,ẜ s,ẝ s,ỻ ll,ỽ v,ỿ y,ⱡ l,ⱨ h,ⱪ k,ⱬ z,ⱱ v,ⱳ w," +
    "ⱴ v,ⱸ e,ⱺ o,ⱽ v,ꜰ f,ꜱ s,ꜳ aa,ꜵ ao,ꜷ au,ꜹ av,ꜻ av,ꜽ ay,ꝁ k,ꝃ k,ꝅ k,ꝇ l,ꝉ l,ꝋ o,ꝍ o,ꝏ oo,ꝑ p,ꝓ p,ꝕ p,ꝗ q,ꝙ q,ꝟ v,ꝡ vy,ꝥ th,ꝧ th," +
    "ꝱ d,ꝲ l,ꝳ m,ꝴ n,ꝵ r,ꝶ r,ꝷ t,ꝺ d,ꝼ f,ꞇ t,ꞑ n,ꞓ c,ꞡ g,ꞣ k,ꞥ n,ꞧ r,ꞩ s,ꟲ c,ꟳ f,ꟴ q,ẚ a,〇 0,ʹ ',ʻ ',ʼ ',ʽ ',ˈ ',ʺ \"\",ˆ ^,ˋ `,ː :"
  )
    .split(",")
    .map((pair) => pair.split(" ") as [string, string]),
)
const SPELLED_LETTER = new RegExp(`[${[...SPELLED.keys()].join("")}]`, "gu")

/**
 * A word as the `cs_search` configuration indexes it: lower case (each letter by itself), accents
 * removed, and the compatibility forms `unaccent` spells out (ligatures `ﬁ`, full-width and
 * mathematical letters, Roman numerals `Ⅻ`) and its other letters (`SPELLED`) written as their
 * plain letters. Linear in the word.
 */
export const foldSearchWord = (word: string): string =>
  lowerEach(
    lowerEach(word)
      .replace(SPELLED_LETTER, (c) => SPELLED.get(c)!)
      .normalize("NFKD")
      .replace(/\p{M}/gu, ""),
  )

/** The words of a text (runs of letters, digits and marks), folded; one pass. */
const foldedWords = (text: string): Array<string> => Array.from(text.matchAll(/[\p{L}\p{N}\p{M}]+/gu), (m) => foldSearchWord(m[0]))

const MARKED = new RegExp(`${SEARCH_MARK_START}([^${SEARCH_MARK_STOP}]*)${SEARCH_MARK_STOP}`, "g")

/**
 * A headline with a mark left only where the query matched. PostgreSQL's `ts_headline` marks every
 * word of the query wherever it stands, negated ones too: for `roses -tulips` it marks a *tulips*
 * of the text, which the query excludes, and for `"spring bulbs"` it also marks a *spring* far from
 * any *bulbs*. So a marked word of the query's negated terms alone (none of its positive words)
 * loses its mark, and a marked word that belongs to the query's phrases alone (none of its single
 * words) keeps its mark only inside a run of marked words, next to each other, that spells one of
 * the phrases. A marked word this cannot place (a spelling folded otherwise, or stemmed: `-tulip`
 * marks *tulips*) keeps its mark. Work: one pass over the headline's text between marks
 * (`work.read` counts its characters), then the headline's marks (at most its words) times the
 * phrases' words (at most the query's 200 characters), each step one comparison.
 */
export const matchedMarksOnly = (headline: string, query: string, work: { read: number } = { read: 0 }): string => {
  const terms = searchQueryTerms(query).flatMap((t) => (t === "OR" ? [] : [{ words: foldedWords(t.text), negated: t.negated }]))
  const positive = terms.flatMap((t) => (t.negated ? [] : [t.words]))
  const positiveWords = new Set(positive.flat())
  const excluded = new Set(terms.flatMap((t) => (t.negated ? t.words.filter((w) => !positiveWords.has(w)) : [])))
  const phrases = positive.filter((w) => w.length > 1)
  if (phrases.length === 0 && excluded.size === 0) return headline
  const single = new Set(positive.filter((w) => w.length === 1).map((w) => w[0]!))
  const inPhrases = new Set(phrases.flat())
  const marks = Array.from(headline.matchAll(MARKED), (m) => ({ start: m.index, end: m.index + m[0].length, word: foldSearchWord(m[1]!) }))
  const keep = marks.map((m) => !excluded.has(m.word) && (single.has(m.word) || !inPhrases.has(m.word)))
  // marks next to each other: nothing but spaces and punctuation between them. Read once for each
  // pair of marks, before the phrases: the text between two marks can be most of the headline
  // (ts_headline counts words, not the spaces and punctuation between them), and each phrase word
  // that reaches a pair would otherwise read it again (99 times for a 199-character query).
  const adjacentToPrevious = marks.map((m, i) => {
    if (i === 0) return false
    work.read += m.start - marks[i - 1]!.end
    return !/[\p{L}\p{N}]/u.test(headline.slice(marks[i - 1]!.end, m.start))
  })
  const adjacent = (i: number) => adjacentToPrevious[i]!
  for (let i = 0; i < marks.length; i++) {
    for (const phrase of phrases) {
      let n = 0
      while (n < phrase.length && i + n < marks.length && marks[i + n]!.word === phrase[n] && (n === 0 || adjacent(i + n))) n++
      if (n === phrase.length) for (let k = 0; k < n; k++) keep[i + k] = true
    }
  }
  if (keep.every(Boolean)) return headline
  let out = ""
  let at = 0
  marks.forEach((m, i) => {
    if (keep[i]) return
    out += headline.slice(at, m.start) + headline.slice(m.start + 1, m.end - 1)
    at = m.end
  })
  return out + headline.slice(at)
}

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&#39;"))

/**
 * At most how many characters (code points, white space as the snippet writes it) of text a snippet
 * shows before its first match. `ts_headline` chooses a fragment by words, and a fragment whose
 * words before the match are long would otherwise be cut at `SNIPPET_CHARACTERS` before it.
 */
export const SNIPPET_LEAD_CHARACTERS = 60

/**
 * At most how many code units `snippetStart` reads back from the first match, and `snippetOf`
 * forward from the snippet's start: what a snippet does not count (white space after the first of
 * a run, zero-width spaces, the marks) cannot make it read on. A headline holds every character
 * between its words (`ts_headline` counts words, not the spaces between them), up to a body's whole
 * searched text: a run of 199 000 spaces was read whole, for each hit of a page. Sixteen code units
 * for each counted character: ordinary text reaches the counted bounds first.
 */
export const SNIPPET_LEAD_UNITS = 16 * SNIPPET_LEAD_CHARACTERS
/** See `SNIPPET_LEAD_UNITS`. */
export const SNIPPET_UNITS = 16 * SNIPPET_CHARACTERS

/**
 * Where a headline's snippet starts: at the headline's start when its first match comes within
 * `SNIPPET_LEAD_CHARACTERS` characters of text, else at the first word that starts within that many
 * characters before the match (at the match itself when that word would be longer). One pass back
 * from the first mark that stops past `SNIPPET_LEAD_CHARACTERS` characters, or past
 * `SNIPPET_LEAD_UNITS` code units (then at the nearest word's start it passed, or the match).
 */
const snippetStart = (headline: string, work: { read: number }): number => {
  const mark = headline.indexOf(SEARCH_MARK_START)
  if (mark <= 0) return 0
  let at = mark
  let count = 0
  let space = false
  let wordStart = mark
  // back from the mark, white space counted once a run as the snippet writes it; past
  // SNIPPET_LEAD_UNITS code units, at the nearest word's start found (or the mark)
  while (at > 0) {
    if (mark - at >= SNIPPET_LEAD_UNITS) return wordStart
    const unit = headline.charCodeAt(at - 1)
    const width = unit >= 0xdc00 && unit <= 0xdfff && at >= 2 ? 2 : 1
    const ch = headline.slice(at - width, at)
    if (/\s/.test(ch)) {
      if (!space) {
        wordStart = at
        count++
      }
      space = true
    } else {
      space = false
      if (ch !== "\u200b" && ch !== SEARCH_MARK_STOP && ch !== SEARCH_MARK_START) count++
    }
    if (count > SNIPPET_LEAD_CHARACTERS) return wordStart
    at -= width
    work.read += width
  }
  return 0
}

/**
 * The public snippet of a headline whose matches lie between `SEARCH_MARK_START` and
 * `SEARCH_MARK_STOP`: it starts at most `SNIPPET_LEAD_CHARACTERS` characters before the first match
 * (at a word's start), runs of whitespace become one space, the text is cut after
 * `SNIPPET_CHARACTERS` characters (a mark cut short is closed), everything is HTML-escaped, and
 * each match is wrapped in `<mark>` and `</mark>`, the only markup. Two passes, reading at most
 * `SNIPPET_LEAD_UNITS` + `SNIPPET_UNITS` code units whatever the headline's length (`work.read`).
 */
export const snippetOf = (whole: string, work: { read: number } = { read: 0 }): string => {
  const headline = whole.slice(snippetStart(whole, work))
  let out = ""
  let count = 0
  let marked = false
  let pendingSpace = false
  // one pass over the headline's code points; stops once SNIPPET_CHARACTERS are written, or past
  // SNIPPET_UNITS code units read
  let previous = ""
  let read = 0
  for (const ch of headline) {
    if (read >= SNIPPET_UNITS) break
    read += ch.length
    work.read += ch.length
    // (the searched text's ASCII punctuation is followed by a zero-width space: searchPlainText)
    if (ch === "\u200b" && isSearchPunctuation(previous)) continue
    previous = ch
    if (ch === SEARCH_MARK_START || ch === SEARCH_MARK_STOP) {
      const open = ch === SEARCH_MARK_START
      if (open === marked) continue
      if (open && pendingSpace && count > 0 && count < SNIPPET_CHARACTERS) {
        out += " "
        count++
        pendingSpace = false
      }
      out += open ? "<mark>" : "</mark>"
      marked = open
      continue
    }
    if (/\s/.test(ch)) {
      pendingSpace = true
      continue
    }
    if (pendingSpace && count > 0) {
      if (count + 2 > SNIPPET_CHARACTERS) break
      out += " "
      count++
    }
    pendingSpace = false
    if (count + 1 > SNIPPET_CHARACTERS) break
    out += escapeHtml(ch)
    count++
  }
  if (marked) out += "</mark>"
  return out.replace(/<mark><\/mark>/g, "")
}

const BLOCK_END = /<\/(?:p|h[1-6]|li|blockquote|pre|figure|figcaption|table|tr|ul|ol|dl|div|section|article|aside|header|footer|dd|dt|details|summary|caption|address|main)>/gi

/**
 * The start of a block (or a rule): a list inside an item, a paragraph after a div's own text and
 * a rule between two words part what is before it from what follows, as the word count reads them
 * (`WORD_BOUNDARY_ELEMENTS`). Items and cells have rules of their own.
 */
const BLOCK_START = /<(?:p|h[1-6]|blockquote|pre|figure|figcaption|table|tr|ul|ol|dl|div|section|article|aside|header|footer|dd|dt|details|summary|caption|address|main|hr)(?:\s[^>]*)?>/gi

/** An image: it parts the words on its two sides, as the word count reads it. */
const IMAGE = /<img(?:\s[^>]*)?>/gi

/**
 * A table cell and what it holds, up to its end tag and without another cell's tag inside (a
 * cell holding a nested table reads as before): each character is read a bounded number of times.
 */
const CELL = /(<t[dh](?:\s[^>]*)?>)((?:(?!<\/?t[dh][\s>])[\s\S])*)(<\/t[dh]>)/gi

/** A block's start or end tag: inside a cell, a space, so that its row stays one line. */
const BLOCK_TAG = new RegExp(`${BLOCK_END.source}|${BLOCK_START.source}`, "gi")

/** The end of a table cell followed by the next cell of its row. */
const CELL_BETWEEN = /<\/t[dh]>\s*(?=<t[dh][\s>])/gi

/**
 * What `sourceWhiteSpace` reads: a `<pre>` tag (an opening one with the line break after it,
 * which HTML ignores), any other tag, a run of line breaks, a run of spaces and tabs.
 */
const PRE_TAG_OR_SOURCE_SPACE = /(<pre(?:\s[^>]*)?>)(?:\r\n?|\n)?|(<\/pre>)|<[^>]*>|[\r\n]+|[ \t]+/gi

/** What a `<pre>`'s spaces, tabs and line breaks are while `proseOfHtml` collapses the rest (noncharacters, as `SEARCH_MARK_START`). */
const PRE_SPACE = "\uFDD2"
const PRE_TAB = "\uFDD3"
const PRE_LINE = "\uFDD4"
const PRE_KEPT: Record<string, string> = { [PRE_SPACE]: " ", [PRE_TAB]: "\t", [PRE_LINE]: "\n" }

/**
 * A body with the line breaks of its source (`<p>\n  Pick them when\n  ripe.\n</p>`, as editors
 * and CMSes indent HTML) written as spaces, as a browser shows them, and the white space of a
 * `<pre>` (code, its indentation) kept out of the collapsing that follows (`PRE_KEPT`). One pass.
 */
const sourceWhiteSpace = (html: string): string => {
  let pre = 0
  // (a body's own noncharacters of that kind would come back as white space: they go first)
  return html.replace(/[\uFDD2-\uFDD4]/g, "").replace(PRE_TAG_OR_SOURCE_SPACE, (m, open: string | undefined, close: string | undefined) => {
    if (open !== undefined) {
      pre++
      return open
    }
    if (close !== undefined) {
      pre = Math.max(0, pre - 1)
      return close
    }
    if (m.startsWith("<")) return m
    if (pre === 0) return /[\r\n]/.test(m) ? " " : m
    return m.replace(/\r\n?|\n/g, PRE_LINE).replace(/ /g, PRE_SPACE).replace(/\t/g, PRE_TAB)
  })
}

/** A list's or an item's tag, or a link's; the attributes as the serialiser writes them. */
const LIST_OR_LINK_TAG = /<(\/?)(ol|ul|li|a)(\s[^>]*)?>/gi
const LIST_START = /\sstart="(-?\d{1,9})"/i
const LIST_REVERSED = /\sreversed(?:[\s=]|$)/i
const LINK_HREF = /\shref="(https?:\/\/[^"]*)"/i

/**
 * A list's, an item's or a link's tag (as `LIST_OR_LINK_TAG`) and the blocks the text after it
 * opens with: an item written `<li><p>…` (a loose list, as Markdown and editors write one) reads
 * after its marker, not on a line of its own. A nested list is not among them: its items have
 * markers of their own.
 */
const LIST_OR_LINK_TAG_AND_LEAD =
  /<(\/?)(ol|ul|li|a)(\s[^>]*)?>((?:\s*<(?:p|h[1-6]|blockquote|pre|figure|div|section|article|aside|header|footer|details|summary|address|main)(?:\s[^>]*)?>)*)/gi

/** The items of each `<ol>` (in the order they open), for a reversed list without a `start`. */
const orderedListItems = (html: string): Array<number> => {
  const counts: Array<number> = []
  const open: Array<number> = []
  for (const [, close, name] of html.matchAll(LIST_OR_LINK_TAG)) {
    const tag = name!.toLowerCase()
    if (tag === "ol" || tag === "ul") {
      if (close) open.pop()
      else if (tag === "ol") open.push(counts.push(0) - 1)
      else open.push(-1)
    } else if (tag === "li" && !close) {
      const at = open.at(-1)
      if (at !== undefined && at >= 0) counts[at]!++
    }
  }
  return counts
}

/**
 * List items written as a reader sees them (`- ` in a `<ul>`, `1. `, `2. ` in an `<ol>`, from its
 * `start`, counting down when `reversed`), and a link's address after its text (` (https://…)`)
 * unless the text is the address: a model reading the prose sees where the article links. Tags
 * stay for the passes that follow. One pass (two for a reversed list), the open lists a stack.
 */
const listsAndLinks = (html: string): string => {
  const reversedCounts = LIST_REVERSED.test(html) ? orderedListItems(html) : []
  const lists: Array<{ next: number; step: number } | undefined> = []
  let ordered = 0
  let link: { readonly href: string; readonly textFrom: number } | undefined
  return html.replace(LIST_OR_LINK_TAG_AND_LEAD, (m, close: string, name: string, attributes: string | undefined, lead: string, at: number) => {
    const tag = name.toLowerCase()
    if (tag === "ul" || tag === "ol") {
      if (close) lists.pop()
      else if (tag === "ul") lists.push(undefined)
      else {
        const index = ordered++
        const reversed = LIST_REVERSED.test(attributes ?? "")
        const start = LIST_START.exec(attributes ?? "")?.[1]
        lists.push({ next: start !== undefined ? Number(start) : reversed ? (reversedCounts[index] ?? 1) : 1, step: reversed ? -1 : 1 })
      }
      return m
    }
    if (tag === "li") {
      if (close) return m
      // the marker stands where the item's text starts: the blocks it opens with (their line breaks) go
      const list = lists.at(-1)
      if (list === undefined) return "- "
      const n = list.next
      list.next += list.step
      return `${n}. `
    }
    if (!close) {
      const href = LINK_HREF.exec(attributes ?? "")?.[1]
      link = href === undefined ? undefined : { href, textFrom: at + m.length }
      return m
    }
    const ended = link
    link = undefined
    if (ended === undefined) return m
    const text = html.slice(ended.textFrom, at).replace(/<[^>]*>/g, "").trim()
    // (the address's own `<` and `>` written as entities, so the tag pass leaves them; the blocks after the tag stay after it)
    return text === ended.href ? m : `${m.slice(0, m.length - lead.length)} (${ended.href.replace(/</g, "&lt;").replace(/>/g, "&gt;")})${lead}`
  })
}

/**
 * A stored body as prose for a reader (or a model): paragraphs, headings, list items and table
 * rows separated by blank lines (a block opening inside another's text too: a nested list, a rule),
 * list items after `- ` or their number (`listsAndLinks`), a link's address after its text, a row's cells by ` | ` (the blocks inside a cell spaces), `<br>` a line break (the source's own line breaks a space, but a `<pre>` keeps its lines and indentation), an image a space, other tags dropped, the serialiser's entities decoded, runs of spaces collapsed. Stored
 * bodies are serialised by the core, so their tags are exactly `<[^>]*>`. A handful of linear
 * passes, no parse: cheap enough for a 1 MiB body.
 */
export const proseOfHtml = (html: string): string =>
  listsAndLinks(sourceWhiteSpace(html))
    .replace(CELL, (_, open: string, inside: string, close: string) => `${open}${inside.replace(BLOCK_TAG, " ")}${close}`)
    .replace(CELL_BETWEEN, " | ")
    .replace(BLOCK_END, "\n\n")
    .replace(BLOCK_START, "\n\n")
    .replace(IMAGE, " ")
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<[^>]*>/g, "")
    .replace(ENTITY, (_, name: string) => DECODED[name]!)
    .replace(/[ \t\u00a0]+/g, " ")
    .replace(/ *\n */g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim()
    .replace(/[\uFDD2-\uFDD4]/g, (c) => PRE_KEPT[c]!)
