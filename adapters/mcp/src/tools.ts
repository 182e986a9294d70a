import {
  ArticlePage,
  Article,
  BacklinkPage,
  type Caller,
  FeaturedImageResult,
  getArticle,
  getStats,
  type ImageSource,
  Id,
  InvalidRequest,
  ListArticlesQuery,
  ListBacklinksQuery,
  ListSitesQuery,
  listArticles,
  listBacklinks,
  listSites,
  PeriodSummary,
  ReplaceFeaturedImageArgs,
  replaceFeaturedImage,
  StatsQuery,
  UpdateArticleArgs,
  UpdateArticleResult,
  updateArticle,
  WebsitePage,
} from "@content-site/core"
import { Effect, Schema } from "effect"
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"

/** A JSON Schema object as MCP tool definitions carry it. */
export type JsonSchemaObject = { readonly type: "object"; readonly [key: string]: unknown }

/** What a tool run reports besides its JSON: the ids it touched, for the activity entry. */
export interface ToolTarget {
  readonly siteId?: string | null
  readonly articleId?: string | null
}

/** One MCP tool: its public definition, the core schema its arguments decode with, and its run. */
export interface ToolSpec {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly annotations: ToolAnnotations
  /** Decodes the arguments (typed view of the REST schemas: numbers are numbers). */
  readonly input: Schema.Codec<any, any, never, never>
  /** The schema of `structuredContent`: the REST response schema of the same call. */
  readonly output: Schema.Top
  readonly target: (args: any) => ToolTarget
  readonly run: (caller: Caller, args: any) => Effect.Effect<unknown, any, any>
  readonly render: (result: any) => string
  /** A write whose answer shows a committed change: its activity entry is already in the log. */
  readonly committed?: (result: any) => boolean
}

const READ: ToolAnnotations = { readOnlyHint: true, openWorldHint: false }

const LIMITS =
  "Limits: 60 requests per minute per account (shared with the REST API), page size per_page 1 to 100 (default 20)."

// The tool inputs are the REST query schemas in their decoded (typed) form plus the path ids.
const ListSitesArgs = Schema.toType(ListSitesQuery)
const ListArticlesArgs = Schema.toType(Schema.Struct({ site_id: Id, ...ListArticlesQuery.fields }))
const GetArticleArgs = Schema.toType(Schema.Struct({ article_id: Id }))
const ListBacklinksArgs = Schema.toType(Schema.Struct({ site_id: Id, ...ListBacklinksQuery.fields }))
const GetStatsArgs = Schema.toType(Schema.Struct({ site_id: Id, ...StatsQuery.fields }))

const pageLine = (p: { page: number; per_page: number; total: number; total_pages: number }) =>
  `Page ${p.page} of ${Math.max(1, p.total_pages)} (${p.total} in total, ${p.per_page} per page).`

const articleLine = (a: { id: string; title: string; status: string; published_at: string | null; "word count": number; url: string }) =>
  `- ${a.title} [id ${a.id}, ${a.status}${a.published_at ? `, published ${a.published_at}` : ""}, ${a["word count"]} words] ${a.url}`

const backlinkLine = (b: { id: string; date_acquired: string; source_url: string; target_url: string; anchor_text: string; category: string }) =>
  `- ${b.date_acquired} ${b.category}: ${b.source_url} -> ${b.target_url} ("${b.anchor_text}") [id ${b.id}]`

const byteSource = (args: { url?: string; image_base64?: string }): Effect.Effect<ImageSource, InvalidRequest> => {
  if (args.url !== undefined) return Effect.succeed({ kind: "url", url: args.url })
  const text = (args.image_base64 ?? "").replace(/\s+/g, "")
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) {
    return Effect.fail(
      new InvalidRequest({
        detail: "Arguments of replace_featured_image: image_base64 is not valid base64.",
        errors: [{ path: "image_base64", message: "Expected standard base64" }],
      }),
    )
  }
  return Effect.succeed({ kind: "bytes", bytes: new Uint8Array(Buffer.from(text, "base64")) })
}

