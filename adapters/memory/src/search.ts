/**
 * Full-text search in memory, with the database's semantics where tests can tell them apart:
 * `websearch_to_tsquery` syntax (groups joined by `OR`, each all of its terms, `"phrases"`,
 * `-negations`; `&` binds tighter than `|`, as in PostgreSQL), words folded as the `cs_search`
 * configuration folds them (lower case, accents removed), a title that holds any of the query's
 * positive terms first, and a headline around the first match. Ranking within a tier is a weighted count, not
 * `ts_rank`'s formula; tokens are runs of letters and digits as PostgreSQL's parser reads them (not
 * superscripts, subscripts, fractions or circled digits: `x²` is `x`) in the searched text, whose
 * ASCII punctuation is followed by a zero-width space (`searchPlainText`), so that PostgreSQL too
 * reads only words, not hosts, paths, versions or hyphenated words whole.
 */
import { foldSearchWord, SEARCH_MARK_START, SEARCH_MARK_STOP, searchPlainText, searchQueryTerms, searchTextOfHtml, type ArticleRecord } from "@content-site/core"

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
}

const HEADLINE_WORDS = 35
const HEADLINE_LEAD = 5

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
  return { article, titleMatch, score, headline: headlines ? headlineOf(bodyText, body, positive) : "" }
}

/** A window of the body's words around the first match, matched words between the marks. */
const headlineOf = (text: string, tokens: ReadonlyArray<Token>, terms: ReadonlyArray<Term>): string => {
  const marked = new Set<number>()
  for (const term of terms) for (const i of occurrences(tokens, term.words)) for (let k = 0; k < term.words.length; k++) marked.add(i + k)
  const first = marked.size === 0 ? 0 : Math.min(...marked)
  const from = Math.max(0, first - HEADLINE_LEAD)
  const to = Math.min(tokens.length, from + HEADLINE_WORDS)
  if (from >= to) return ""
  let out = ""
  let at = tokens[from]!.start
  for (let i = from; i < to; i++) {
    const t = tokens[i]!
    out += text.slice(at, t.start)
    out += marked.has(i) ? `${SEARCH_MARK_START}${text.slice(t.start, t.end)}${SEARCH_MARK_STOP}` : text.slice(t.start, t.end)
    at = t.end
  }
  // the punctuation after the last word, up to the next word, as ts_headline keeps it
  return out + text.slice(at, tokens[to]?.start ?? text.length)
}
