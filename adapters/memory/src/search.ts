/**
 * Full-text search in memory, with the database's semantics where tests can tell them apart:
 * `websearch_to_tsquery` syntax (groups joined by `OR`, each all of its terms, `"phrases"`,
 * `-negations`; `&` binds tighter than `|`, as in PostgreSQL), words folded as the `cs_search`
 * configuration folds them (lower case, accents removed), a title that holds any of the query's
 * positive terms first, and headlines with every word of the query marked. Ranking within a tier is a weighted count, not
 * `ts_rank`'s formula; tokens are runs of letters and digits as PostgreSQL's parser reads them (not
 * superscripts, subscripts, fractions or circled digits: `x²` is `x`) in the searched text, whose
 * ASCII punctuation is followed by a zero-width space (`searchPlainText`), so that PostgreSQL too
 * reads only words, not hosts, paths, versions or hyphenated words whole.
 */
import { foldSearchWord, HEADLINE_HTML_CHARACTERS, headlineWindow, SEARCH_MARK_START, SEARCH_MARK_STOP, searchPlainText, searchQueryTerms, searchTextOfHtml, type ArticleRecord } from "@content-site/core"

interface Token {
  readonly word: string
  readonly start: number
  readonly end: number
}

/** A term: one word or a phrase (words in a row), possibly negated. */
interface Term {
  readonly words: ReadonlyArray<string>
  readonly negated: boolean
}

/** Groups joined by OR; each group needs all of its terms. */
export type ParsedQuery = ReadonlyArray<ReadonlyArray<Term>>

const WORD = /[\p{Alphabetic}\p{Nd}\p{M}]+/gu

/** The words of a text with their places; one pass (the text is bounded by its caller). */
export const tokenize = (text: string): Array<Token> => {
  const out: Array<Token> = []
  for (const m of text.matchAll(WORD)) out.push({ word: foldSearchWord(m[0]), start: m.index, end: m.index + m[0].length })
  return out
}

/**
 * Parses web-search syntax as `websearch_to_tsquery` reads it (the core's `searchQueryTerms`): a
 * word that holds several words, such as `tomato-blight`, is a phrase of them. One pass over the
 * query (at most 200 characters).
 */
export const parseQuery = (q: string): ParsedQuery => {
  const groups: Array<Array<Term>> = [[]]
  for (const term of searchQueryTerms(q)) {
    if (term === "OR") {
      if (groups[groups.length - 1]!.length > 0) groups.push([])
      continue
    }
    // (its text as the searched text writes it: searchPlainText)
    const words = tokenize(searchPlainText(term.text)).map((t) => t.word)
    if (words.length > 0) groups[groups.length - 1]!.push({ words, negated: term.negated })
  }
  return groups.filter((g) => g.length > 0)
}

/** How many times a term occurs in a field's words (a phrase: its words in a row). */
const occurrences = (tokens: ReadonlyArray<Token>, words: ReadonlyArray<string>): Array<number> => {
  const at: Array<number> = []
  // at most tokens × phrase length comparisons
  for (let i = 0; i + words.length <= tokens.length; i++) {
    let j = 0
    while (j < words.length && tokens[i + j]!.word === words[j]) j++
    if (j === words.length) at.push(i)
  }
  return at
}

const groupMatches = (fields: ReadonlyArray<ReadonlyArray<Token>>, group: ReadonlyArray<Term>): boolean =>
  group.every((term) => fields.some((tokens) => occurrences(tokens, term.words).length > 0) !== term.negated)

const queryMatches = (fields: ReadonlyArray<ReadonlyArray<Token>>, query: ParsedQuery): boolean =>
  query.some((group) => groupMatches(fields, group))

/** What search needs of an article: whether it matches, its tier and score, and its headline. */
export interface Scored {
  readonly article: ArticleRecord
  readonly titleMatch: boolean
  readonly score: number
  readonly headline: string
  readonly titleHeadline: string
  readonly keywordHeadline: string
}

/** Scores one article against a parsed query, or undefined when it does not match. Linear in its searched text. */
export const scoreArticle = (article: ArticleRecord, query: ParsedQuery, headlines: boolean): Scored | undefined => {
  if (query.length === 0) return undefined
  const bodyText = searchTextOfHtml(article.body)
  const title = tokenize(searchPlainText(article.title))
  const keyword = tokenize(searchPlainText(article.target_keyword))
  const body = tokenize(bodyText)
  if (!queryMatches([title, keyword, body], query)) return undefined
  const positive = query.flatMap((g) => g.filter((t) => !t.negated))
  let score = 0
  for (const term of positive) {
    score += occurrences(title, term.words).length * 1.0 + occurrences(keyword, term.words).length * 0.4 + occurrences(body, term.words).length * 0.1
  }
  // a title match: a title that holds any of the query's positive terms
  const titleMatch = positive.some((term) => occurrences(title, term.words).length > 0)
  if (!headlines) return { article, titleMatch, score, headline: "", titleHeadline: "", keywordHeadline: "" }
  // every word of the query marked, negated ones too, as ts_headline's HighlightAll marks them (the core's matchedMarksOnly keeps the matches)
  const words = new Set(query.flatMap((g) => g.flatMap((t) => t.words)))
  return {
    article,
    titleMatch,
    score,
    // the body's headline marks its first HEADLINE_HTML_CHARACTERS characters only, as the database adapter does
    headline: headlineWindow(bodyHeadline(article.body, bodyText, body, words)),
    titleHeadline: markedText(withoutMarks(searchPlainText(article.title)), title, words),
    keywordHeadline: markedText(withoutMarks(searchPlainText(article.target_keyword)), keyword, words),
  }
}

/**
 * The body's searched text within its first `HEADLINE_HTML_CHARACTERS` characters, every word of
 * `words` marked: the text already tokenised when the body is no longer, else that prefix's (at most
 * `HEADLINE_HTML_CHARACTERS` characters read). Counted in `headlineWork.characters`.
 */
const bodyHeadline = (html: string, text: string, tokens: ReadonlyArray<Token>, words: ReadonlySet<string>): string => {
  if (html.length <= HEADLINE_HTML_CHARACTERS) {
    headlineWork.characters += text.length
    return markedText(text, tokens, words)
  }
  const prefix = searchTextOfHtml(html, HEADLINE_HTML_CHARACTERS)
  headlineWork.characters += prefix.length
  return markedText(prefix, tokenize(prefix), words)
}

/** Characters of searched text marked for body headlines, for tests that count the work. */
export const headlineWork = { characters: 0 }

/** A title's or keyword's own mark characters as spaces (one for one), so that they forge no mark (a body's: `searchTextOfHtml`). */
const withoutMarks = (text: string): string => text.replace(/[\uFDD0\uFDD1]/g, " ")

/** A text with each of its words that is one of `words` between the marks; one pass. */
const markedText = (text: string, tokens: ReadonlyArray<Token>, words: ReadonlySet<string>): string => {
  let out = ""
  let at = 0
  for (const t of tokens) {
    if (!words.has(t.word)) continue
    out += `${text.slice(at, t.start)}${SEARCH_MARK_START}${text.slice(t.start, t.end)}${SEARCH_MARK_STOP}`
    at = t.end
  }
  return out + text.slice(at)
}