/** The seven tools of the contract, in the order clients list them. */
export const tools: ReadonlyArray<ToolSpec> = [
  {
    name: "list_sites",
    title: "List websites",
    description: [
      "List the websites on the connected account, sorted by name, with how many articles and backlinks each has.",
      "Use it first: every other tool needs a site_id or an article_id, and ids are opaque strings (for example 'site_1') that only this tool and the list tools reveal.",
      LIMITS,
    ].join(" "),
    annotations: READ,
    input: ListSitesArgs,
    output: WebsitePage,
    target: () => ({}),
    run: (caller, args) => listSites(caller, args),
    render: (r: typeof WebsitePage.Type) =>
      [
        ...r.data.map((s) => `- ${s.name} (${s.url}) [site_id ${s.id}]: ${s.article_count} articles, ${s.backlink_count} backlinks`),
        pageLine(r.pagination),
      ].join("\n"),
  },
  {
    name: "list_articles",
    title: "List a website's articles",
    description: [
      "List the articles of one website, newest published first, without their bodies (use get_article for the HTML).",
      "Filter with from/to (YYYY-MM-DD or an RFC 3339 date-time, both inclusive; a bare `to` date means the end of that UTC day) on the publication date, and with status (draft, scheduled, published, archived).",
      "site_id comes from list_sites. A site of another account is not_found.",
      LIMITS,
    ].join(" "),
    annotations: READ,
    input: ListArticlesArgs,
    output: ArticlePage,
    target: (a: { site_id: string }) => ({ siteId: a.site_id }),
    run: (caller, { site_id, ...query }) => listArticles(caller, site_id, query),
    render: (r: typeof ArticlePage.Type) => [...r.data.map(articleLine), pageLine(r.pagination)].join("\n"),
  },
  {
    name: "get_article",
    title: "Get one article",
    description: [
      "Get one article with its full HTML body and its current revision number.",
      "Read it before update_article: pass that revision as if_revision to make sure nobody changed the article in between.",
      "Links carrying the attribute data-service-protected are purchased backlinks or internal links: an edit must keep each of them exactly as it is (it may move within the body).",
      "article_id comes from list_articles or get_stats. An article of another account is not_found.",
      LIMITS,
    ].join(" "),
    annotations: READ,
    input: GetArticleArgs,
    output: Article,
    target: (a: { article_id: string }) => ({ articleId: a.article_id }),
    run: (caller, args) => getArticle(caller, args.article_id),
    render: (a: typeof Article.Type) =>
      [
        `${a.title}`,
        `id ${a.id}, site ${a.site_id}, revision ${a.revision}, ${a.status}${a.published_at ? `, published ${a.published_at}` : ""}, ${a["word count"]} words`,
        `url ${a.url}; target keyword: ${a["target keyword"] || "(none)"}; featured image: ${a["featured image"] ? a["featured image"].url : "(none)"}`,
        "",
        a.body,
      ].join("\n"),
  },
  {
    name: "list_backlinks",
    title: "List a website's backlinks",
    description: [
      "List the backlinks acquired for one website, newest first: source domain and URL, target URL, anchor text and type, category (industry or local).",
      "Filter with from/to (YYYY-MM-DD or an RFC 3339 date-time, both inclusive) on the acquisition date. site_id comes from list_sites.",
      LIMITS,
    ].join(" "),
    annotations: READ,
    input: ListBacklinksArgs,
    output: BacklinkPage,
    target: (a: { site_id: string }) => ({ siteId: a.site_id }),
    run: (caller, { site_id, ...query }) => listBacklinks(caller, site_id, query),
    render: (r: typeof BacklinkPage.Type) => [...r.data.map(backlinkLine), pageLine(r.pagination)].join("\n"),
  },
  {
    name: "get_stats",
    title: "Summarise a period",
    description: [
      "Summarise one website over a period, for a monthly report: the published articles (count, total words, the list) and the backlinks acquired (count, industry, local, the list).",
      "period is this_month (default), last_month, last_30_days (today and the 29 days before) or a UTC month YYYY-MM. site_id comes from list_sites.",
      "Limits: 60 requests per minute per account (shared with the REST API).",
    ].join(" "),
    annotations: READ,
    input: GetStatsArgs,
    output: PeriodSummary,
    target: (a: { site_id: string }) => ({ siteId: a.site_id }),
    run: (caller, { site_id, ...query }) => getStats(caller, site_id, query),
    render: (r: typeof PeriodSummary.Type) =>
      [
        `Site ${r.site_id}, ${r.period.key}: ${r.period.from} to ${r.period.to}.`,
        `${r.articles.count} published articles, ${r.articles["word count"]} words:`,
        ...r.articles.items.map(articleLine),
        `${r.backlinks.count} backlinks (${r.backlinks.industry} industry, ${r.backlinks.local} local):`,
        ...r.backlinks.items.map(backlinkLine),
      ].join("\n"),
  },
  {
    name: "update_article",
    title: "Edit an article's title or body",
    description: [
      "Change an article's title and/or its full HTML body (give at least one; the url, status, keyword and backlinks cannot be changed here), with an optional reason kept on the revision.",
      "The body is sanitised like the editor does (scripts, iframes, event handlers, javascript: URLs are removed; the result says what was removed).",
      "Every element carrying data-service-protected in the current body must stay exactly as it is (moving it is allowed); removing, changing or adding one is refused with protected_link_changed, listing the blocks.",
      "Use dry_run: true to check an edit without writing anything. Pass if_revision (the revision from get_article) to refuse the edit with precondition_failed if the article changed since; then get_article again and re-apply.",
      "Each real change is a new revision; an edit identical to the current article writes nothing (revision null).",
      "Limits: 200 article changes per UTC day per account (daily_edit_limit) and 60 requests per minute, both shared with the REST API; the body may be at most 1 MiB, the title 1 to 300 characters.",
    ].join(" "),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    input: UpdateArticleArgs,
    output: UpdateArticleResult,
    target: (a: { article_id: string }) => ({ articleId: a.article_id }),
    run: (caller, { article_id, dry_run, if_revision, ...body }) =>
      Effect.map(
        updateArticle(caller, article_id, body, { dryRun: dry_run === true, expectedRevision: if_revision }),
        (outcome) => outcome.result,
      ),
    committed: (r: typeof UpdateArticleResult.Type) => r.revision !== null,
    render: (r: typeof UpdateArticleResult.Type) =>
      [
        r.dry_run === true
          ? "Dry run: nothing was written; the edit passes every check (protected links intact) and would apply as shown."
          : r.revision === null
            ? "Nothing changed: the edit is identical to the current article."
            : `Saved as revision ${r.revision.number}.`,
        `Article ${r.article.id} "${r.article.title}" is at revision ${r.article.revision}, ${r.article["word count"]} words.`,
        r.sanitized.changed
          ? `The sanitiser removed: ${r.sanitized.removed.map((x) => `${x.what} x${x.count}`).join(", ")}.`
          : "The sanitiser removed nothing.",
      ].join("\n"),
  },
  {
    name: "replace_featured_image",
    title: "Replace an article's featured image",
    description: [
      "Replace an article's featured image, from an https URL on a public host (url) or from the bytes themselves (image_base64 with mime_type); alt sets the alternative text (kept from the old image when omitted).",
      "Accepted: JPEG, PNG, WebP, GIF, AVIF, judged by decoding, at most 10 MiB and 8000 px a side; never SVG (unsupported_image, payload_too_large).",
      "URLs must be https and resolve to public addresses (unsafe_url); fetch failures are image_fetch_failed.",
      "The image is stored by the service and the change is a new revision. Limits: 200 article changes per UTC day and 60 requests per minute per account, shared with the REST API.",
    ].join(" "),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    input: ReplaceFeaturedImageArgs,
    output: FeaturedImageResult,
    target: (a: { article_id: string }) => ({ articleId: a.article_id }),
    run: (caller, args: typeof ReplaceFeaturedImageArgs.Type) =>
      Effect.flatMap(byteSource(args), (source) =>
        Effect.map(replaceFeaturedImage(caller, args.article_id, source, args.alt), (outcome) => outcome.result),
      ),
    committed: (r: typeof FeaturedImageResult.Type) => r.revision !== null,
    render: (r: typeof FeaturedImageResult.Type) =>
      [
        r.revision === null ? "Nothing changed." : `Saved as revision ${r.revision.number}.`,
        `Article ${r.article.id} "${r.article.title}" now has the featured image ${r.article["featured image"]?.url ?? "(none)"} (alt: ${r.article["featured image"]?.alt ?? ""}).`,
      ].join("\n"),
  },
]

const jsonSchemaOf = (schema: Schema.Top, closed: boolean): JsonSchemaObject => {
  const document = Schema.toJsonSchemaDocument(schema)
  const definitions = document.definitions as Record<string, unknown>
  const root = { ...(document.schema as Record<string, unknown>) }
  if (Object.keys(definitions).length > 0) root["$defs"] = definitions
  // Tool arguments are decoded refusing unknown keys; the schema says so too.
  if (closed) root["additionalProperties"] = false
  return { ...root, type: "object" }
}

/** The MCP tool list: JSON Schemas generated once from the core's Effect schemas. */
export const toolDefinitions = tools.map((tool) => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: jsonSchemaOf(tool.input, true),
  outputSchema: jsonSchemaOf(tool.output, false),
  annotations: { title: tool.title, ...tool.annotations },
}))

/** A tool by name. */
export const toolNamed = (name: string): ToolSpec | undefined => tools.find((t) => t.name === name)
