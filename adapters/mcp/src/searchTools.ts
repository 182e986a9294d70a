/**
 * The tools that find articles: `search_articles` (the REST search), and `search` and `fetch`
 * exactly as chat assistants' research and company-knowledge connectors expect them (OpenAI's
 * "Building MCP servers for ChatGPT": `search` takes one string `query`, `fetch` one string `id`;
 * each answers one text content item holding its JSON, and the same object as `structuredContent`).
 */
import {
  Id,
  type ResearchDocument,
  ResearchDocument as ResearchDocumentSchema,
  type ResearchResults,
  ResearchResults as ResearchResultsSchema,
  researchFetch,
  researchSearch,
  SearchArticlesQuery,
  searchArticles,
  SearchPage,
  SearchText,
} from "@content-site/core"
import type { ContentBlock, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"
import { Schema } from "effect"
import type { ToolSpec } from "./tools.ts"

const READ: ToolAnnotations = { readOnlyHint: true, openWorldHint: false }

/** The URI of an article as an MCP resource (see `resources.ts`). */
export const articleUri = (id: string): string => `content-site://articles/${id}`

/** A `resource_link` content item for an article, so a client can attach or read it. */
export const articleLink = (a: { readonly id: string; readonly title: string }): ContentBlock => ({
  type: "resource_link",
  uri: articleUri(a.id),
  name: a.id,
  title: a.title,
  mimeType: "text/html",
})

/** The closing line of a page of a list's text; a page past the end says so, not "page 9 of 1". */
export const pageLine = (p: { page: number; per_page: number; total: number; total_pages: number }) =>
  p.page > Math.max(1, p.total_pages)
    ? `Page ${p.page} is past the last page, ${Math.max(1, p.total_pages)} (${p.total} in total, ${p.per_page} per page).`
    : `Page ${p.page} of ${Math.max(1, p.total_pages)} (${p.total} in total, ${p.per_page} per page).`

/** The text item and one resource_link per article of a page of articles (list_articles, search_articles). */
export const withArticleLinks =
  <R extends { readonly data: ReadonlyArray<{ readonly id: string; readonly title: string }> }>(render: (r: R) => string) =>
  (r: R): Array<ContentBlock> => [{ type: "text", text: render(r) }, ...r.data.map(articleLink)]

const SearchArticlesArgs = Schema.toType(SearchArticlesQuery)
const ResearchSearchArgs = Schema.toType(Schema.Struct({ query: SearchText }))
const ResearchFetchArgs = Schema.toType(Schema.Struct({ id: Id.annotate({ description: "An id from search's results." }) }))

const renderSearch = (r: typeof SearchPage.Type) =>
  [
    ...r.data.map(
      (a) =>
        `- ${a.title} [id ${a.id}, site ${a.site_id}, ${a.status}${a.published_at ? `, published ${a.published_at}` : ""}] ${a.url}\n  ${a.snippet}`,
    ),
    pageLine(r.pagination),
  ].join("\n")

/** The tools of `searchTools`, appended to the tool table. */
export const searchTools: ReadonlyArray<ToolSpec> = [
  {
    name: "search_articles",
    title: "Search articles",
    description: [
      "Find articles by their words across all the account's websites (or one, with site_id): full-text search over titles, target keywords and body text, best match first, each with a snippet where matches are between <mark> and </mark>.",
      'q is web-search syntax: words (all must match), "a phrase", OR, -word; case and accents are ignored. Filter with status and from/to (publication date, inclusive).',
      "Use it to find the article a person means (\"my article about tomato blight\"), then get_article with its id. Results also come as resource links (content-site://articles/ and the id).",
      // the tokens are the configured limits, put in by toolDefinitionsFor (tools.ts)
      "Limits: {requests_per_minute} requests per minute per account (shared with the REST API), page size per_page 1 to {max_per_page} (default 20, or {max_per_page} if lower), q at most two hundred characters.",
    ].join(" "),
    annotations: READ,
    input: SearchArticlesArgs,
    output: SearchPage,
    target: (a: { site_id?: string }) => ({ siteId: a.site_id ?? null }),
    run: (caller, args: typeof SearchArticlesArgs.Type) => searchArticles(caller, args),
    render: renderSearch,
    content: withArticleLinks(renderSearch),
  },
  {
    name: "search",
    title: "Search (research connector)",
    description: [
      "Search the connected account's articles for research: full-text over titles, target keywords and body text, best match first, at most {research_results} results.",
      'query is web-search syntax (words all required, "a phrase", OR, -word), at most two hundred characters; a question in plain words that finds nothing as written is searched again by its own words, all of them, then any. Returns {"results":[{"id","title","url"}]}; read a result with fetch(id).',
      "Limits: {requests_per_minute} requests per minute per account (shared with the REST API).",
    ].join(" "),
    annotations: READ,
    input: ResearchSearchArgs,
    output: ResearchResultsSchema,
    target: () => ({}),
    run: (caller, args: typeof ResearchSearchArgs.Type) => researchSearch(caller, args.query),
    render: (r: ResearchResults) => JSON.stringify(r),
    content: (r: ResearchResults) => [{ type: "text", text: JSON.stringify(r) }],
  },
  {
    name: "fetch",
    title: "Fetch an article (research connector)",
    description: [
      "Fetch one article found with search, by its id: its title, its body as plain prose (text), its public url for citations, and metadata (site_id, status, published_at, updated_at, target keyword, word count, revision).",
      "To edit it, use get_article (the HTML with its protected links) and edit_article.",
      "Limits: {requests_per_minute} requests per minute per account (shared with the REST API).",
    ].join(" "),
    annotations: READ,
    input: ResearchFetchArgs,
    output: ResearchDocumentSchema,
    target: (a: { id: string }) => ({ articleId: a.id }),
    run: (caller, args: typeof ResearchFetchArgs.Type) => researchFetch(caller, args.id),
    render: (d: ResearchDocument) => JSON.stringify(d),
    content: (d: ResearchDocument) => [{ type: "text", text: JSON.stringify(d) }],
  },
]
